package sqlitejournal

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/resumegen/resumegen/runtime/journal"
)

// Advertise replaces the versions owner advertised with versions, seen now
// by the journal's clock read once the write lock is held; nil withdraws
// them.
func (j *Journal) Advertise(ctx context.Context, owner string, versions []journal.WorkflowVersion) error {
	err := j.inTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM resume_workers WHERE owner = ?`, owner); err != nil {
			return writeLock(err)
		}
		now := ts(j.clock())
		for _, v := range versions {
			if _, err := tx.ExecContext(ctx, `INSERT INTO resume_workers (owner, workflow, version, seen_at) VALUES (?, ?, ?, ?)
				ON CONFLICT (owner, workflow, version) DO UPDATE SET seen_at = excluded.seen_at`, owner, v.Workflow, v.Version, now); err != nil {
				return writeLock(err)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("owner %s: advertise: %w", owner, err)
	}
	return nil
}

// MoveRun re-pins the run l holds to m.To and m.Workflow, relabels its step
// rows by m.Renames and appends m to its moves, in one transaction fenced
// by the lease: nothing is written unless l is still the run's.
func (j *Journal) MoveRun(ctx context.Context, l journal.Lease, m journal.Move) error {
	return j.store.MoveRun(ctx, l, m)
}
