package pgjournal

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/resumegen/resumegen/runtime/journal"
)

// Fan-out (journal.FanOut): child runs any worker claims, and a parent
// that waits for them all.

var _ journal.FanOut = (*Journal)(nil)

// Detach makes child run runID, created waiting to start by its parent,
// pending and claimable by any worker (see journal.FanOut). Its status
// trigger notifies idle workers.
func (j *Journal) Detach(ctx context.Context, runID string) error {
	_, err := j.pool.Exec(ctx, qualify(`UPDATE {schema}.resume_runs SET detached = true,
			status = CASE WHEN status = 'waiting' AND wait_kind = 'start' THEN 'pending' ELSE status END,
			wake_at = CASE WHEN status = 'waiting' AND wait_kind = 'start' THEN NULL ELSE wake_at END,
			wait_kind = CASE WHEN status = 'waiting' AND wait_kind = 'start' THEN '' ELSE wait_kind END,
			updated_at = clock_timestamp()
		WHERE run_id = $1 AND parent_run_id <> '' AND (NOT detached OR status = 'waiting' AND wait_kind = 'start')`, j.schema), runID)
	if err != nil {
		return fmt.Errorf("run %s: detach child run: %w", runID, err)
	}
	return nil
}

// WakeParent makes run parentID pending if it waits for its children and
// none is pending, running or waiting any more, then its ancestors that
// wait for it (see journal.FanOut). It locks the parent's row first, as
// the parent's own FinishRun does (finishWaiting): the statement after
// the lock sees every child that finished before, so one of the two sees
// the last child done.
func (j *Journal) WakeParent(ctx context.Context, parentID string) error {
	q := func(sql string) string { return qualify(sql, j.schema) }
	const set = `UPDATE {schema}.resume_runs SET status = 'pending', wait_kind = '', wait_name = '', wake_at = NULL, updated_at = clock_timestamp()`
	// A read first: while siblings still run (all but the last child's
	// call), no row is locked. The last child's read, after its own
	// finish committed, sees every sibling's.
	j.reads.Add(1)
	if done, err := j.childrenDone(ctx, j.pool, parentID); err != nil {
		return fmt.Errorf("run %s: wake after its children: %w", parentID, err)
	} else if !done {
		return nil
	}
	err := j.inTx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, q(`SELECT 1 FROM {schema}.resume_runs WHERE run_id = $1 FOR UPDATE`), parentID); err != nil {
			return err
		}
		done, err := j.childrenDone(ctx, tx, parentID)
		if err != nil || !done {
			return err
		}
		tag, err := tx.Exec(ctx, q(set+` WHERE run_id = $1 AND status = 'waiting' AND wait_kind = 'children'`), parentID)
		if err != nil {
			return err
		}
		for child := parentID; tag.RowsAffected() > 0; {
			var parent string
			if err := tx.QueryRow(ctx, q(`SELECT parent_run_id FROM {schema}.resume_runs WHERE run_id = $1`), child).Scan(&parent); err != nil || parent == "" {
				return err
			}
			if tag, err = tx.Exec(ctx, q(set+` WHERE run_id = $1 AND status = 'waiting' AND wait_kind = 'child' AND wait_name = $2`), parent, child); err != nil {
				return err
			}
			child = parent
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("run %s: wake after its children: %w", parentID, err)
	}
	return nil
}

// childrenDone reports whether no child run of runID is pending, running
// or waiting.
func (j *Journal) childrenDone(ctx context.Context, q querier, runID string) (bool, error) {
	var busy bool
	err := q.QueryRow(ctx, qualify(`SELECT EXISTS (SELECT 1 FROM {schema}.resume_runs
		WHERE parent_run_id = $1 AND status IN ('pending', 'running', 'waiting'))`, j.schema), runID).Scan(&busy)
	return !busy, err
}

// Detached returns those of runIDs that are detached child runs.
func (j *Journal) Detached(ctx context.Context, runIDs []string) (map[string]bool, error) {
	j.reads.Add(1)
	rows, err := j.pool.Query(ctx, qualify(`SELECT run_id FROM {schema}.resume_runs WHERE detached AND run_id = ANY($1::text[])`, j.schema), runIDs)
	if err != nil {
		return nil, fmt.Errorf("detached child runs: %w", err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("detached child runs: %w", err)
	}
	out := make(map[string]bool, len(ids))
	for _, id := range ids {
		out[id] = true
	}
	return out, nil
}
