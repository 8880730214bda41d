package sqlitejournal

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/resumegen/resumegen/runtime/internal/sqljournal"
	"github.com/resumegen/resumegen/runtime/journal"
)

// StartKeyed starts a run by start key (see [journal.KeyedStarter]) in
// one write transaction (sqljournal.StartKeyed): SQLite's single writer is
// the key's lock, so two processes starting one key at once create one
// run.
func (j *Journal) StartKeyed(ctx context.Context, k journal.KeyedStart) (journal.RunRecord, journal.KeyedOutcome, error) {
	return j.store.StartKeyed(ctx, k, j.createRunIn)
}

// createRunIn is CreateRun's insert in transaction tx (a fork's, a keyed
// start's).
func (j *Journal) createRunIn(ctx context.Context, tx sqljournal.Executor, r journal.RunRecord) (journal.RunRecord, bool, error) {
	stx, ok := tx.(executor).q.(*sql.Tx)
	if !ok {
		return r, false, fmt.Errorf("run %s: create: not in a transaction", r.RunID)
	}
	return j.createRun(ctx, stx, r, 0)
}

var _ journal.KeyedStarter = (*Journal)(nil)
