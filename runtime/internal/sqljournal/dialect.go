// Package sqljournal is the half of a SQL journal that does not depend on
// the database: the statements, row scanning, checks and error messages
// of the operations whose logic is the same in every SQL backend, written
// once against a [Dialect] and an [Executor]: listing and counting runs
// ([Store.ListRuns], [Store.CountRuns], [RunWhere]), manifests, the
// operators' actions ([Store.RecordAction], [Store.ListActions]) and
// sealing keys, [Store.Resolve], [Store.Retry], [Store.AcceptVersion],
// [Store.MoveRun] with its relabel, [Store.Fork] (the backend inserting
// the new run's row), [Store.Cancel], [Store.Signal], kept signals
// ([Store.KeptSignal], [Store.ListSignals], [Store.ConsumeSignal],
// [Store.WakeForSignal]), [Store.NextWake], [Store.Detached],
// [Store.SaveManifest], schedules ([Store.CreateSchedule],
// [Store.UpdateSchedule], [Store.LoadSchedule], [Store.ListSchedules]),
// fan-out ([Store.Detach], [Store.WakeParent]), a suspending run's check
// of its wait ([Store.LockRun], [Store.WaitOver]), [Store.TakeSignal],
// [Store.Advertise], [Store.RecordKeys] and [Store.RenewLease]; and the
// hot path's
// statements, which each backend executes its own way (steps.go): a step
// row's columns, upsert, arguments ([StepArgs]) and fenced write
// ([WriteStepSQL]), the journal's reads at a run's entry and whole
// ([EntryStepsSQL], [StepsSQL]), the finish of a run's entry
// ([FinishSQL], [FinishArgs]) and a fenced write's outcome ([LeaseHeld]).
//
// A backend (runtime/pgjournal, runtime/sqlitejournal) supplies:
//
//   - a [Dialect]: what its SQL spells differently (placeholders, the
//     qualified table names, the journal's clock, list membership,
//     substring search, row locks, how a move is appended, how a step
//     row's write is fenced) and how it
//     stores values (timestamps as timestamptz or as fixed-width UTC
//     text; NULL or "" for no time), and how it classifies errors (no
//     row; a write refused because another writer holds the lock);
//   - an [Executor] over its connection pool and over its transactions
//     (pgx's pool and pgx.Tx, or *sql.DB and *sql.Tx), so that one
//     function serves both;
//   - a [Config] for [New]: the executor it reads through, its counters,
//     its run scanner, its host-side clock, how it opens a transaction and
//     how it runs one statement as a transaction of its own.
//
// What truly differs stays in the backend: how the hot path executes
// (CreateRun, claims, the transaction shape of group commit, tx steps,
// and the fence of a step row, [Dialect.StepFence]), the schema and its
// migrations, PostgreSQL's pipelined batches, LISTEN/NOTIFY, advisory
// locks and pooler detection, SQLite's single writer connection, its busy
// handling and its tolerant reading of cells that do not convert (its run
// scanner).
//
// Shared statements are written once in PostgreSQL's spelling, with $n
// placeholders and tables named {schema}.resume_x; [Dialect.Rebind] turns
// them into the backend's (SQLite: ?n and resume_x). A distributed SQL
// engine that speaks PostgreSQL's wire protocol (CockroachDB, YugabyteDB)
// would be a Dialect close to PostgreSQL's, with its own error
// classification (serialization failures to retry), not a fork of the
// journal; docs/reference.md ("Adding a journal: dialects") lists what it
// must still write itself.
package sqljournal

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/resumegen/resumegen/runtime/journal"
)

