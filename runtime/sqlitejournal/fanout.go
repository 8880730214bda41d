package sqlitejournal

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/resumegen/resumegen/runtime/journal"
)

// Fan-out (journal.FanOut): child runs any worker claims, and a parent
// that waits for them all.

var _ journal.FanOut = (*Journal)(nil)

// Detach makes child run runID, created waiting to start by its parent,
// pending and claimable by any worker (see journal.FanOut).
func (j *Journal) Detach(ctx context.Context, runID string) error {
	err := j.inTx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE resume_runs SET detached = 1,
				status = CASE WHEN status = 'waiting' AND wait_kind = 'start' THEN 'pending' ELSE status END,
				wait_kind = CASE WHEN status = 'waiting' AND wait_kind = 'start' THEN '' ELSE wait_kind END,
				wake_at = CASE WHEN status = 'waiting' AND wait_kind = 'start' THEN '' ELSE wake_at END,
				updated_at = ?
			WHERE run_id = ? AND parent_run_id <> '' AND (detached = 0 OR status = 'waiting' AND wait_kind = 'start')`,
			ts(j.clock()), runID)
		return writeLock(err)
	})
	if err != nil {
		return fmt.Errorf("run %s: detach child run: %w", runID, err)
	}
	return nil
}

// WakeParent makes run parentID pending if it waits for its children and
// none is pending, running or waiting any more, then its ancestors that
// wait for it (see journal.FanOut). The one writer connection orders it
// with the parent's own FinishRun, which checks the same in its commit:
// one of the two sees the last child done.
func (j *Journal) WakeParent(ctx context.Context, parentID string) error {
	// A read first: while siblings still run (all but the last child's
	// call), no write is queued. The last child's read, after its own
	// finish committed, sees every sibling's.
	j.reads.Add(1)
	if done, err := childrenDone(ctx, j.read, parentID); err != nil {
		return fmt.Errorf("run %s: wake after its children: %w", parentID, err)
	} else if !done {
		return nil
	}
	err := j.inTx(ctx, func(tx *sql.Tx) error {
		now := ts(j.clock())
		res, err := tx.ExecContext(ctx, `UPDATE resume_runs SET status = 'pending', wait_kind = '', wait_name = '', wake_at = '', updated_at = ?
			WHERE run_id = ? AND status = 'waiting' AND wait_kind = 'children'
			AND NOT EXISTS (SELECT 1 FROM resume_runs c WHERE c.parent_run_id = ?2 AND c.status IN ('pending', 'running', 'waiting'))`,
			now, parentID)
		if err != nil {
			return writeLock(err)
		}
		for child := parentID; ; {
			if n, _ := res.RowsAffected(); n == 0 {
				return nil
			}
			var parent string
			if err := tx.QueryRowContext(ctx, `SELECT parent_run_id FROM resume_runs WHERE run_id = ?`, child).Scan(&parent); err != nil || parent == "" {
				return err
			}
			res, err = tx.ExecContext(ctx, `UPDATE resume_runs SET status = 'pending', wait_kind = '', wait_name = '', wake_at = '', updated_at = ?
				WHERE run_id = ? AND status = 'waiting' AND wait_kind = 'child' AND wait_name = ?`, now, parent, child)
			if err != nil {
				return writeLock(err)
			}
			child = parent
		}
	})
	if err != nil {
		return fmt.Errorf("run %s: wake after its children: %w", parentID, err)
	}
	return nil
}

// childrenDone reports whether no child run of runID is pending, running
// or waiting.
func childrenDone(ctx context.Context, q querier, runID string) (bool, error) {
	var n int
	err := q.QueryRowContext(ctx, `SELECT count(*) FROM resume_runs WHERE parent_run_id = ? AND status IN ('pending', 'running', 'waiting')`, runID).Scan(&n)
	return n == 0, err
}

// Detached returns those of runIDs that are detached child runs.
func (j *Journal) Detached(ctx context.Context, runIDs []string) (map[string]bool, error) {
	out := map[string]bool{}
	for len(runIDs) > 0 {
		n := min(len(runIDs), 500)
		args := make([]any, n)
		for i, id := range runIDs[:n] {
			args[i] = id
		}
		runIDs = runIDs[n:]
		j.reads.Add(1)
		rows, err := j.read.QueryContext(ctx, `SELECT run_id FROM resume_runs WHERE detached = 1 AND run_id IN (?`+strings.Repeat(", ?", n-1)+`)`, args...)
		if err != nil {
			return nil, fmt.Errorf("detached child runs: %w", err)
		}
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return nil, fmt.Errorf("detached child runs: %w", err)
			}
			out[id] = true
		}
		if err := rows.Close(); err != nil {
			return nil, fmt.Errorf("detached child runs: %w", err)
		}
	}
	return out, nil
}
