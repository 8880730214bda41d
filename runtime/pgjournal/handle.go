package pgjournal

import (
	"context"
	"errors"
	"sync/atomic"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// errStepOwnsTx is what a tx step's code gets for ending the step's
// transaction itself: the journal commits it together with the step's row.
var errStepOwnsTx = errors.New("pgjournal: a tx step's transaction commits with its journal row: " +
	"return nil from the step to commit, or an error to roll back")

// stepHandle is the pgx.Tx a tx step's code reaches through [resume.Tx].
// It is the step's transaction with two differences:
//
//   - Commit and Rollback return an error: committing the step's writes
//     without its journal row would break exactly once. Begin (a savepoint)
//     works as usual.
//   - Once the step has returned, every method that reaches the server
//     fails with pgx.ErrTxClosed, instead of reaching a connection that
//     went back to the pool. LargeObjects and Conn are the transaction's,
//     valid only while the step runs.
//
// It embeds the pgx.Tx rather than forwarding each method by hand, so a
// method a newer pgx adds to the interface is the transaction's own and the
// package keeps compiling against every pgx v5 (v5.12 added one to
// pgx.BatchResults, which broke hand-written implementations).
type stepHandle struct {
	pgx.Tx
	tx     pgx.Tx // the same transaction, for the guarded methods
	closed atomic.Bool
}

var _ pgx.Tx = (*stepHandle)(nil)

func (h *stepHandle) close() { h.closed.Store(true) }

// Begin starts a pseudo nested transaction (a savepoint).
func (h *stepHandle) Begin(ctx context.Context) (pgx.Tx, error) {
	if h.closed.Load() {
		return nil, pgx.ErrTxClosed
	}
	return h.tx.Begin(ctx)
}

// Commit refuses: the journal commits the step's transaction.
func (h *stepHandle) Commit(context.Context) error {
	if h.closed.Load() {
		return pgx.ErrTxClosed
	}
	return errStepOwnsTx
}

// Rollback refuses: a step rolls back by returning an error.
func (h *stepHandle) Rollback(context.Context) error {
	if h.closed.Load() {
		return pgx.ErrTxClosed
	}
	return errStepOwnsTx
}

// CopyFrom is pgx.Tx's CopyFrom.
func (h *stepHandle) CopyFrom(ctx context.Context, table pgx.Identifier, columns []string, src pgx.CopyFromSource) (int64, error) {
	if h.closed.Load() {
		return 0, pgx.ErrTxClosed
	}
	return h.tx.CopyFrom(ctx, table, columns, src)
}

// SendBatch is pgx.Tx's SendBatch.
func (h *stepHandle) SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults {
	if h.closed.Load() {
		return closedBatch{}
	}
	return h.tx.SendBatch(ctx, b)
}

// Prepare is pgx.Tx's Prepare.
func (h *stepHandle) Prepare(ctx context.Context, name, sql string) (*pgconn.StatementDescription, error) {
	if h.closed.Load() {
		return nil, pgx.ErrTxClosed
	}
	return h.tx.Prepare(ctx, name, sql)
}

// Exec is pgx.Tx's Exec.
func (h *stepHandle) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	if h.closed.Load() {
		return pgconn.CommandTag{}, pgx.ErrTxClosed
	}
	return h.tx.Exec(ctx, sql, args...)
}

// Query is pgx.Tx's Query.
func (h *stepHandle) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	if h.closed.Load() {
		return nil, pgx.ErrTxClosed
	}
	return h.tx.Query(ctx, sql, args...)
}

// QueryRow is pgx.Tx's QueryRow.
func (h *stepHandle) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	if h.closed.Load() {
		return closedRow{}
	}
	return h.tx.QueryRow(ctx, sql, args...)
}

// closedRow is QueryRow's answer after the step returned.
type closedRow struct{}

func (closedRow) Scan(...any) error { return pgx.ErrTxClosed }

// closedBatch is SendBatch's answer after the step returned. It embeds the
// interface (nil) so that methods a newer pgx adds keep it compiling; the
// ones a caller can reach after a step returned are answered here.
type closedBatch struct{ pgx.BatchResults }

func (closedBatch) Exec() (pgconn.CommandTag, error) { return pgconn.CommandTag{}, pgx.ErrTxClosed }
func (closedBatch) Query() (pgx.Rows, error)         { return nil, pgx.ErrTxClosed }
func (closedBatch) QueryRow() pgx.Row                { return closedRow{} }
func (closedBatch) Close() error                     { return pgx.ErrTxClosed }
func (closedBatch) Tx() pgx.Tx                       { return nil }
