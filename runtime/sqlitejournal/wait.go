package sqlitejournal

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
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
// it waits for that event, in one commit.
func (j *Journal) Signal(ctx context.Context, s journal.SignalRecord) (journal.SignalRecord, error) {
	if err := journal.CheckSignal(s); err != nil {
		return s, fmt.Errorf("run %s: signal: %w", s.RunID, err)
	}
	err := j.inTx(ctx, func(tx *sql.Tx) error {
		r, err := j.run(ctx, tx, s.RunID)
		if err != nil {
			return err
		}
		if r.Status.Finished() {
			return fmt.Errorf("run %s is %s: %w", s.RunID, r.Status, journal.ErrRunFinished)
		}
		if !r.CancelRequested.IsZero() {
			return fmt.Errorf("run %s is being cancelled: %w", s.RunID, journal.ErrRunFinished)
		}
		s.SentAt = j.clock()
		j.reads.Add(1)
		if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(seq), 0) + 1 FROM resume_signals WHERE run_id = ?`, s.RunID).Scan(&s.Seq); err != nil {
			return err
		}
		s.ConsumedKey = ""
		if _, err := tx.ExecContext(ctx, `INSERT INTO resume_signals (run_id, name, seq, payload, sent_at) VALUES (?, ?, ?, ?, ?)`,
			s.RunID, s.Name, s.Seq, string(s.Payload), ts(s.SentAt)); err != nil {
			return writeLock(err)
		}
		if err := j.recordAction(ctx, tx, s.RunID); err != nil {
			return err
		}
		return wakeForSignal(ctx, tx, r, s.Name, ts(s.SentAt))
	})
	if err != nil {
		return s, fmt.Errorf("run %s: signal %s: %w", s.RunID, s.Name, err)
	}
	return s, nil
}

// wakeForSignal makes run r pending if it waits for event name, and then
// its ancestors that wait for it (a child run's parent suspends with it).
func wakeForSignal(ctx context.Context, tx *sql.Tx, r journal.RunRecord, name, now string) error {
	res, err := tx.ExecContext(ctx, `UPDATE resume_runs SET status = 'pending', wait_kind = '', wait_name = '', wake_at = '', updated_at = ?
		WHERE run_id = ? AND status = 'waiting' AND wait_kind = 'signal' AND wait_name = ?`, now, r.RunID, name)
	if err != nil {
		return err
	}
	for child, parent := r.RunID, r.Parent; parent != ""; {
		if n, _ := res.RowsAffected(); n == 0 {
			return nil
		}
		res, err = tx.ExecContext(ctx, `UPDATE resume_runs SET status = 'pending', wait_kind = '', wait_name = '', wake_at = '', updated_at = ?
			WHERE run_id = ? AND status = 'waiting' AND wait_kind = 'child' AND wait_name = ?`, now, parent, child)
		if err != nil {
			return err
		}
		child = parent
		if err := tx.QueryRowContext(ctx, `SELECT parent_run_id FROM resume_runs WHERE run_id = ?`, parent).Scan(&parent); err != nil {
			return err
		}
	}
	return nil
}

// KeptSignal returns the oldest signal named name of run runID that no
// await consumed.
func (j *Journal) KeptSignal(ctx context.Context, runID, name string) (journal.SignalRecord, bool, error) {
	s := journal.SignalRecord{RunID: runID, Name: name}
	var payload, sent string
	j.reads.Add(1)
	err := j.read.QueryRowContext(ctx, `SELECT seq, payload, sent_at FROM resume_signals
		WHERE run_id = ? AND name = ? AND consumed_key = '' ORDER BY seq LIMIT 1`, runID, name).Scan(&s.Seq, &payload, &sent)
	if errors.Is(err, sql.ErrNoRows) {
		return s, false, nil
	}
	if err != nil {
		return s, false, fmt.Errorf("run %s: read signal %s: %w", runID, name, err)
	}
	s.Payload = []byte(payload)
	s.SentAt, _ = time.Parse(timeFormat, sent)
	return s, true, nil
}

// TakeSignal writes await row s and consumes signal seq, in one commit,
// fenced.
func (j *Journal) TakeSignal(ctx context.Context, l journal.Lease, seq int64, s journal.StepRecord) error {
	err := j.inTx(ctx, func(tx *sql.Tx) error {
		if seq > 0 {
			res, err := tx.ExecContext(ctx, `UPDATE resume_signals SET consumed_key = ? WHERE run_id = ? AND seq = ? AND consumed_key = ''`,
				s.StepKey, s.RunID, seq)
			if err != nil {
				return err
			}
			if n, _ := res.RowsAffected(); n != 1 {
				return fmt.Errorf("signal %d of event %s is not kept for the run any more: an await consumed it", seq, s.Name)
			}
		}
		return writeStep(ctx, tx.StmtContext(ctx, j.writeStepStmt), l, s)
	})
	if err != nil {
		return fmt.Errorf("run %s, await %s: %w", s.RunID, s.StepKey, writeLock(err))
	}
	return nil
}

// woken reports whether run r, about to be stored waiting for what it
// says, has its wait over already: a signal of that name is kept for it
// (sent while it ran), or the child it waits for no longer waits.
func woken(ctx context.Context, q querier, r journal.RunRecord) (bool, error) {
	var n int
	var err error
	switch r.WaitKind {
	case journal.WaitSignal:
		err = q.QueryRowContext(ctx, `SELECT count(*) FROM resume_signals WHERE run_id = ? AND name = ? AND consumed_key = ''`,
			r.RunID, r.WaitName).Scan(&n)
	case journal.WaitChild:
		err = q.QueryRowContext(ctx, `SELECT count(*) FROM resume_runs WHERE run_id = ? AND status <> 'waiting'`, r.WaitName).Scan(&n)
	case journal.WaitChildren:
		return childrenDone(ctx, q, r.RunID)
	}
	return n > 0, err
}

// ListSignals lists a run's signals in the order they were sent.
func (j *Journal) ListSignals(ctx context.Context, runID string) ([]journal.SignalRecord, error) {
	j.reads.Add(1)
	rows, err := j.read.QueryContext(ctx, `SELECT run_id, name, seq, payload, sent_at, consumed_key FROM resume_signals
		WHERE run_id = ? ORDER BY seq`, runID)
	if err != nil {
		return nil, fmt.Errorf("run %s: list signals: %w", runID, err)
	}
	defer rows.Close()
	var out []journal.SignalRecord
	for rows.Next() {
		var s journal.SignalRecord
		var payload, sent string
		if err := rows.Scan(&s.RunID, &s.Name, &s.Seq, &payload, &sent, &s.ConsumedKey); err != nil {
			return nil, fmt.Errorf("run %s: list signals: %w", runID, err)
		}
		s.Payload = []byte(payload)
		s.SentAt, _ = time.Parse(timeFormat, sent)
		out = append(out, s)
	}
	return out, rows.Err()
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
