package pgjournal

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/resumegen/resumegen/runtime/journal"
)

// recordAction inserts the operator's action ctx carries
// (journal.WithAction), if any, for run runID, in tx, whose caller holds
// the run's row locked: it commits with the action or not at all.
func (j *Journal) recordAction(ctx context.Context, tx pgx.Tx, runID string) error {
	return j.store.RecordAction(ctx, executor{tx}, runID)
}

// ListActions lists the operators' actions on run runID, oldest first
// (journal.Auditor).
func (j *Journal) ListActions(ctx context.Context, runID string) ([]journal.ActionRecord, error) {
	return j.store.ListActions(ctx, runID)
}

// RecordKeys notes the ids of the keys that seal the journal's values
// (journal.KeyRegistry); an id seen before keeps its time.
func (j *Journal) RecordKeys(ctx context.Context, ids []string) error {
	return j.store.RecordKeys(ctx, ids)
}

// SealingKeys lists the recorded sealing keys, first seen first
// (journal.KeyRegistry).
func (j *Journal) SealingKeys(ctx context.Context) ([]journal.KeyRecord, error) {
	return j.store.SealingKeys(ctx)
}

var (
	_ journal.Auditor     = (*Journal)(nil)
	_ journal.KeyRegistry = (*Journal)(nil)
)
