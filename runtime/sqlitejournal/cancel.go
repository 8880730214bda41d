package sqlitejournal

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/resumegen/resumegen/runtime/journal"
)

// Cancellation (journal.Journal.Cancel): a run that can unwind is asked
// to stop (cancel_requested_at), with its unfinished descendants; one
// that cannot is cancelled at once.

// descendants is the run ?2 and every run below it, by parent_run_id.
const descendants = `WITH RECURSIVE down(id) AS (
		SELECT ?2
		UNION SELECT r.run_id FROM resume_runs r JOIN down ON r.parent_run_id = down.id)`

const (
	// cancelNow cancels run ?2 and its unfinished descendants at once, and
	// moves their leases on: no process writes them any more.
	cancelNow = descendants + `
		UPDATE resume_runs SET status = 'cancelled', lease_owner = '', lease_until = '', epoch = epoch + 1,
			wait_kind = '', wait_name = '', wake_at = '', updated_at = ?1
		WHERE run_id = ?2 OR (run_id IN (SELECT id FROM down) AND status IN ('pending', 'running', 'waiting', 'needs_attention'))`
	// askToStop sets cancel_requested_at (?3, the journal's clock) on run
	// ?2 and its descendants that can unwind; those that need a person
	// cannot, and are cancelled at once (cancelParked).
	askToStop = descendants + `
		UPDATE resume_runs SET cancel_requested_at = ?3, updated_at = ?1
		WHERE run_id IN (SELECT id FROM down) AND status IN ('pending', 'running', 'waiting') AND cancel_requested_at = ''`
	cancelParked = descendants + `
		UPDATE resume_runs SET status = 'cancelled', lease_owner = '', lease_until = '', epoch = epoch + 1, updated_at = ?1
		WHERE run_id IN (SELECT id FROM down) AND run_id <> ?2 AND status = 'needs_attention'`
	// wakeToStop makes run ?2 pending if it waits: it unwinds now, not
	// when its wait ends.
	wakeToStop = `UPDATE resume_runs SET status = 'pending', wait_kind = '', wait_name = '', wake_at = '', updated_at = ?1
		WHERE run_id = ?2 AND status = 'waiting'`
	// wakeWaiters makes pending the ancestors of run ?2 that wait for it,
	// each for the run below it ('child'): the one at the top is claimed,
	// and drives the runs below it to their end.
	wakeWaiters = `WITH RECURSIVE up(id, child) AS (
			SELECT parent_run_id, run_id FROM resume_runs WHERE run_id = ?2 AND parent_run_id <> ''
			UNION SELECT r.parent_run_id, r.run_id FROM resume_runs r JOIN up ON r.run_id = up.id WHERE r.parent_run_id <> '')
		UPDATE resume_runs SET status = 'pending', wait_kind = '', wait_name = '', wake_at = '', updated_at = ?1
		WHERE status = 'waiting' AND wait_kind = 'child' AND EXISTS (SELECT 1 FROM up WHERE up.id = resume_runs.run_id AND up.child = resume_runs.wait_name)`
	// wakeParked makes pending the runs parked for child run ?2 (see
	// wakeParents).
	wakeParked = `WITH RECURSIVE up(id) AS (
			SELECT parent_run_id FROM resume_runs WHERE run_id = ?2 AND parent_run_id <> ''
			UNION SELECT r.parent_run_id FROM resume_runs r JOIN up ON r.run_id = up.id WHERE r.parent_run_id <> '')
		UPDATE resume_runs SET status = 'pending', error = '', attention_step = '', attention_kind = '', updated_at = ?1
		WHERE run_id IN (SELECT id FROM up) AND status = 'needs_attention' AND attention_kind = 'child'`
)

// Cancel stops an unfinished run, in one transaction: it asks a run that
// can unwind to (with its descendants), and cancels one that cannot at
// once (see journal.Journal.Cancel).
func (j *Journal) Cancel(ctx context.Context, runID string, opts journal.CancelOptions) error {
	return j.inTx(ctx, func(tx *sql.Tx) error {
		r, err := j.run(ctx, tx, runID)
		if err != nil {
			return err
		}
		t := j.clock()
		switch {
		case r.Status == journal.StatusSucceeded || r.Status == journal.StatusCancelled:
			return fmt.Errorf("run %s is already %s: %w", runID, r.Status, journal.ErrRunBusy)
		case !r.CancelRequested.IsZero():
			return nil // asked already: it is unwinding
		case r.Status == journal.StatusRunning && r.LeaseUntil.After(t) && !opts.Running:
			return fmt.Errorf("run %s is running under %s until %s: %w", runID, r.LeaseOwner, r.LeaseUntil.UTC().Format(time.RFC3339), journal.ErrRunBusy)
		}
		// A running run is asked, always: its process may be executing a
		// step, whose outcome it journals before it stops.
		unwinds := r.Status == journal.StatusRunning
		if r.Status == journal.StatusPending || r.Status == journal.StatusWaiting {
			j.reads.Add(1)
			if err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM resume_steps WHERE run_id = ?1)
				OR EXISTS (SELECT 1 FROM resume_runs WHERE parent_run_id = ?1)`, runID).Scan(&unwinds); err != nil {
				return fmt.Errorf("run %s: cancel: %w", runID, err)
			}
		}
		stmts := []string{cancelNow, wakeParked, wakeWaiters}
		if unwinds {
			stmts = []string{askToStop, cancelParked, wakeToStop, wakeWaiters}
		}
		for _, s := range stmts {
			args := []any{ts(time.Now()), runID}
			if strings.Contains(s, "?3") {
				args = append(args, ts(t))
			}
			if _, err := tx.ExecContext(ctx, s, args...); err != nil {
				return fmt.Errorf("run %s: cancel: %w", runID, writeLock(err))
			}
		}
		return j.recordAction(ctx, tx, runID)
	})
}

// CancelRequested reads the run's cancel_requested_at.
func (j *Journal) CancelRequested(ctx context.Context, runID string) (time.Time, error) {
	var at string
	j.reads.Add(1)
	err := j.read.QueryRowContext(ctx, `SELECT cancel_requested_at FROM resume_runs WHERE run_id = ?`, runID).Scan(&at)
	if errors.Is(err, sql.ErrNoRows) {
		return time.Time{}, fmt.Errorf("run %s: %w", runID, journal.ErrRunNotFound)
	}
	if err != nil {
		return time.Time{}, fmt.Errorf("run %s: read whether it was cancelled: %w", runID, err)
	}
	if at == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(timeFormat, at)
	if err != nil {
		return time.Time{}, fmt.Errorf("run %s: cancel_requested_at %q is not a timestamp: %w", runID, at, err)
	}
	return t, nil
}
