package sqlitejournal

import (
	"context"

	"github.com/resumegen/resumegen/runtime/journal"
)

// ForkRun creates a fork's new run with its copied journal and records
// the fork on both runs, in one transaction (journal.Forker): the
// database's write lock holds the original's row.
func (j *Journal) ForkRun(ctx context.Context, f journal.ForkRequest) (journal.RunRecord, bool, error) {
	return j.store.Fork(ctx, f, j.createRunIn)
}

var _ journal.Forker = (*Journal)(nil)