// Dialect is what a SQL backend spells or stores differently.
type Dialect interface {
	// Rebind turns a statement written with $n placeholders and
	// {schema}.resume_x table names into the backend's spelling. It is
	// called once per statement, when a [Store] is made, not per call.
	Rebind(sql string) string
	// Param is the placeholder of the n-th argument (from 1).
	Param(n int) string
	// Time is a timestamp as the backend stores it, as an argument; the
	// zero time is stored as the backend stores no time.
	Time(t time.Time) any
	// ScanTime reads a timestamp column scanned into an any: a
	// time.Time, or text in the backend's format. NULL and "" read as
	// the zero time; a result is in UTC.
	ScanTime(v any) (time.Time, error)
	// NoTime is the SQL literal of no time in a timestamp column: NULL,
	// or '' where timestamps are text.
	NoTime() string
	// Unset is the condition that timestamp column col holds no time.
	Unset(col string) string
	// AnyOf is the condition that col is one of vals, with the arguments
	// it adds after the first-1 already given.
	AnyOf(col string, first int, vals []string) (cond string, args []any)
	// Contains is the condition that text column col contains the text
	// of placeholder p.
	Contains(col, p string) string
	// Serialize is the statement, and its arguments, that a write
	// transaction runs first so that the transactions that run it with
	// the same key take turns until each ends (PostgreSQL: an advisory
	// lock of the transaction, the second key the schema's), or "" where
	// every write transaction holds the database's write lock from its
	// start. Keys are the package's constants ([ManifestsLock]).
	Serialize(key int64) (sql string, args []any)
	// Set is the condition that timestamp column col holds a time (the
	// negation of Unset), in a form that bounds an index's range: IS NOT
	// NULL, or > ''.
	Set(col string) string
	// ForUpdate is the clause that locks the rows a SELECT reads until
	// its transaction ends ("FOR UPDATE"), or "" where a transaction
	// holds the whole database's write lock from its start.
	ForUpdate() string
	// InProcess reports whether the database runs in the host's process
	// (SQLite), where a statement costs no round trip and a read before a
	// write is cheaper than a write that reads its own table; elsewhere
	// the two are one statement.
	InProcess() bool
	// Now is the SQL expression of the journal's clock in a statement
	// whose arguments a is gathering: a server function, or now, the
	// journal's clock as the host read it (Config.Clock), as an argument
	// it adds to a. Its text does not depend on now, so that a statement
	// built once serves every call.
	Now(a *Args, now time.Time) string
	// Ago is the SQL expression of the journal's clock less d, in a
	// statement whose arguments a is gathering (see Now).
	Ago(a *Args, now time.Time, d time.Duration) string
	// Later is the SQL expression of the journal's clock plus d, in a
	// statement whose arguments a is gathering (see Now).
	Later(a *Args, now time.Time, d time.Duration) string
	// RequiredTime is a timestamp as the backend stores it in a column
	// that always holds one (a step row's started_at): unlike Time, the
	// zero time is stored as the backend stores it, as a time or as none.
	RequiredTime(t time.Time) any
	// TimeParam is placeholder p of a timestamp argument where the
	// statement alone does not tell its type (a branch of a CASE): p,
	// cast where the backend infers parameters' types.
	TimeParam(p string) string
	// StepFence is the fence of a step row's write ([WriteStepSQL]): a
	// WITH clause to begin the statement with, or "", and the condition
	// under which the row is written, that the run's row still holds the
	// lease ($15 run, $16 owner, $17 epoch). The run's row is held against
	// a claim until the write commits (a row lock, or the database's write
	// lock that the writer holds already), and the WITH clause does
	// whatever else the backend does at each step row in the same
	// statement (PostgreSQL marks the run's progress there; SQLite's
	// triggers do it).
	StepFence() (with, cond string)
	// AppendMove is the SQL expression of a run's moves column with m
	// appended, stamped with the journal's clock (or now, where the
	// journal's clock is the host's), and the argument of placeholder p
	// it uses; moves are the run's moves as read.
	AppendMove(moves []journal.Move, m journal.Move, now time.Time, p string) (expr string, arg any, err error)
	// NoRows reports whether err says that a query returned no row.
	NoRows(err error) bool
	// WriteErr classifies an error of a write: the backend's own error
	// for a write refused because another writer holds the lock, or err.
	WriteErr(err error) error
}

// Args gathers a statement's arguments, and gives each its placeholder.
type Args struct {
	d    Dialect
	vals []any
}

// NewArgs starts the arguments of a statement in dialect d.
func NewArgs(d Dialect) *Args { return &Args{d: d} }

// Add appends v and returns its placeholder.
func (a *Args) Add(v any) string {
	a.vals = append(a.vals, v)
	return a.d.Param(len(a.vals))
}

