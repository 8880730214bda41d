package sqljournal

import (
	"context"
	"fmt"

	"github.com/resumegen/resumegen/runtime/journal"
)

// Fan-out (journal.FanOut) and the waits around it: child runs any
// worker claims, a parent that waits for them all, and awaits.

// detachedChunk bounds the run ids of one Detached query (SQLite's IN
// lists: a statement binds at most 32,766 arguments).
const detachedChunk = 500

// Detached reports which of runIDs are detached child runs (claimable by
// any worker), a query per 500.
func (s *Store) Detached(ctx context.Context, runIDs []string) (map[string]bool, error) {
	d := s.cfg.Dialect
	out := make(map[string]bool)
	for len(runIDs) > 0 {
		n := min(len(runIDs), detachedChunk)
		in, args := d.AnyOf("run_id", 1, runIDs[:n])
		runIDs = runIDs[n:]
		s.cfg.Reads.Add(1)
		rows, err := s.cfg.Read.Query(ctx, d.Rebind(`SELECT run_id FROM {schema}.resume_runs WHERE detached AND `+in), args...)
		if err != nil {
			return nil, fmt.Errorf("detached child runs: %w", err)
		}
		ids, err := Collect(rows, "detached child runs", func(row Row) (string, error) {
			var id string
			return id, row.Scan(&id)
		})
		if err != nil {
			return nil, err
		}
		for _, id := range ids {
			out[id] = true
		}
	}
	return out, nil
}

// Detach makes child run runID, created waiting to start by its parent,
// pending and claimable by any worker (see journal.FanOut).
func (s *Store) Detach(ctx context.Context, runID string) error {
	d := s.cfg.Dialect
	err := s.cfg.Write(ctx, func(tx Executor) error {
		const start = `status = 'waiting' AND wait_kind = 'start'`
		a := NewArgs(d)
		q := `UPDATE {schema}.resume_runs SET detached = true,
				status = CASE WHEN ` + start + ` THEN 'pending' ELSE status END,
				wait_kind = CASE WHEN ` + start + ` THEN '' ELSE wait_kind END,
				wake_at = CASE WHEN ` + start + ` THEN ` + d.NoTime() + ` ELSE wake_at END,
				updated_at = ` + d.Now(a, s.cfg.Clock()) + `
			WHERE run_id = ` + a.Add(runID) + ` AND parent_run_id <> '' AND (NOT detached OR ` + start + `)`
		_, err := tx.Exec(ctx, d.Rebind(q), a.Values()...)
		return d.WriteErr(err)
	})
	if err != nil {
		return fmt.Errorf("run %s: detach child run: %w", runID, err)
	}
	return nil
}

