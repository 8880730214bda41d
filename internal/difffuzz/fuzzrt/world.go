// Package fuzzrt is what the differential fuzzer's generated programs and
// their driver link against: the world a program's steps act on (an
// effects log, a tx step's rows), the deterministic arithmetic their
// results are made of, and the driver that crashes each program at every
// step boundary, in process and with real SIGKILLs, and writes down what
// it saw for package difffuzz to compare.
//
// Nothing here is for users: the generated programs import it because
// they are built in a temporary module whose path lies below this
// repository's (so that this internal package may be imported).
package fuzzrt

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"

	"github.com/resumegen/resumegen/runtime/resume"
)

// Effect is one execution of a step's code, as the step itself recorded
// it: one attempt. A resumed run that executed a step more often than its
// policy allows shows here, whatever the journal says.
type Effect struct {
	Run     string `json:"run"`
	Key     string `json:"key"`
	Name    string `json:"name"`
	Func    string `json:"func"`   // the step function whose code ran
	Policy  string `json:"policy"` // the policy the runtime executed it under
	Attempt int    `json:"attempt"`
	Pid     int    `json:"pid"`
	// OK is set when the attempt returned without an error; Result is
	// then its value as JSON, for steps that return one value (a person
	// resolving a parked once step gives it back).
	OK     bool            `json:"ok,omitempty"`
	Error  string          `json:"error,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
	// TxDB is the journal's database file, for a tx step: where its
	// committed rows are counted.
	TxDB string `json:"tx_db,omitempty"`
}

// World is the outside world of one run of a program (the uninterrupted
// run, or one crash case: the crashed process and the process that
// resumes it share it, as they share a real world). Its effects log is in
// memory, or in a file for runs in real processes.
type World struct {
	mu      sync.Mutex
	effects []Effect
	file    string     // append JSON lines here too ("" in process)
	entries []EntryEnd // the ends of the run's entries (in process)
	txDBs   map[string]bool
	txRows  []TxRow // the rows counted in txDBs (see countTxRows)
	counted bool
}

// EntryEnd is how one entry of a run into a process ended, as the
// engine's tracer reported it.
type EntryEnd struct {
	Run     string `json:"run"`
	Outcome string `json:"outcome"`
}

// NewWorld returns an empty world; with a file, every effect is also
// appended to it as a JSON line, so that it survives a SIGKILL.
func NewWorld(file string) *World { return &World{file: file, txDBs: map[string]bool{}} }

type worldKey struct{}

// WithWorld returns ctx carrying w, for the steps of the runs started with it.
func WithWorld(ctx context.Context, w *World) context.Context {
	return context.WithValue(ctx, worldKey{}, w)
}

func worldOf(ctx context.Context) *World {
	w, _ := ctx.Value(worldKey{}).(*World)
	return w
}

// Effects returns the world's effects log, in order.
func (w *World) Effects() []Effect {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]Effect(nil), w.effects...)
}

// add appends e and returns its index.
func (w *World) add(e Effect) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.effects = append(w.effects, e)
	if e.TxDB != "" {
		w.txDBs[e.TxDB] = true
	}
	w.appendFile(e)
	return len(w.effects) - 1
}

// settle records how effect i ended.
func (w *World) settle(i int, f func(e *Effect)) {
	w.mu.Lock()
	defer w.mu.Unlock()
	f(&w.effects[i])
	w.appendFile(w.effects[i])
}

// appendFile writes e to the world's file: a later line for the same
// attempt (its end) replaces the earlier one when read back.
func (w *World) appendFile(e Effect) {
	if w.file == "" {
		return
	}
	b, err := json.Marshal(e)
	if err != nil {
		panic(fmt.Sprintf("fuzzrt: effect of step %s: %v", e.Key, err))
	}
	f, err := os.OpenFile(w.file, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		panic(fmt.Sprintf("fuzzrt: effects log: %v", err))
	}
	defer f.Close()
	if _, err := f.Write(append(b, '\n')); err != nil {
		panic(fmt.Sprintf("fuzzrt: effects log: %v", err))
	}
}

// ReadEffects reads an effects log file: one effect per attempt, the last
// line written for it winning.
func ReadEffects(path string) ([]Effect, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []Effect
	index := map[string]int{}
	dec := json.NewDecoder(bytes.NewReader(b))
	for dec.More() {
		var e Effect
		if err := dec.Decode(&e); err != nil {
			return nil, fmt.Errorf("effects log %s: %w", path, err)
		}
		id := fmt.Sprintf("%s\x00%s\x00%d\x00%d", e.Run, e.Key, e.Attempt, e.Pid)
		if i, ok := index[id]; ok {
			out[i] = e
			continue
		}
		index[id] = len(out)
		out = append(out, e)
	}
	return out, nil
}

type attemptKey struct{}

// attemptRef ties a step attempt's context to its effect in the world.
type attemptRef struct {
	w *World
	i int
}

// plainAttempt is the attempt a step called outside a run sees.
const plainAttempt = 1 << 20

// Exec records an execution of step function fn's code: the step, its
// key and attempt as the runtime runs it, and the process. In a tx step it
// also writes a row in the step's transaction, so the rows that committed
// can be counted. It returns the attempt number (a large one outside a
// run, see plainAttempt) and the
// context the rest of the step's code must use (it ties the attempt's end,
// [Return] or [Fail], to this effect).
func Exec(ctx context.Context, fn string) (context.Context, int) {
	info, ok := resume.StepFromContext(ctx)
	if !ok {
		// A plain call, outside a run, has no retries: it sees the
		// outcome the step's last attempt would have (no transient
		// failure), so that it computes what the durable run does.
		info = resume.StepInfo{Name: fn, StepKey: fn, Attempt: plainAttempt, Policy: resume.PolicyDefault}
	}
	e := Effect{Run: info.RunID, Key: info.StepKey, Name: info.Name, Func: fn, Policy: info.Policy.String(), Attempt: info.Attempt, Pid: os.Getpid()}
	if resume.InTx(ctx) {
		path, err := txInsert(ctx, info)
		if err != nil {
			panic(fmt.Sprintf("fuzzrt: run %s, step %s: the tx row: %v", info.RunID, info.StepKey, err))
		}
		e.TxDB = path
	}
	w := worldOf(ctx)
	if w == nil {
		return ctx, info.Attempt // called outside the fuzzer: nothing to record
	}
	i := w.add(e)
	return context.WithValue(ctx, attemptKey{}, attemptRef{w: w, i: i}), info.Attempt
}

// Return records that the attempt of ctx (see [Exec]) succeeded with v,
// and returns v.
func Return[T any](ctx context.Context, v T) T {
	if ref, ok := ctx.Value(attemptKey{}).(attemptRef); ok {
		raw, _ := json.Marshal(v)
		ref.w.settle(ref.i, func(e *Effect) { e.OK, e.Result = true, raw })
	}
	return v
}

// Done records that the attempt of ctx succeeded, for a step that
// returns no value but its error (journaled as null).
func Done(ctx context.Context) {
	if ref, ok := ctx.Value(attemptKey{}).(attemptRef); ok {
		ref.w.settle(ref.i, func(e *Effect) { e.OK, e.Result = true, json.RawMessage("null") })
	}
}

// Journaled records that the attempt of ctx succeeded, for a step whose
// generated code journals an object of its results and the pointees it
// wrote (fields result1, result2, arg3, ...): fields, which a person
// resolving the parked step gives back.
func Journaled(ctx context.Context, fields map[string]any) {
	if ref, ok := ctx.Value(attemptKey{}).(attemptRef); ok {
		raw, _ := json.Marshal(fields)
		ref.w.settle(ref.i, func(e *Effect) { e.OK, e.Result = true, raw })
	}
}

// Fail records that the attempt of ctx failed with err, and returns err.
func Fail(ctx context.Context, err error) error {
	if ref, ok := ctx.Value(attemptKey{}).(attemptRef); ok {
		ref.w.settle(ref.i, func(e *Effect) { e.Error = err.Error() })
	}
	return err
}

// ErrTransient is the failure of an attempt that a retry fixes.
var ErrTransient = errors.New("transient failure")

// execer is what a tx step needs of its transaction.
type execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// txTable holds one row per tx step attempt whose transaction committed.
const txTable = `CREATE TABLE IF NOT EXISTS fuzz_effects (run_id TEXT NOT NULL, step_key TEXT NOT NULL, attempt INTEGER NOT NULL)`

// txInsert writes the attempt's row in the step's transaction and
// returns the database's file.
func txInsert(ctx context.Context, info resume.StepInfo) (string, error) {
	q := resume.Tx[execer](ctx, nil)
	if _, err := q.ExecContext(ctx, txTable); err != nil {
		return "", err
	}
	if _, err := q.ExecContext(ctx, `INSERT INTO fuzz_effects (run_id, step_key, attempt) VALUES (?, ?, ?)`, info.RunID, info.StepKey, info.Attempt); err != nil {
		return "", err
	}
	var seq int
	var name, file string
	if err := q.QueryRowContext(ctx, `PRAGMA database_list`).Scan(&seq, &name, &file); err != nil {
		return "", err
	}
	return file, nil
}

// TxRow counts the committed tx rows of one step key of a run.
type TxRow struct {
	Run  string `json:"run"`
	Key  string `json:"key"`
	Rows int    `json:"rows"`
}

// CountTxRows counts the committed rows of tx steps in the database file
// path, by run and step key.
func CountTxRows(ctx context.Context, path string) ([]TxRow, error) {
	// A plain path, not a file: URI: a test's directory may hold a '#'.
	db, err := sql.Open("sqlite", path)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	var exists int
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE name = 'fuzz_effects'`).Scan(&exists); err != nil {
		return nil, fmt.Errorf("count tx rows in %s: %w", path, err)
	}
	if exists == 0 {
		return nil, nil
	}
	rows, err := db.QueryContext(ctx, `SELECT run_id, step_key, count(*) FROM fuzz_effects GROUP BY run_id, step_key ORDER BY run_id, step_key`)
	if err != nil {
		return nil, fmt.Errorf("count tx rows in %s: %w", path, err)
	}
	defer rows.Close()
	var out []TxRow
	for rows.Next() {
		var r TxRow
		if err := rows.Scan(&r.Run, &r.Key, &r.Rows); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// Foreign is a function of another package than the workflow's, which a
// program makes a step at its call site (//resume:step name=NAME): its
// value is computed from name and a.
func Foreign(ctx context.Context, name string, a int) (int, error) {
	ctx, _ = Exec(ctx, "fuzzrt.Foreign")
	return Return(ctx, Val(len(name)*7919, a)), nil
}
