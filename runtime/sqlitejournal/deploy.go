package sqlitejournal

import (
	"context"

	"github.com/resumegen/resumegen/runtime/journal"
)

// Advertise replaces the versions owner advertised with versions, seen now
// by the journal's clock read once the write lock is held; nil withdraws
// them.
func (j *Journal) Advertise(ctx context.Context, owner string, versions []journal.WorkflowVersion) error {
	return j.store.Advertise(ctx, owner, versions)
}

// MoveRun re-pins the run l holds to m.To and m.Workflow, relabels its step
// rows by m.Renames and appends m to its moves, in one transaction fenced
// by the lease: nothing is written unless l is still the run's.
func (j *Journal) MoveRun(ctx context.Context, l journal.Lease, m journal.Move) error {
	return j.store.MoveRun(ctx, l, m)
}
