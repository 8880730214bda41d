package sqlitejournal

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/resumegen/resumegen/runtime/internal/sqljournal"
	"github.com/resumegen/resumegen/runtime/journal"
)

// dialect is SQLite's spelling of the shared statements (sqljournal):
// ?n placeholders, no schemas, timestamps as fixed-width UTC text, IN
// lists, no row locks (a write transaction holds the database's write
// lock from BEGIN IMMEDIATE), and the journal's clock as an argument.
type dialect struct{}

var _ sqljournal.Dialect = dialect{}

func (dialect) Rebind(sql string) string { return sqljournal.RebindInOrder(sql, "?") }

func (dialect) Param(n int) string { return "?" + strconv.Itoa(n) }

func (dialect) Time(t time.Time) any { return ts(t) }

func (dialect) ScanTime(v any) (time.Time, error) {
	var s string
	switch x := v.(type) {
	case nil:
		return time.Time{}, nil
	case string:
		s = x
	case []byte:
		s = string(x)
	default:
		return time.Time{}, fmt.Errorf("%s is not a timestamp (%s)", shown(v), timeFormat)
	}
	if s == "" {
		return time.Time{}, nil
	}
	return time.Parse(timeFormat, s)
}

func (dialect) NoTime() string { return "''" }

func (dialect) Unset(col string) string { return col + " = ''" }

func (dialect) AnyOf(col string, first int, vals []string) (string, []any) {
	ph := make([]string, len(vals))
	args := make([]any, len(vals))
	for i, v := range vals {
		ph[i], args[i] = "?"+strconv.Itoa(first+i), v
	}
	return col + " IN (" + strings.Join(ph, ", ") + ")", args
}

func (dialect) Contains(col, p string) string { return "instr(" + col + ", " + p + ") > 0" }

func (dialect) Set(col string) string { return col + " > ''" }

// Serialize is nothing: a write transaction holds the database's write
// lock from its start (BEGIN IMMEDIATE).
func (dialect) Serialize(int64) (string, []any) { return "", nil }

func (dialect) ForUpdate() string { return "" }

// InProcess is true: the database is a file the process opens.
func (dialect) InProcess() bool { return true }

// Now is the journal's clock (see WithClock), as read, as an argument.
func (dialect) Now(a *sqljournal.Args, now time.Time) string { return a.Add(ts(now)) }

// Ago is the journal's clock, as read, less d, as an argument.
func (dialect) Ago(a *sqljournal.Args, now time.Time, d time.Duration) string {
	return a.Add(ts(now.Add(-d)))
}

// Later is the journal's clock, as read, plus d, as an argument.
func (dialect) Later(a *sqljournal.Args, now time.Time, d time.Duration) string {
	return a.Add(ts(now.Add(d)))
}

// RequiredTime is Time: the zero time is stored as "", as in any column.
func (dialect) RequiredTime(t time.Time) any { return ts(t) }

// TimeParam is p: SQLite does not infer parameters' types.
func (dialect) TimeParam(p string) string { return p }

// StepFence reads the run's row if the lease still holds it, in the
// insert's condition (a WITH clause costs SQLite a few µs a step): the
// write lock that the writer connection holds from the transaction's
// start keeps a claim out until the write commits, and the progress
// triggers (resume_steps_progress_insert, _update) mark the run's
// progress.
func (dialect) StepFence() (with, cond string) {
	return "", `EXISTS (SELECT 1 FROM {schema}.resume_runs WHERE run_id = $15 AND lease_owner = $16 AND epoch = $17)`
}

// AppendMove appends m, stamped now, to the moves read: the column is
// rewritten whole, under the write lock its transaction holds.
func (dialect) AppendMove(moves []journal.Move, m journal.Move, now time.Time, p string) (string, any, error) {
	m.At = now.UTC()
	enc, err := journal.EncodeMoves(append(moves[:len(moves):len(moves)], m))
	if err != nil {
		return "", nil, err
	}
	return p, nullJSON(enc), nil
}

func (dialect) NoRows(err error) bool { return errors.Is(err, sql.ErrNoRows) }

func (dialect) WriteErr(err error) error { return writeLock(err) }

// sqlQuerier is what *sql.DB and *sql.Tx both offer.
type sqlQuerier interface {
	querier
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// executor is a *sql.DB or *sql.Tx as a sqljournal.Executor.
type executor struct{ q sqlQuerier }

func (e executor) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	res, err := e.q.ExecContext(ctx, query, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

func (e executor) Query(ctx context.Context, query string, args ...any) (sqljournal.Rows, error) {
	rows, err := e.q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	return sqlRows{rows}, nil
}

func (e executor) QueryRow(ctx context.Context, query string, args ...any) sqljournal.Row {
	return e.q.QueryRowContext(ctx, query, args...)
}

// sqlRows are *sql.Rows as sqljournal.Rows.
type sqlRows struct{ *sql.Rows }

func (r sqlRows) Close() { r.Rows.Close() }

// newStore is the shared half of j (sqljournal.Store).
func newStore(j *Journal) *sqljournal.Store {
	inTx := func(ctx context.Context, fn func(sqljournal.Executor) error) error {
		return j.inTx(ctx, func(tx *sql.Tx) error { return fn(executor{tx}) })
	}
	return sqljournal.New(sqljournal.Config{
		Dialect: dialect{},
		Clock:   j.clock,
		// A fork's copy binds thousands of arguments: in order, not by
		// number (see sqljournal.Config.PositionalParams).
		PositionalParams: true,
		Read:             executor{j.read},
		Reads:            &j.reads,
		Commits:          &j.commits,
		ScanRun:          func(row sqljournal.Row, extra ...any) (journal.RunRecord, error) { return scanRun(row, extra...) },
		ScanStep:         func(row sqljournal.Row) (journal.StepRecord, error) { return scanStep(row) },
		ScanSchedule:     func(row sqljournal.Row) (journal.ScheduleRecord, error) { return scanSchedule(row) },
		InTx:             inTx,
		// A statement alone still needs the write lock from its
		// transaction's start (BEGIN IMMEDIATE), before the clock is read.
		Write: inTx,
	})
}
