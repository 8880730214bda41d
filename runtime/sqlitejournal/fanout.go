package sqlitejournal

import (
	"context"

	"github.com/resumegen/resumegen/runtime/journal"
)

// Fan-out (journal.FanOut): child runs any worker claims, and a parent
// that waits for them all.

var _ journal.FanOut = (*Journal)(nil)

// Detach makes child run runID, created waiting to start by its parent,
// pending and claimable by any worker (see journal.FanOut).
func (j *Journal) Detach(ctx context.Context, runID string) error {
	return j.store.Detach(ctx, runID)
}

// WakeParent makes run parentID pending if it waits for its children and
// none is pending, running or waiting any more, then its ancestors that
// wait for it (see journal.FanOut). The one writer connection orders it
// with the parent's own FinishRun, which checks the same in its commit:
// one of the two sees the last child done.
func (j *Journal) WakeParent(ctx context.Context, parentID string) error {
	return j.store.WakeParent(ctx, parentID)
}

// Detached returns those of runIDs that are detached child runs.
func (j *Journal) Detached(ctx context.Context, runIDs []string) (map[string]bool, error) {
	return j.store.Detached(ctx, runIDs)
}
