package sqljournal

import (
	"context"
	"fmt"
	"time"

	"github.com/resumegen/resumegen/runtime/journal"
)

// Cancellation (journal.Journal.Cancel): a run that can unwind is asked
// to stop (cancel_requested_at), with its unfinished descendants; one
// that cannot is cancelled at once.

// cancelStmt is one statement of a cancellation of run id, written with
// a's placeholders id and now (the time of updated_at); none is no time
// as the dialect writes it (Dialect.NoTime), clock the journal's clock.
type cancelStmt func(d Dialect, a *Args, id, now, none string, clock time.Time) string

// descendants is the run id and every run below it, by parent_run_id.
func descendants(id string) string {
	return `WITH RECURSIVE down(id) AS (
		SELECT CAST(` + id + ` AS text)
		UNION SELECT r.run_id FROM {schema}.resume_runs r JOIN down ON r.parent_run_id = down.id)`
}

var (
	// cancelNow cancels the run and its unfinished descendants at once,
	// and moves their leases on: no process writes them any more.
	cancelNow cancelStmt = func(_ Dialect, _ *Args, id, now, none string, _ time.Time) string {
		return descendants(id) + `
		UPDATE {schema}.resume_runs SET status = 'cancelled', lease_owner = '', lease_until = ` + none + `, epoch = epoch + 1,
			wait_kind = '', wait_name = '', wake_at = ` + none + `, updated_at = ` + now + `
		WHERE run_id = ` + id + ` OR (run_id IN (SELECT id FROM down) AND status IN ('pending', 'running', 'waiting', 'needs_attention'))`
	}
	// askToStop sets cancel_requested_at, by the journal's clock, on the
	// run and its descendants that can unwind; those that need a person
	// cannot, and are cancelled at once (cancelParked).
	askToStop cancelStmt = func(d Dialect, a *Args, id, now, _ string, clock time.Time) string {
		return descendants(id) + `
		UPDATE {schema}.resume_runs SET cancel_requested_at = ` + d.Now(a, clock) + `, updated_at = ` + now + `
		WHERE run_id IN (SELECT id FROM down) AND status IN ('pending', 'running', 'waiting') AND ` + d.Unset("cancel_requested_at")
	}
	cancelParked cancelStmt = func(_ Dialect, _ *Args, id, now, none string, _ time.Time) string {
		return descendants(id) + `
		UPDATE {schema}.resume_runs SET status = 'cancelled', lease_owner = '', lease_until = ` + none + `, epoch = epoch + 1, updated_at = ` + now + `
		WHERE run_id IN (SELECT id FROM down) AND run_id <> ` + id + ` AND status = 'needs_attention'`
	}
	// wakeToStop makes the run pending if it waits: it unwinds now, not
	// when its wait ends.
	wakeToStop cancelStmt = func(_ Dialect, _ *Args, id, now, none string, _ time.Time) string {
		return `UPDATE {schema}.resume_runs SET status = 'pending', wait_kind = '', wait_name = '', wake_at = ` + none + `, updated_at = ` + now + `
		WHERE run_id = ` + id + ` AND status = 'waiting'`
	}
	// wakeWaiters makes pending the ancestors of the run that wait for it,
	// each for the run below it ('child'): the one at the top is claimed,
	// and drives the runs below it to their end.
	wakeWaiters cancelStmt = func(_ Dialect, _ *Args, id, now, none string, _ time.Time) string {
		return `WITH RECURSIVE up(id, child) AS (
			SELECT parent_run_id, run_id FROM {schema}.resume_runs WHERE run_id = ` + id + ` AND parent_run_id <> ''
			UNION SELECT r.parent_run_id, r.run_id FROM {schema}.resume_runs r JOIN up ON r.run_id = up.id WHERE r.parent_run_id <> '')
		UPDATE {schema}.resume_runs SET status = 'pending', wait_kind = '', wait_name = '', wake_at = ` + none + `, updated_at = ` + now + `
		WHERE status = 'waiting' AND wait_kind = 'child'
			AND EXISTS (SELECT 1 FROM up WHERE up.id = resume_runs.run_id AND up.child = resume_runs.wait_name)`
	}
	// wakeParked makes pending the runs parked for the run (see
	// Store.settled).
	wakeParked cancelStmt = func(_ Dialect, _ *Args, id, now, _ string, _ time.Time) string {
		return `WITH RECURSIVE up(id) AS (
				SELECT parent_run_id FROM {schema}.resume_runs WHERE run_id = ` + id + ` AND parent_run_id <> ''
				UNION SELECT r.parent_run_id FROM {schema}.resume_runs r JOIN up ON r.run_id = up.id WHERE r.parent_run_id <> '')
			UPDATE {schema}.resume_runs SET status = 'pending', error = '', attention_step = '', attention_kind = '', updated_at = ` + now + `
			WHERE run_id IN (SELECT id FROM up) AND status = 'needs_attention' AND attention_kind = 'child'`
	}
)

