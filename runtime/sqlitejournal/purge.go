package sqlitejournal

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/resumegen/resumegen/runtime/journal"
)

// Retention (journal.Purger): old runs are deleted in batches, each in a
// short transaction of the one writer connection, so that a worker's
// step write waits for one batch at most.

var _ journal.Purger = (*Journal)(nil)

// purgeQualifies is the condition on r, a run of resume_runs, that makes
// it purgeable beyond its status, age and workflow (see journal.Purger):
// a top-level run (or one whose parent is gone), nothing below it
// unfinished, no kept signal that a failed or parked run of its tree may
// still await, not a schedule's last tick run nor a later one.
const purgeQualifies = `
	AND (r.parent_run_id = '' OR NOT EXISTS (SELECT 1 FROM resume_runs p WHERE p.run_id = r.parent_run_id))
	AND NOT EXISTS (
		WITH RECURSIVE down(id) AS (
			SELECT c.run_id FROM resume_runs c WHERE c.parent_run_id = r.run_id AND c.parent_run_id <> ''
			UNION SELECT c.run_id FROM resume_runs c JOIN down ON c.parent_run_id = down.id WHERE c.parent_run_id <> '')
		SELECT 1 FROM down JOIN resume_runs d ON d.run_id = down.id
		WHERE d.status NOT IN ('succeeded', 'failed', 'cancelled')
			OR (d.status = 'failed' AND EXISTS (SELECT 1 FROM resume_signals g WHERE g.run_id = d.run_id AND g.consumed_key = '')))
	AND NOT (r.status IN ('failed', 'needs_attention') AND EXISTS (SELECT 1 FROM resume_signals g WHERE g.run_id = r.run_id AND g.consumed_key = ''))
	AND NOT EXISTS (SELECT 1 FROM resume_schedules s
		WHERE substr(r.run_id, 1, length(s.name) + 1) = s.name || '@'
			AND (s.last_tick = '' OR replace(substr(r.run_id, length(s.name) + 2), 'Z', '.000000Z') >= s.last_tick))`

// purgeWhere is the WHERE clause (and its arguments) of the runs req
// selects, cut off at the journal's clock minus req.OlderThan.
func (j *Journal) purgeWhere(req journal.PurgeRequest) (string, []any) {
	cut := ts(j.clock().Add(-req.OlderThan))
	var b strings.Builder
	args := []any{cut, cut}
	b.WriteString(`WHERE r.created_at <= ? AND r.updated_at <= ? AND r.status IN (`)
	for i, s := range req.Statuses {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("?")
		args = append(args, string(s))
	}
	b.WriteString(")")
	if req.Workflow != "" {
		b.WriteString(" AND r.workflow = ?")
		args = append(args, req.Workflow)
	}
	for _, w := range req.Except {
		b.WriteString(" AND r.workflow <> ?")
		args = append(args, w)
	}
	b.WriteString(purgeQualifies)
	return b.String(), args
}

// Purge deletes up to req.Batch() top-level runs that qualify, with
// their child runs, in one transaction; with req.DryRun it counts every
// qualifying run instead, on a reader connection (see journal.Purger).
func (j *Journal) Purge(ctx context.Context, req journal.PurgeRequest) (journal.PurgeResult, error) {
	if err := req.Check(); err != nil {
		return journal.PurgeResult{}, fmt.Errorf("sqlitejournal: %w", err)
	}
	where, args := j.purgeWhere(req)
	var res journal.PurgeResult
	if req.DryRun {
		j.reads.Add(1)
		var total int
		err := j.read.QueryRowContext(ctx, `WITH RECURSIVE roots(id) AS (SELECT r.run_id FROM resume_runs r `+where+`),
			down(id) AS (SELECT id FROM roots UNION ALL SELECT c.run_id FROM resume_runs c JOIN down ON c.parent_run_id = down.id WHERE c.parent_run_id <> '')
			SELECT (SELECT count(*) FROM roots), (SELECT count(*) FROM down)`, args...).Scan(&res.Runs, &total)
		if err != nil {
			return res, fmt.Errorf("sqlitejournal: purge (dry run): count: %w", err)
		}
		res.Children = total - res.Runs
		return res, nil
	}
	err := j.inTx(ctx, func(tx *sql.Tx) error {
		res = journal.PurgeResult{}
		rows, err := tx.QueryContext(ctx, `SELECT r.run_id FROM resume_runs r `+where+`
			ORDER BY r.created_at, r.run_id LIMIT ?`, append(args, req.Batch())...)
		if err != nil {
			return fmt.Errorf("select runs: %w", err)
		}
		var roots []string
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return fmt.Errorf("select runs: %w", err)
			}
			roots = append(roots, id)
		}
		if err := rows.Close(); err != nil {
			return fmt.Errorf("select runs: %w", err)
		}
		if err := rows.Err(); err != nil {
			return fmt.Errorf("select runs: %w", err)
		}
		if len(roots) == 0 {
			return nil
		}
		ids, err := json.Marshal(roots)
		if err != nil {
			return fmt.Errorf("encode run ids: %w", err)
		}
		// The trees, materialized once: every delete reads the same set.
		if _, err := tx.ExecContext(ctx, `CREATE TEMP TABLE IF NOT EXISTS resume_purge (run_id TEXT PRIMARY KEY) WITHOUT ROWID`); err != nil {
			return fmt.Errorf("purge set: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM resume_purge`); err != nil {
			return fmt.Errorf("purge set: %w", err)
		}
		set, err := tx.ExecContext(ctx, `INSERT INTO resume_purge (run_id)
			WITH RECURSIVE down(id) AS (SELECT value FROM json_each(?1)
				UNION SELECT c.run_id FROM resume_runs c JOIN down ON c.parent_run_id = down.id WHERE c.parent_run_id <> '')
			SELECT id FROM down`, string(ids))
		if err != nil {
			return fmt.Errorf("purge set: %w", err)
		}
		total, _ := set.RowsAffected()
		for _, d := range []struct {
			table string
			n     *int
		}{{"resume_steps", &res.Steps}, {"resume_signals", &res.Signals}, {"resume_runs", nil}} {
			r, err := tx.ExecContext(ctx, `DELETE FROM `+d.table+` WHERE run_id IN (SELECT run_id FROM resume_purge)`)
			if err != nil {
				return fmt.Errorf("delete from %s: %w", d.table, err)
			}
			if d.n != nil {
				n, _ := r.RowsAffected()
				*d.n = int(n)
			}
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM resume_purge`); err != nil {
			return fmt.Errorf("purge set: %w", err)
		}
		res.Runs, res.Children = len(roots), int(total)-len(roots)
		return nil
	})
	if err != nil {
		return journal.PurgeResult{}, fmt.Errorf("sqlitejournal: purge: %w", writeLock(err))
	}
	return res, nil
}