// WakeParent makes run parentID pending if it waits for its children and
// none is pending, running or waiting any more, then its ancestors that
// wait for it (see journal.FanOut). It holds the parent's row first
// ([Store.LockRun]), as the parent's own FinishRun does before
// [Store.WaitOver]: what it reads after sees every child that finished
// before, so one of the two sees the last child done.
func (s *Store) WakeParent(ctx context.Context, parentID string) error {
	// A read first: while siblings still run (all but the last child's
	// call), nothing is locked. The last child's read, after its own
	// finish committed, sees every sibling's.
	s.cfg.Reads.Add(1)
	if done, err := s.childrenDone(ctx, s.cfg.Read, parentID); err != nil {
		return fmt.Errorf("run %s: wake after its children: %w", parentID, err)
	} else if !done {
		return nil
	}
	d := s.cfg.Dialect
	err := s.cfg.InTx(ctx, func(tx Executor) error {
		if err := s.LockRun(ctx, tx, parentID); err != nil {
			return err
		}
		done, err := s.childrenDone(ctx, tx, parentID)
		if err != nil || !done {
			return err
		}
		now := s.cfg.Clock()
		// wake makes runID pending if it waits as kind (for waitName, a
		// child's id, unless ""), and reports whether it did.
		wake := func(runID, kind, waitName string) (bool, error) {
			a := NewArgs(d)
			q := `UPDATE {schema}.resume_runs SET status = 'pending', wait_kind = '', wait_name = '', wake_at = ` + d.NoTime() +
				`, updated_at = ` + d.Now(a, now) + ` WHERE run_id = ` + a.Add(runID) +
				` AND status = 'waiting' AND wait_kind = ` + a.Add(kind)
			if waitName != "" {
				q += ` AND wait_name = ` + a.Add(waitName)
			}
			n, err := tx.Exec(ctx, d.Rebind(q), a.Values()...)
			return n > 0, d.WriteErr(err)
		}
		woke, err := wake(parentID, journal.WaitChildren, "")
		for child := parentID; woke && err == nil; {
			var parent string
			if err := tx.QueryRow(ctx, s.sql.parentOf, child).Scan(&parent); err != nil || parent == "" {
				return err
			}
			woke, err = wake(parent, journal.WaitChild, child)
			child = parent
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("run %s: wake after its children: %w", parentID, err)
	}
	return nil
}

// childrenDone reports whether no child run of runID is pending, running
// or waiting.
func (s *Store) childrenDone(ctx context.Context, q Executor, runID string) (bool, error) {
	var busy bool
	err := q.QueryRow(ctx, s.sql.childrenBusy, runID).Scan(&busy)
	return !busy, err
}

// LockRun holds run runID's row in tx until it ends, where the dialect
// locks rows ([Dialect.ForUpdate]); elsewhere the transaction holds the
// database's write lock already.
func (s *Store) LockRun(ctx context.Context, tx Executor, runID string) error {
	if s.sql.lockRun == "" {
		return nil
	}
	if _, err := tx.Exec(ctx, s.sql.lockRun, runID); err != nil {
		return fmt.Errorf("run %s: lock its row: %w", runID, s.cfg.Dialect.WriteErr(err))
	}
	return nil
}

// WaitOver reports whether run r, about to be stored waiting for what it
// says, has its wait over already: a signal of that name is kept for it
// (sent while it ran), the child it waits for no longer waits, or none
// of the children it waits for is pending, running or waiting. tx holds
// the run's row ([Store.LockRun]), so that a signal or a child's end
// that commits meanwhile either commits first and is seen here, or sees
// the run waiting and wakes it.
func (s *Store) WaitOver(ctx context.Context, tx Executor, r journal.RunRecord) (bool, error) {
	var over bool
	var err error
	switch r.WaitKind {
	case journal.WaitSignal:
		err = tx.QueryRow(ctx, s.sql.signalKept, r.RunID, r.WaitName).Scan(&over)
	case journal.WaitChild:
		err = tx.QueryRow(ctx, s.sql.childSettled, r.WaitName).Scan(&over)
	case journal.WaitChildren:
		over, err = s.childrenDone(ctx, tx, r.RunID)
	}
	if err != nil {
		return false, fmt.Errorf("run %s: is its wait (%s %s) over: %w", r.RunID, r.WaitKind, r.WaitName, err)
	}
	return over, nil
}

// TakeSignal writes await row st, fenced by l, and consumes signal seq
// (none for 0), in one transaction: either both are done, or neither.
func (s *Store) TakeSignal(ctx context.Context, l journal.Lease, seq int64, st journal.StepRecord) error {
	args, err := StepArgs(s.cfg.Dialect, l, st)
	if err == nil {
		err = s.cfg.InTx(ctx, func(tx Executor) error {
			if seq > 0 {
				if err := s.ConsumeSignal(ctx, tx, st.RunID, st.StepKey, st.Name, seq); err != nil {
					return err
				}
			}
			n, err := tx.Exec(ctx, s.sql.writeStep, args...)
			if err != nil {
				return s.cfg.Dialect.WriteErr(err)
			}
			return LeaseHeld(n, l)
		})
	}
	if err != nil {
		return fmt.Errorf("run %s, await %s: %w", st.RunID, st.StepKey, err)
	}
	return nil
}