// Cancel stops an unfinished run, in one transaction holding its row: it
// asks a run that can unwind to (with its descendants), and cancels one
// that cannot at once (see journal.Journal.Cancel).
func (s *Store) Cancel(ctx context.Context, runID string, opts journal.CancelOptions) error {
	d := s.cfg.Dialect
	return s.cfg.InTx(ctx, func(tx Executor) error {
		r, err := s.run(ctx, tx, runID)
		if err != nil {
			return err
		}
		clock := s.cfg.Clock()
		switch {
		case r.Status == journal.StatusSucceeded || r.Status == journal.StatusCancelled:
			return fmt.Errorf("run %s is already %s: %w", runID, r.Status, journal.ErrRunBusy)
		case !r.CancelRequested.IsZero():
			return nil // asked already: it is unwinding
		case r.Status == journal.StatusRunning && r.LeaseUntil.After(clock) && !opts.Running:
			return fmt.Errorf("run %s is running under %s until %s: %w", runID, r.LeaseOwner, r.LeaseUntil.UTC().Format(time.RFC3339), journal.ErrRunBusy)
		}
		// A running run is asked, always: its process may be executing a
		// step, whose outcome it journals before it stops.
		unwinds := r.Status == journal.StatusRunning
		if r.Status == journal.StatusPending || r.Status == journal.StatusWaiting {
			// Has it something to unwind: a step journaled, a child run
			// started?
			s.cfg.Reads.Add(1)
			if err := tx.QueryRow(ctx, s.sql.unwindable, runID).Scan(&unwinds); err != nil {
				return fmt.Errorf("run %s: cancel: %w", runID, err)
			}
		}
		stmts := []cancelStmt{cancelNow, wakeParked, wakeWaiters}
		if unwinds {
			stmts = []cancelStmt{askToStop, cancelParked, wakeToStop, wakeWaiters}
		}
		updated := time.Now()
		for _, stmt := range stmts {
			a := NewArgs(d)
			id, now := a.Add(runID), a.Add(d.Time(updated))
			q := stmt(d, a, id, now, d.NoTime(), clock)
			if _, err := tx.Exec(ctx, d.Rebind(q), a.Values()...); err != nil {
				return fmt.Errorf("run %s: cancel: %w", runID, d.WriteErr(err))
			}
		}
		return s.RecordAction(ctx, tx, runID)
	})
}

// CancelRequested reads the run's cancel_requested_at.
func (s *Store) CancelRequested(ctx context.Context, runID string) (time.Time, error) {
	var at any
	s.cfg.Reads.Add(1)
	err := s.cfg.Read.QueryRow(ctx, s.sql.cancelRequested, runID).Scan(&at)
	if s.cfg.Dialect.NoRows(err) {
		return time.Time{}, fmt.Errorf("run %s: %w", runID, journal.ErrRunNotFound)
	}
	if err != nil {
		return time.Time{}, fmt.Errorf("run %s: read whether it was cancelled: %w", runID, err)
	}
	t, err := s.cfg.Dialect.ScanTime(at)
	if err != nil {
		return time.Time{}, fmt.Errorf("run %s: cancel_requested_at: %w", runID, err)
	}
	return t, nil
}
