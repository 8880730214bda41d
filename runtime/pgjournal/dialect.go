package pgjournal

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/resumegen/resumegen/runtime/internal/sqljournal"
	"github.com/resumegen/resumegen/runtime/journal"
)

// dialect is PostgreSQL's spelling of the shared statements (sqljournal):
// they are written in it, so Rebind only qualifies the tables with the
// journal's schema. Timestamps are timestamptz (NULL for none), lists
// are arrays, rows are locked FOR UPDATE, and the journal's clock is the
// server's, clock_timestamp().
type dialect struct{ schema string }

var _ sqljournal.Dialect = dialect{}

func (d dialect) Rebind(sql string) string { return qualify(sql, d.schema) }

func (dialect) Param(n int) string { return sqljournal.DollarParam(n) }

func (dialect) Time(t time.Time) any { return nullTime(t) }

func (dialect) ScanTime(v any) (time.Time, error) {
	switch x := v.(type) {
	case nil:
		return time.Time{}, nil
	case time.Time:
		return x.UTC(), nil
	}
	return time.Time{}, errors.New("not a timestamp")
}

func (dialect) NoTime() string { return "NULL" }

func (dialect) Unset(col string) string { return col + " IS NULL" }

func (dialect) AnyOf(col string, first int, vals []string) (string, []any) {
	return col + " = ANY(" + sqljournal.DollarParam(first) + ")", []any{vals}
}

func (dialect) Contains(col, p string) string { return "strpos(" + col + ", " + p + ") > 0" }

func (dialect) Set(col string) string { return col + " IS NOT NULL" }

// Serialize is a transaction's advisory lock of key and the schema, so
// that journals in other schemas of one database do not wait for it.
func (d dialect) Serialize(key int64) (string, []any) {
	return `SELECT pg_advisory_xact_lock($1, hashtext($2))`, []any{key, d.schema}
}

func (dialect) ForUpdate() string { return "FOR UPDATE" }

func (dialect) InProcess() bool { return false }

func (dialect) Now(*sqljournal.Args, time.Time) string { return "clock_timestamp()" }

func (dialect) Ago(a *sqljournal.Args, _ time.Time, d time.Duration) string {
	return "clock_timestamp() - " + a.Add(d) + "::interval"
}

func (dialect) Later(a *sqljournal.Args, _ time.Time, d time.Duration) string {
	return "clock_timestamp() + " + a.Add(d) + "::interval"
}

// RequiredTime passes t as it is: the zero time is stored as a time
// (0001-01-01), which reads back as the zero time.
func (dialect) RequiredTime(t time.Time) any { return t }

func (dialect) TimeParam(p string) string { return p + "::timestamptz" }

// StepFence share-locks the run's row (FOR SHARE) until the write
// commits, so a claim cannot slip in between the check and the commit: it
// waits, or the check sees its epoch. The entry's first step row is its
// progress (progress_attempt); later ones skip that update without
// scanning.
func (dialect) StepFence() (with, cond string) { return stepFence, stepFenced }

// stepFenced is the condition of dialect.StepFence: run holds the row.
const stepFenced = `EXISTS (SELECT 1 FROM run)`

// stepFence is dialect.StepFence: run is the run's row if the lease ($15
// run, $16 owner, $17 epoch) is still the writer's, share-locked, and
// progress marks the run's progress at the entry's first step row (see
// journal.RunRecord.ClaimsSinceProgress).
const stepFence = `WITH run AS (
				SELECT attempts <> progress_attempt AS first FROM {schema}.resume_runs
				WHERE run_id = $15 AND lease_owner = $16 AND epoch = $17 FOR SHARE),
			progress AS (
				UPDATE {schema}.resume_runs SET progress_attempt = attempts
				WHERE run_id = $15 AND (SELECT first FROM run))`

// AppendMove appends m to the column in SQL, stamped with the server's
// clock (appendMove, with m in p).
func (dialect) AppendMove(_ []journal.Move, m journal.Move, _ time.Time, p string) (string, any, error) {
	b, err := json.Marshal(m)
	if err != nil {
		return "", nil, err
	}
	return strings.ReplaceAll(appendMove, "$4", p), string(b), nil
}

func (dialect) NoRows(err error) bool { return errors.Is(err, pgx.ErrNoRows) }

func (dialect) WriteErr(err error) error { return err }

// executor is a pool or a pgx.Tx as a sqljournal.Executor.
type executor struct{ q querier }

func (e executor) Exec(ctx context.Context, sql string, args ...any) (int64, error) {
	tag, err := e.q.Exec(ctx, sql, args...)
	return tag.RowsAffected(), err
}

func (e executor) Query(ctx context.Context, sql string, args ...any) (sqljournal.Rows, error) {
	rows, err := e.q.Query(ctx, sql, args...)
	if err != nil {
		return nil, err
	}
	return rows, nil
}

func (e executor) QueryRow(ctx context.Context, sql string, args ...any) sqljournal.Row {
	return e.q.QueryRow(ctx, sql, args...)
}

// newStore is the shared half of j (sqljournal.Store).
func newStore(j *Journal) *sqljournal.Store {
	return sqljournal.New(sqljournal.Config{
		Dialect: dialect{j.schema},
		Clock:   time.Now,
		Read:    executor{j.pool},
		// One statement in autocommit is its own transaction.
		Write: func(ctx context.Context, fn func(sqljournal.Executor) error) error {
			if err := fn(executor{j.pool}); err != nil {
				return err
			}
			j.commits.Add(1)
			return nil
		},
		Reads:        &j.reads,
		Commits:      &j.commits,
		ScanRun:      func(row sqljournal.Row, extra ...any) (journal.RunRecord, error) { return scanRun(row, extra...) },
		ScanStep:     func(row sqljournal.Row) (journal.StepRecord, error) { return scanStep(row) },
		ScanSchedule: func(row sqljournal.Row) (journal.ScheduleRecord, error) { return scanSchedule(row) },
		InTx: func(ctx context.Context, fn func(sqljournal.Executor) error) error {
			return j.inTx(ctx, func(tx pgx.Tx) error { return fn(executor{tx}) })
		},
	})
}
