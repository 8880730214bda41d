package sqlitejournal

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/resumegen/resumegen/runtime/journal"
)

// recordAction inserts the operator's action ctx carries
// (journal.WithAction), if any, for run runID, in tx: it commits with the
// action or not at all.
func (j *Journal) recordAction(ctx context.Context, tx *sql.Tx, runID string) error {
	a, ok := journal.ActionOf(ctx)
	if !ok {
		return nil
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO resume_actions (run_id, seq, action, detail, actor, origin, via, at)
		SELECT ?, COALESCE(MAX(seq), 0) + 1, ?, ?, ?, ?, ?, ? FROM resume_actions WHERE run_id = ?`,
		runID, a.Action, a.Detail, a.Actor, a.Origin, a.Via, ts(j.clock()), runID)
	if err != nil {
		return fmt.Errorf("run %s: record the operator's %s: %w", runID, a.Action, writeLock(err))
	}
	return nil
}

// ListActions lists the operators' actions on run runID, oldest first
// (journal.Auditor).
func (j *Journal) ListActions(ctx context.Context, runID string) ([]journal.ActionRecord, error) {
	j.reads.Add(1)
	rows, err := j.read.QueryContext(ctx, `SELECT seq, action, detail, actor, origin, via, at FROM resume_actions
		WHERE run_id = ? ORDER BY seq`, runID)
	if err != nil {
		return nil, fmt.Errorf("run %s: list actions: %w", runID, err)
	}
	defer rows.Close()
	var out []journal.ActionRecord
	for rows.Next() {
		a := journal.ActionRecord{RunID: runID}
		var at string
		if err := rows.Scan(&a.Seq, &a.Action, &a.Detail, &a.Actor, &a.Origin, &a.Via, &at); err != nil {
			return nil, fmt.Errorf("run %s: list actions: %w", runID, err)
		}
		a.At, _ = time.Parse(timeFormat, at)
		out = append(out, a)
	}
	return out, rows.Err()
}

// RecordKeys notes the ids of the keys that seal the journal's values
// (journal.KeyRegistry); an id seen before keeps its time.
func (j *Journal) RecordKeys(ctx context.Context, ids []string) error {
	return j.inTx(ctx, func(tx *sql.Tx) error {
		now := ts(j.clock())
		for _, id := range ids {
			if _, err := tx.ExecContext(ctx, `INSERT INTO resume_keys (key_id, first_sealed_at) VALUES (?, ?) ON CONFLICT (key_id) DO NOTHING`, id, now); err != nil {
				return fmt.Errorf("record sealing key %q: %w", id, writeLock(err))
			}
		}
		return nil
	})
}

// SealingKeys lists the recorded sealing keys, first seen first
// (journal.KeyRegistry).
func (j *Journal) SealingKeys(ctx context.Context) ([]journal.KeyRecord, error) {
	j.reads.Add(1)
	rows, err := j.read.QueryContext(ctx, `SELECT key_id, first_sealed_at FROM resume_keys ORDER BY first_sealed_at, key_id`)
	if err != nil {
		return nil, fmt.Errorf("list sealing keys: %w", err)
	}
	defer rows.Close()
	var out []journal.KeyRecord
	for rows.Next() {
		var k journal.KeyRecord
		var at string
		if err := rows.Scan(&k.KeyID, &at); err != nil {
			return nil, fmt.Errorf("list sealing keys: %w", err)
		}
		k.FirstSealedAt, _ = time.Parse(timeFormat, at)
		out = append(out, k)
	}
	return out, rows.Err()
}

var (
	_ journal.Auditor     = (*Journal)(nil)
	_ journal.KeyRegistry = (*Journal)(nil)
)
