package sqljournal

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/resumegen/resumegen/runtime/journal"
)

// forkStepsSQL inserts copied step rows of a fork's new run, VALUES and
// a row of placeholders for each: the run is created in the same
// transaction, so there is no lease to fence by.
const forkStepsSQL = `INSERT INTO {schema}.resume_steps (run_id, step_key, name, status, result, error, attempt, attempt_base,
	seq, started_at, finished_at, error_detail, final, history) VALUES `

// forkChunk is how many rows one INSERT of a fork copies: 14 arguments a
// row stay far below both backends' limits on a statement's arguments
// (PostgreSQL 65,535; SQLite 32,766), and each statement is a round trip
// fewer on PostgreSQL. forkChunkPositional is the chunk of a backend
// that binds in order (Config.PositionalParams): its driver finds each
// argument by a scan of them all, so that binding is quadratic in the
// statement's arguments (SQLite: 1000 rows copied 500 a statement took
// 140 ms, 50 a statement 50 ms).
const (
	forkChunk           = 500
	forkChunkPositional = 50
)

// InsertRun is a backend's insert of a new run (as journal.Journal.CreateRun
// stores it) in transaction tx, unless its id exists: it reports whether
// it inserted the row, and returns the stored run when it did not.
type InsertRun func(ctx context.Context, tx Executor, r journal.RunRecord) (journal.RunRecord, bool, error)

// Fork creates f.Run with f.Steps and records the fork on both runs, in
// one transaction holding the original's row locked (journal.Forker). The
// backend inserts the run row (insert): its CreateRun's rule, in tx.
func (s *Store) Fork(ctx context.Context, f journal.ForkRequest, insert InsertRun) (journal.RunRecord, bool, error) {
	r := f.Run
	if err := journal.CheckRun(r); err != nil {
		return r, false, fmt.Errorf("run %s: fork %s: %w", f.From, r.RunID, err)
	}
	if r.RunID == f.From {
		return r, false, fmt.Errorf("run %s: fork: the new run needs an id of its own: %w", f.From, journal.ErrRunConflict)
	}
	r.Parent, r.LeaseOwner = "", ""
	r = r.Created()
	what := "run " + f.From + ": fork " + r.RunID + " from " + f.Step
	var stored journal.RunRecord
	var created bool
	err := s.cfg.InTx(ctx, func(tx Executor) error {
		if _, err := s.run(ctx, tx, f.From); err != nil {
			return err
		}
		var err error
		stored, created, err = insert(ctx, tx, r)
		if err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		if !created {
			return s.sameFork(ctx, tx, f, stored)
		}
		if err := s.copySteps(ctx, tx, what, r.RunID, f.Steps); err != nil {
			return err
		}
		by := f.By
		by.Action = journal.ActionFork
		by.Detail = journal.ForkedTo(r.RunID, f.Step)
		if err := s.RecordAction(journal.WithAction(ctx, by), tx, f.From); err != nil {
			return err
		}
		by.Detail = journal.ForkedFrom(f.From, f.Step)
		return s.RecordAction(journal.WithAction(ctx, by), tx, r.RunID)
	})
	if err != nil {
		return r, false, err
	}
	return stored, created, nil
}

// copySteps inserts steps as run runID's rows in tx, forkChunk rows a
// statement.
func (s *Store) copySteps(ctx context.Context, tx Executor, what, runID string, steps []journal.StepRecord) error {
	d := s.cfg.Dialect
	size := forkChunk
	if s.cfg.PositionalParams {
		size = forkChunkPositional
	}
	for len(steps) > 0 {
		chunk := steps[:min(size, len(steps))]
		steps = steps[len(chunk):]
		a := NewArgs(d)
		var q strings.Builder
		q.WriteString(forkStepsSQL)
		for i, st := range chunk {
			if err := journal.CheckStep(st); err != nil {
				return fmt.Errorf("%s: step %s: %w", what, st.StepKey, err)
			}
			history, err := journal.EncodeHistory(st.History)
			if err != nil {
				return fmt.Errorf("%s: step %s: %w", what, st.StepKey, err)
			}
			if i > 0 {
				q.WriteString(", ")
			}
			q.WriteString("(")
			for k, v := range []any{runID, st.StepKey, st.Name, string(st.Status), nullJSON(st.Result), st.Error, st.Attempt, st.AttemptBase,
				st.Seq, d.Time(st.StartedAt), d.Time(st.FinishedAt), nullJSON(st.ErrorDetail), st.Final, nullJSON(history)} {
				if k > 0 {
					q.WriteString(", ")
				}
				p := a.Add(v)
				if s.cfg.PositionalParams {
					p = "?"
				}
				q.WriteString(p)
			}
			q.WriteString(")")
		}
		if err := s.exec(ctx, tx, what+": copy its steps", d.Rebind(q.String()), a.Values()...); err != nil {
			return err
		}
	}
	return nil
}

// sameFork refuses a stored run with the fork's id that is not the fork
// of f.From at f.Step (another workflow, or no such fork action).
func (s *Store) sameFork(ctx context.Context, tx Executor, f journal.ForkRequest, stored journal.RunRecord) error {
	conflict := fmt.Errorf("run %s: fork: run %s exists and is not its fork from %s: %w", f.From, f.Run.RunID, f.Step, journal.ErrRunConflict)
	if stored.Workflow != f.Run.Workflow {
		return conflict
	}
	s.cfg.Reads.Add(1)
	rows, err := tx.Query(ctx, s.sql.listActions, f.Run.RunID)
	if err != nil {
		return fmt.Errorf("run %s: fork: read the actions of %s: %w", f.From, f.Run.RunID, err)
	}
	acts, err := Collect(rows, "run "+f.Run.RunID+": list actions", func(row Row) (journal.ActionRecord, error) {
		var a journal.ActionRecord
		var at any
		err := row.Scan(&a.Seq, &a.Action, &a.Detail, &a.Actor, &a.Origin, &a.Via, &at)
		return a, err
	})
	if err != nil {
		return err
	}
	for _, a := range acts {
		if a.Action == journal.ActionFork && a.Detail == journal.ForkedFrom(f.From, f.Step) {
			return nil
		}
	}
	return conflict
}

// nullJSON is a JSON value as an argument: NULL when there is none.
func nullJSON(b json.RawMessage) any {
	if b == nil {
		return nil
	}
	return string(b)
}
