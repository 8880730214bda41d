package sqljournal

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/resumegen/resumegen/runtime/journal"
)

// forkStepSQL inserts one copied step row of a fork's new run: the run is
// created in the same transaction, so there is no lease to fence by.
const forkStepSQL = `INSERT INTO {schema}.resume_steps (run_id, step_key, name, status, result, error, attempt, attempt_base,
	seq, started_at, finished_at, error_detail, final, history)
	VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)`

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
		d := s.cfg.Dialect
		q := d.Rebind(forkStepSQL)
		for _, st := range f.Steps {
			if err := journal.CheckStep(st); err != nil {
				return fmt.Errorf("%s: step %s: %w", what, st.StepKey, err)
			}
			history, err := journal.EncodeHistory(st.History)
			if err != nil {
				return fmt.Errorf("%s: step %s: %w", what, st.StepKey, err)
			}
			if err := s.exec(ctx, tx, what+": copy step "+st.StepKey, q,
				r.RunID, st.StepKey, st.Name, string(st.Status), nullJSON(st.Result), st.Error, st.Attempt, st.AttemptBase,
				st.Seq, d.Time(st.StartedAt), d.Time(st.FinishedAt), nullJSON(st.ErrorDetail), st.Final, nullJSON(history)); err != nil {
				return err
			}
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
