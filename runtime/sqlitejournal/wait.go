package sqlitejournal

import (
	"context"
	"time"

	"github.com/resumegen/resumegen/runtime/journal"
)

// Waiting runs (journal.StatusWaiting) and the signals kept for them.

// claimWaitSet is what a claim by run id (claimSQL: ?3 is the journal's
// now) sets of a run's wait: it clears what the run waited for, and keeps
// its wake-up time only when the claim takes it waiting and due, so that
// the engine knows the journal's clock reached it.
const claimWaitSet = `wait_kind = '', wait_name = '',
		wake_at = CASE WHEN status = 'waiting' AND wake_at <> '' AND wake_at <= ?3 THEN wake_at ELSE '' END`

// waitDue is ClaimNext's condition for a waiting run whose wake-up time
// passed (one parameter: the journal's now). The index resume_runs_by_wake
// (status, wake_at) answers it without reading the runs that are not due:
// "wake_at > (the empty string)", not "<>", bounds the index range below,
// so that the runs waiting for no time (an await without a timeout: an
// empty wake_at) are not read either.
const waitDue = `(status = 'waiting' AND wake_at > '' AND wake_at <= ?)`

// Signal keeps s for the run's next await of s.Name and wakes the run if
// it waits for that event, in one commit; the signal is stamped with the
// journal's clock.
func (j *Journal) Signal(ctx context.Context, s journal.SignalRecord) (journal.SignalRecord, error) {
	return j.store.Signal(ctx, s)
}

// KeptSignal returns the oldest signal named name of run runID that no
// await consumed.
func (j *Journal) KeptSignal(ctx context.Context, runID, name string) (journal.SignalRecord, bool, error) {
	return j.store.KeptSignal(ctx, runID, name)
}

// TakeSignal writes await row s and consumes signal seq, in one commit,
// fenced.
func (j *Journal) TakeSignal(ctx context.Context, l journal.Lease, seq int64, s journal.StepRecord) error {
	return j.store.TakeSignal(ctx, l, seq, s)
}

// ListSignals lists a run's signals in the order they were sent.
func (j *Journal) ListSignals(ctx context.Context, runID string) ([]journal.SignalRecord, error) {
	return j.store.ListSignals(ctx, runID)
}

// NextWake returns how long until the earliest wake-up time of a waiting
// run of workflows, by the journal's clock.
func (j *Journal) NextWake(ctx context.Context, workflows []string) (time.Duration, bool, error) {
	return j.store.NextWake(ctx, workflows)
}
