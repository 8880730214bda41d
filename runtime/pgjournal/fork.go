package pgjournal

import (
	"context"

	"github.com/resumegen/resumegen/runtime/journal"
)

// ForkRun creates a fork's new run with its copied journal and records
// the fork on both runs, in one transaction holding the original's row
// locked (journal.Forker).
func (j *Journal) ForkRun(ctx context.Context, f journal.ForkRequest) (journal.RunRecord, bool, error) {
	return j.store.Fork(ctx, f, j.insertRunIn)
}

var _ journal.Forker = (*Journal)(nil)
