package sqlitejournal

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/resumegen/resumegen/runtime/internal/sqljournal"
	"github.com/resumegen/resumegen/runtime/journal"
)

var _ journal.Queuer = (*Journal)(nil)

// ConfigureQueues stores the limits of qs as owner's (journal.Queuer).
func (j *Journal) ConfigureQueues(ctx context.Context, owner string, qs []journal.QueueLimits) ([]journal.QueueStats, error) {
	return j.store.ConfigureQueues(ctx, owner, qs, j.clock())
}

// ListQueues lists the queues with limits or unfinished runs
// (journal.Queuer).
func (j *Journal) ListQueues(ctx context.Context) ([]journal.QueueStats, error) {
	return j.store.ListQueues(ctx, j.clock())
}

// claimQueued claims up to max runs of the queues c lists, within their
// limits, in tx (which holds the write lock: no other claim decides at
// the same time) at the journal's time t, one queue after another.
func (j *Journal) claimQueued(ctx context.Context, tx *sql.Tx, c journal.ClaimNextRequest, t time.Time, max int) ([]journal.ClaimedRun, error) {
	var out []journal.ClaimedRun
	for _, q := range c.Queues {
		if len(out) >= max {
			break
		}
		if ready, err := j.store.QueueReady(ctx, executor{tx}, q, t); err != nil || !ready {
			if err != nil {
				return nil, err
			}
			continue
		}
		st, err := j.store.QueueState(ctx, executor{tx}, q, t)
		if err != nil {
			return nil, err
		}
		picked, err := sqljournal.Pick(ctx, executor{tx}, q, st, max-len(out), j.queueCandidates(c, t))
		if err != nil {
			return nil, fmt.Errorf("queue %s: %w", q, err)
		}
		if len(picked) == 0 {
			continue
		}
		args := []any{c.Owner, ts(t.Add(c.Lease)), ts(t)}
		for _, p := range picked {
			args = append(args, p.RunID)
		}
		rows, err := tx.QueryContext(ctx, `UPDATE resume_runs SET
				status = 'running', attempts = attempts + 1, epoch = epoch + 1,
				lease_owner = ?1, lease_until = ?2, updated_at = ?3, error = '', attention_step = '', attention_kind = '',
				started_at = CASE WHEN status = 'pending' OR wait_kind = 'start' THEN ?3 ELSE started_at END,
				wait_kind = '', wait_name = '', wake_at = CASE WHEN status = 'waiting' THEN wake_at ELSE '' END
			WHERE run_id IN (?4`+strings.Repeat(", ?", len(picked)-1)+`)
				AND (status = 'pending' OR `+strings.Replace(waitDue, "?", "?3", 1)+`)
			RETURNING `+runColumns, args...)
		if err != nil {
			return nil, fmt.Errorf("queue %s: claim: %w", q, writeLock(err))
		}
		for rows.Next() {
			r, err := scanRun(rows)
			if err != nil {
				rows.Close()
				return nil, fmt.Errorf("queue %s: claim: %w", q, err)
			}
			out = append(out, journal.ClaimedRun{Run: r})
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("queue %s: claim: %w", q, err)
		}
	}
	return out, nil
}

// queueCandidates lists a queue's claimable runs of c's workflows and
// versions (sqljournal.QueueCandidates): due waiting runs, earliest due
// first, then pending ones by priority and age (resume_runs_by_queue
// yields them in that order; the queue <> ” repeated lets SQLite use the
// partial index).
func (j *Journal) queueCandidates(c journal.ClaimNextRequest, t time.Time) sqljournal.QueueCandidates {
	return func(ctx context.Context, tx sqljournal.Executor, q string, full, taken []string, pending bool, n int) ([]sqljournal.QueueCandidate, error) {
		mine, versionsOK, vargs := claimVersions(c, t)
		cond := `queue = ? AND queue <> '' AND (parent_run_id = '' OR detached = 1)
				AND workflow IN (?` + strings.Repeat(", ?", len(c.Workflows)-1) + `)` + versionsOK
		args := []any{q}
		for _, w := range c.Workflows {
			args = append(args, w)
		}
		for _, not := range []struct {
			col  string
			vals []string
		}{{"queue_key", full}, {"run_id", taken}} {
			if len(not.vals) > 0 {
				cond += ` AND ` + not.col + ` NOT IN (?` + strings.Repeat(", ?", len(not.vals)-1) + `)`
				for _, v := range not.vals {
					args = append(args, v)
				}
			}
		}
		var out []sqljournal.QueueCandidate
		read := func(query string, args []any) error {
			rows, err := tx.Query(ctx, query, args...)
			if err != nil {
				return err
			}
			defer rows.Close()
			for rows.Next() {
				var c sqljournal.QueueCandidate
				if err := rows.Scan(&c.RunID, &c.Key, &c.Start); err != nil {
					return err
				}
				out = append(out, c)
			}
			return rows.Err()
		}
		limit := fmt.Sprint(n)
		if err := read(mine+`SELECT run_id, queue_key, wait_kind = 'start' FROM resume_runs
				WHERE `+waitDue+` AND `+cond+` ORDER BY wake_at LIMIT `+limit, append(append(vargs[:len(vargs):len(vargs)], ts(t)), args...)); err != nil {
			return nil, err
		}
		if !pending || len(out) >= n {
			return out, nil
		}
		limit = fmt.Sprint(n - len(out))
		if err := read(mine+`SELECT run_id, queue_key, 1 FROM resume_runs
				WHERE status = 'pending' AND `+cond+` ORDER BY priority DESC, created_at, run_id LIMIT `+limit, append(vargs[:len(vargs):len(vargs)], args...)); err != nil {
			return nil, err
		}
		return out, nil
	}
}
