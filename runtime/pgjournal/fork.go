package pgjournal

import (
	"context"

	"github.com/resumegen/resumegen/runtime/internal/sqljournal"
	"github.com/resumegen/resumegen/runtime/journal"
)

// ForkRun creates a fork's new run with its copied journal and records
// the fork on both runs, in one transaction holding the original's row
// locked (journal.Forker).
func (j *Journal) ForkRun(ctx context.Context, f journal.ForkRequest) (journal.RunRecord, bool, error) {
	return j.store.Fork(ctx, f, func(ctx context.Context, tx sqljournal.Executor, r journal.RunRecord) (journal.RunRecord, bool, error) {
		q := tx.(executor).q
		stored, created, err := j.insertRun(ctx, q, r, nil, nil)
		if err != nil || created {
			return stored, created, err
		}
		stored, err = j.run(ctx, q, j.sql.selectRun, r.RunID)
		return stored, false, err
	})
}

var _ journal.Forker = (*Journal)(nil)
