package pgjournal

import (
	"context"
	"time"

	"github.com/resumegen/resumegen/runtime/journal"
)

// Cancel stops an unfinished run, in one transaction holding its row: it
// asks a run that can unwind to (with its descendants), and cancels one
// that cannot at once (see journal.Journal.Cancel). A stop is asked at
// the server's clock.
func (j *Journal) Cancel(ctx context.Context, runID string, opts journal.CancelOptions) error {
	return j.store.Cancel(ctx, runID, opts)
}

// CancelRequested reads the run's cancel_requested_at.
func (j *Journal) CancelRequested(ctx context.Context, runID string) (time.Time, error) {
	return j.store.CancelRequested(ctx, runID)
}
