package sqlitejournal

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/resumegen/resumegen/runtime/internal/sqljournal"
	"github.com/resumegen/resumegen/runtime/journal"
)

// ForkRun creates a fork's new run with its copied journal and records
// the fork on both runs, in one transaction (journal.Forker): the
// database's write lock holds the original's row.
func (j *Journal) ForkRun(ctx context.Context, f journal.ForkRequest) (journal.RunRecord, bool, error) {
	return j.store.Fork(ctx, f, func(ctx context.Context, tx sqljournal.Executor, r journal.RunRecord) (journal.RunRecord, bool, error) {
		stx, ok := tx.(executor).q.(*sql.Tx)
		if !ok {
			return r, false, fmt.Errorf("run %s: fork: not in a transaction", r.RunID)
		}
		return j.createRun(ctx, stx, r, 0)
	})
}

var _ journal.Forker = (*Journal)(nil)
