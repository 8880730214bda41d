package sqlitejournal

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/resumegen/resumegen/runtime/internal/sqljournal"
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
	return j.store.Signal(ctx, s, j.keepSignal)
}

// keepSignal inserts signal s, numbered after the run's others and
// stamped with the journal's clock (sqljournal.KeepSignal); the write lock
// its transaction holds keeps the number its own.
func (j *Journal) keepSignal(ctx context.Context, tx sqljournal.Executor, _ journal.RunRecord, s *journal.SignalRecord) error {
	s.SentAt = j.clock()
	j.reads.Add(1)
	if err := tx.QueryRow(ctx, `SELECT COALESCE(MAX(seq), 0) + 1 FROM resume_signals WHERE run_id = ?`, s.RunID).Scan(&s.Seq); err != nil {
		return err
	}
	_, err := tx.Exec(ctx, `INSERT INTO resume_signals (run_id, name, seq, payload, sent_at) VALUES (?, ?, ?, ?, ?)`,
		s.RunID, s.Name, s.Seq, string(s.Payload), ts(s.SentAt))
	return err
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
	if len(workflows) == 0 {
		return 0, false, nil
	}
	args := make([]any, len(workflows))
	for i, w := range workflows {
		args[i] = w
	}
	var at string
	j.reads.Add(1)
	err := j.read.QueryRowContext(ctx, nextWakeSQL(len(workflows)), args...).Scan(&at)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("next wake-up: %w", err)
	}
	t, err := time.Parse(timeFormat, at)
	if err != nil {
		return 0, false, fmt.Errorf("next wake-up: wake_at %q: %w", at, err)
	}
	return max(t.Sub(j.clock()), 0), true, nil
}

// nextWakeSQL is NextWake's query for n workflows.
func nextWakeSQL(n int) string {
	return `SELECT wake_at FROM resume_runs
		WHERE status = 'waiting' AND wake_at > '' AND (parent_run_id = '' OR detached = 1) AND workflow IN (?` + strings.Repeat(", ?", n-1) + `)
		ORDER BY wake_at LIMIT 1`
}