// Values returns the arguments gathered.
func (a *Args) Values() []any { return a.vals }

// Len is the number of arguments gathered.
func (a *Args) Len() int { return len(a.vals) }

// RebindNumbered rewrites $n placeholders as prefix+n ("?" gives SQLite's
// ?n) and drops the "{schema}." qualifier of table names, outside string
// literals. A helper for dialects whose database has no schemas.
func RebindNumbered(sql, prefix string) string { return rebind(sql, prefix, true) }

// RebindInOrder is RebindNumbered, but where the placeholders of sql
// stand in the order $1, $2, ... each once, they become prefix alone: a
// driver binds those in order, where it looks up each numbered one
// (SQLite's does, for 1-2 µs in a statement of 17 arguments).
func RebindInOrder(sql, prefix string) string {
	return rebind(sql, prefix, !inOrder(sql))
}

// inOrder reports whether the $n placeholders of sql, outside string
// literals, are $1, $2, ... in that order, each once, and sql has no
// other placeholder (a bare "?" after a numbered one would take the
// number after the highest so far).
func inOrder(sql string) bool {
	next := 1
	ok := !hasQuestionMark(sql)
	eachParam(sql, func(n int) {
		if n != next {
			ok = false
		}
		next++
	})
	return ok
}

// hasQuestionMark reports whether sql has a "?" outside string literals.
func hasQuestionMark(sql string) bool {
	inString := false
	for i := 0; i < len(sql); i++ {
		switch sql[i] {
		case '\'':
			inString = !inString
		case '?':
			if !inString {
				return true
			}
		}
	}
	return false
}

// eachParam calls f with the number of each $n placeholder of sql
// outside string literals, in order.
func eachParam(sql string, f func(n int)) {
	inString := false
	for i := 0; i < len(sql); i++ {
		switch c := sql[i]; {
		case c == '\'':
			inString = !inString
		case !inString && c == '$' && i+1 < len(sql) && sql[i+1] >= '0' && sql[i+1] <= '9':
			j := i + 1
			for j < len(sql) && sql[j] >= '0' && sql[j] <= '9' {
				j++
			}
			n, _ := strconv.Atoi(sql[i+1 : j])
			f(n)
			i = j - 1
		}
	}
}

func rebind(sql, prefix string, numbered bool) string {
	var b strings.Builder
	b.Grow(len(sql))
	inString := false
	for i := 0; i < len(sql); i++ {
		c := sql[i]
		switch {
		case c == '\'':
			inString = !inString
			b.WriteByte(c)
		case !inString && c == '$' && i+1 < len(sql) && sql[i+1] >= '0' && sql[i+1] <= '9':
			j := i + 1
			for j < len(sql) && sql[j] >= '0' && sql[j] <= '9' {
				j++
			}
			b.WriteString(prefix)
			if numbered {
				b.WriteString(sql[i+1 : j])
			}
			i = j - 1
		case !inString && strings.HasPrefix(sql[i:], "{schema}."):
			i += len("{schema}.") - 1
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// DollarParam is PostgreSQL's placeholder of the n-th argument, "$n".
func DollarParam(n int) string { return "$" + strconv.Itoa(n) }

// Row is one row of a query: pgx.Row and *sql.Row both are.
type Row interface {
	Scan(dest ...any) error
}

// Rows are the rows of a query.
type Rows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
	Close()
}

// Executor runs statements on a pool or in a transaction.
type Executor interface {
	// Exec runs a statement and returns the number of rows it changed.
	Exec(ctx context.Context, sql string, args ...any) (int64, error)
	// Query runs a query; Rows are closed by the caller.
	Query(ctx context.Context, sql string, args ...any) (Rows, error)
	// QueryRow runs a query expected to return at most one row; its
	// error, or that it returned none, comes from Row.Scan.
	QueryRow(ctx context.Context, sql string, args ...any) Row
}

// Collect reads every row with scan and closes rows; an error names what
// (e.g. "list runs").
func Collect[T any](rows Rows, what string, scan func(Row) (T, error)) ([]T, error) {
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return out, nil
}
