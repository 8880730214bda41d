package pgjournal

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/resumegen/resumegen/runtime/journal"
)

// recordAction inserts the operator's action ctx carries
// (journal.WithAction), if any, for run runID, in tx, whose caller holds
// the run's row locked: it commits with the action or not at all.
func (j *Journal) recordAction(ctx context.Context, tx pgx.Tx, runID string) error {
	a, ok := journal.ActionOf(ctx)
	if !ok {
		return nil
	}
	_, err := tx.Exec(ctx, qualify(`INSERT INTO {schema}.resume_actions (run_id, seq, action, detail, actor, origin, via, at)
		SELECT $1, COALESCE(MAX(seq), 0) + 1, $2, $3, $4, $5, $6, clock_timestamp() FROM {schema}.resume_actions WHERE run_id = $1`, j.schema),
		runID, a.Action, a.Detail, a.Actor, a.Origin, a.Via)
	if err != nil {
		return fmt.Errorf("run %s: record the operator's %s: %w", runID, a.Action, err)
	}
	return nil
}

// ListActions lists the operators' actions on run runID, oldest first
// (journal.Auditor).
func (j *Journal) ListActions(ctx context.Context, runID string) ([]journal.ActionRecord, error) {
	j.reads.Add(1)
	rows, err := j.pool.Query(ctx, qualify(`SELECT seq, action, detail, actor, origin, via, at FROM {schema}.resume_actions
		WHERE run_id = $1 ORDER BY seq`, j.schema), runID)
	if err != nil {
		return nil, fmt.Errorf("run %s: list actions: %w", runID, err)
	}
	defer rows.Close()
	var out []journal.ActionRecord
	for rows.Next() {
		a := journal.ActionRecord{RunID: runID}
		if err := rows.Scan(&a.Seq, &a.Action, &a.Detail, &a.Actor, &a.Origin, &a.Via, &a.At); err != nil {
			return nil, fmt.Errorf("run %s: list actions: %w", runID, err)
		}
		a.At = a.At.UTC()
		out = append(out, a)
	}
	return out, rows.Err()
}

// RecordKeys notes the ids of the keys that seal the journal's values
// (journal.KeyRegistry); an id seen before keeps its time.
func (j *Journal) RecordKeys(ctx context.Context, ids []string) error {
	for _, id := range ids {
		if _, err := j.pool.Exec(ctx, qualify(`INSERT INTO {schema}.resume_keys (key_id, first_sealed_at) VALUES ($1, clock_timestamp())
			ON CONFLICT (key_id) DO NOTHING`, j.schema), id); err != nil {
			return fmt.Errorf("record sealing key %q: %w", id, err)
		}
	}
	return nil
}

// SealingKeys lists the recorded sealing keys, first seen first
// (journal.KeyRegistry).
func (j *Journal) SealingKeys(ctx context.Context) ([]journal.KeyRecord, error) {
	j.reads.Add(1)
	rows, err := j.pool.Query(ctx, qualify(`SELECT key_id, first_sealed_at FROM {schema}.resume_keys ORDER BY first_sealed_at, key_id`, j.schema))
	if err != nil {
		return nil, fmt.Errorf("list sealing keys: %w", err)
	}
	defer rows.Close()
	var out []journal.KeyRecord
	for rows.Next() {
		var k journal.KeyRecord
		if err := rows.Scan(&k.KeyID, &k.FirstSealedAt); err != nil {
			return nil, fmt.Errorf("list sealing keys: %w", err)
		}
		k.FirstSealedAt = k.FirstSealedAt.UTC()
		out = append(out, k)
	}
	return out, rows.Err()
}

var (
	_ journal.Auditor     = (*Journal)(nil)
	_ journal.KeyRegistry = (*Journal)(nil)
)
