package pgjournal

import (
	"context"

	"github.com/resumegen/resumegen/runtime/journal"
)

// ContinueRun ends the run l holds as succeeded, continued as next.RunID,
// and creates next pending, continuing it, in one commit fenced by the
// lease (see journal.Continuer).
func (j *Journal) ContinueRun(ctx context.Context, l journal.Lease, r, next journal.RunRecord) (journal.RunRecord, error) {
	return j.store.ContinueRun(ctx, l, r, next)
}

var _ journal.Continuer = (*Journal)(nil)
