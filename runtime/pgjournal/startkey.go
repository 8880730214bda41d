package pgjournal

import (
	"context"
	"time"

	"github.com/resumegen/resumegen/runtime/internal/sqljournal"
	"github.com/resumegen/resumegen/runtime/journal"
)

// StartKeyed starts a run by start key (see [journal.KeyedStarter]) in
// one transaction that locks the key's row first (sqljournal.StartKeyed):
// two processes starting one key at once queue on that lock and create one
// run. Safe behind a transaction pooler: it keeps no session state.
func (j *Journal) StartKeyed(ctx context.Context, k journal.KeyedStart) (journal.RunRecord, journal.KeyedOutcome, error) {
	return j.store.StartKeyed(ctx, k, j.insertRunIn)
}

// insertRunIn is CreateRun's insert in transaction tx (a fork's, a keyed
// start's): it returns the stored run when the id exists.
func (j *Journal) insertRunIn(ctx context.Context, tx sqljournal.Executor, r journal.RunRecord) (journal.RunRecord, bool, error) {
	q := tx.(executor).q
	stored, created, err := j.insertRun(ctx, q, r, nil, timeoutOf(r))
	if err != nil || created {
		return stored, created, err
	}
	stored, err = j.run(ctx, q, j.sql.selectRun, r.RunID)
	return stored, false, err
}

var _ journal.KeyedStarter = (*Journal)(nil)

// timeoutOf is r's deadline as a length counted from its creation, which
// the server adds to its own clock (nil for none).
func timeoutOf(r journal.RunRecord) *time.Duration {
	if r.Deadline.IsZero() {
		return nil
	}
	d := r.Deadline.Sub(r.CreatedAt)
	return &d
}
