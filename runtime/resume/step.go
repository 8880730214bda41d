package resume

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
)

// StepInfo describes the step whose code is running.
type StepInfo struct {
	RunID    string
	Workflow string
	StepKey  string // Name, Name#2, ... for repeated executions in one run
	Name     string
	Policy   Policy
	// Attempt counts this step's executions, across resumes, from 1.
	Attempt int
	// Version is the version of the workflow the run executes under.
	Version string
	// OriginKey is the step key the idempotency key (and a child run's
	// id) derives from: the key the step had when the run could first
	// execute it, which differs from StepKey only for a step renamed
	// (renamed-from=) by a move of the run since (see journal.OriginKey).
	// "" means StepKey.
	OriginKey string
}

// IdempotencyKey returns the step's idempotency key: "rg-" followed by 32
// lowercase hex digits (a truncated SHA-256 of the run id and the step's
// origin key, see [StepInfo.OriginKey]). It is the same for every attempt
// and every resume of the step, and across every rename a move of the run
// accepts (renamed-from=), journaled or not; 35 ASCII characters long, and
// safe for providers that limit keys to 64 characters of [A-Za-z0-9_-]
// (Stripe, Adyen, PayPal and most email APIs).
func (s StepInfo) IdempotencyKey() string {
	return idempotencyKey(s.RunID, s.originKey())
}

// originKey is OriginKey, or StepKey when it is not set.
func (s StepInfo) originKey() string {
	if s.OriginKey != "" {
		return s.OriginKey
	}
	return s.StepKey
}

func idempotencyKey(runID, stepKey string) string {
	h := sha256.New()
	h.Write([]byte(runID))
	h.Write([]byte{0})
	h.Write([]byte(stepKey))
	return "rg-" + hex.EncodeToString(h.Sum(nil)[:16])
}

type stepInfoKey struct{}

// StepFromContext returns the step running in ctx; ok is false outside a
// step of a run (for instance when the step function is called directly).
func StepFromContext(ctx context.Context) (info StepInfo, ok bool) {
	info, ok = ctx.Value(stepInfoKey{}).(StepInfo)
	return info, ok
}

// IdempotencyKey returns the idempotency key of the step running in ctx (see
// [StepInfo.IdempotencyKey]), or "" outside a run.
func IdempotencyKey(ctx context.Context) string {
	if info, ok := StepFromContext(ctx); ok {
		return info.IdempotencyKey()
	}
	return ""
}

type txKey struct{}

// Tx returns the transaction of the tx step running in ctx, as a Q, or
// fallback when ctx is not inside a tx step. Q is whatever the step's code
// needs of a database handle, so the same code runs with or without a
// workflow:
//
//	// SQLite or any database/sql driver: *sql.DB and *sql.Tx both fit.
//	type execer interface {
//		ExecContext(context.Context, string, ...any) (sql.Result, error)
//	}
//	//resume:step tx
//	func WriteScores(ctx context.Context, db *sql.DB, s []Score) error {
//		q := resume.Tx[execer](ctx, db)
//		...
//	}
//
// With PostgreSQL the transaction is a pgx.Tx and Q an interface that
// *pgxpool.Pool and pgx.Tx both satisfy. Tx panics when the step's
// transaction does not implement Q: that is a programming error that would
// otherwise silently write outside the step's transaction.
func Tx[Q any](ctx context.Context, fallback Q) Q {
	h := ctx.Value(txKey{})
	if h == nil {
		return fallback
	}
	q, ok := h.(Q)
	if !ok {
		var want *Q
		panic(fmt.Sprintf("resume.Tx: the step's transaction is a %T, which does not implement %T", h, want))
	}
	return q
}

// InTx reports whether ctx is inside a tx step.
func InTx(ctx context.Context) bool { return ctx.Value(txKey{}) != nil }
