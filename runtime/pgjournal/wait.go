package pgjournal

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/resumegen/resumegen/runtime/journal"
)

// Waiting runs (journal.StatusWaiting) and the signals kept for them.

var _ journal.FinishNotifier = (*Journal)(nil)

// claimWaitSet is what a claim sets of a run's wait: it clears what the
// run waited for, and keeps its wake-up time only when the claim takes it
// waiting and due, so that the engine knows the server's clock reached it.
const claimWaitSet = `wait_kind = '', wait_name = '',
		wake_at = CASE WHEN status = 'waiting' AND wake_at <= clock_timestamp() THEN wake_at END`

// waitDue is ClaimNext's condition for a waiting run whose wake-up time
// passed by the server's clock. The index resume_runs_by_wake (status,
// wake_at) answers it without reading the runs that are not due: it
// compares with statement_timestamp(), which an index scan can use, unlike
// the volatile clock_timestamp() (a claim that waited for a lock sees a
// wake-up that came meanwhile at its next poll).
const waitDue = `(status = 'waiting' AND wake_at <= statement_timestamp())`

// doneChannel is the NOTIFY channel on which runs of a schema announce
// their finish (migration 9), for NotifyFinish.
func doneChannel(schema string) string {
	sum := md5.Sum([]byte(schema))
	return "resume_done_" + hex.EncodeToString(sum[:])[:16]
}

// NotifyFinish returns a channel closed when a run of the journal's schema
// finishes (or needs a person) after the call, in any process
// (journal.FinishNotifier). It shares NotifyWork's listening connection.
func (j *Journal) NotifyFinish(ctx context.Context) (<-chan struct{}, error) {
	return j.notified(ctx, true)
}

// Signal keeps s for the run's next await of s.Name and wakes the run if
// it waits for that event, in one transaction holding the run's row, and
// its ancestors' rows: a parent suspending for this child at this moment
// then sees the child woken (see finishWaiting). The signal is stamped
// with the server's clock.
func (j *Journal) Signal(ctx context.Context, s journal.SignalRecord) (journal.SignalRecord, error) {
	return j.store.Signal(ctx, s)
}

// KeptSignal returns the oldest signal named name of run runID that no
// await consumed.
func (j *Journal) KeptSignal(ctx context.Context, runID, name string) (journal.SignalRecord, bool, error) {
	return j.store.KeptSignal(ctx, runID, name)
}

// TakeSignal writes await row s and consumes signal seq, in one
// transaction, fenced.
func (j *Journal) TakeSignal(ctx context.Context, l journal.Lease, seq int64, s journal.StepRecord) error {
	return j.store.TakeSignal(ctx, l, seq, s)
}

// finishWaiting is FinishRun for a run that suspends for a signal or a
// child: with the run's row locked (a Signal holding it commits first, and
// the next statement sees it), a signal kept for it, or a child that no
// longer waits, stores it pending instead.
func (j *Journal) finishWaiting(ctx context.Context, l journal.Lease, r journal.RunRecord) error {
	return j.inTx(ctx, func(tx pgx.Tx) error {
		if err := j.store.LockRun(ctx, executor{tx}, r.RunID); err != nil {
			return fmt.Errorf("run %s: finish: %w", r.RunID, err)
		}
		over, err := j.store.WaitOver(ctx, executor{tx}, r)
		if err != nil {
			return fmt.Errorf("run %s: finish: %w", r.RunID, err)
		}
		if over {
			r.Status, r.WaitKind, r.WaitName, r.WakeAt = journal.StatusPending, "", "", time.Time{}
		}
		return j.finish(ctx, tx, l, r)
	})
}

// ListSignals lists a run's signals in the order they were sent.
func (j *Journal) ListSignals(ctx context.Context, runID string) ([]journal.SignalRecord, error) {
	return j.store.ListSignals(ctx, runID)
}

// NextWake returns how long until the earliest wake-up time of a waiting
// run of workflows, by the server's clock.
func (j *Journal) NextWake(ctx context.Context, workflows []string) (time.Duration, bool, error) {
	return j.store.NextWake(ctx, workflows)
}
