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
// (status, wake_at) answers it without reading the runs that are not due.
const waitDue = `(status = 'waiting' AND wake_at <> '' AND wake_at <= ?)`

// Signal keeps s for the run's next await of s.Name and wakes the run if
// it waits for that event, in one commit.
func (j *Journal) Signal(ctx context.Context, s journal.SignalRecord) (journal.SignalRecord, error) {
	err := j.inTx(ctx, func(tx *sql.Tx) error {
		r, err := j.run(ctx, tx, s.RunID)
		if err != nil {
			return err
		}
		if r.Status.Finished() {
			return fmt.Errorf("run %s is %s: %w", s.RunID, r.Status, journal.ErrRunFinished)
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

// TakeSignal consumes the oldest kept signal named s.Name for await s and
// journals s with its payload, or journals timeout, in one commit, fenced.
func (j *Journal) TakeSignal(ctx context.Context, l journal.Lease, s journal.StepRecord, timeout *journal.StepRecord) (journal.StepRecord, bool, error) {
	wrote := false
	err := j.inTx(ctx, func(tx *sql.Tx) error {
		var seq int64
		var payload string
		j.reads.Add(1)
		err := tx.QueryRowContext(ctx, `SELECT seq, payload FROM resume_signals
			WHERE run_id = ? AND name = ? AND consumed_key = '' ORDER BY seq LIMIT 1`, s.RunID, s.Name).Scan(&seq, &payload)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			if timeout == nil {
				return nil
			}
			s, wrote = *timeout, true
			return writeStep(ctx, tx.StmtContext(ctx, j.writeStepStmt), l, s)
		case err != nil:
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE resume_signals SET consumed_key = ? WHERE run_id = ? AND seq = ?`, s.StepKey, s.RunID, seq); err != nil {
			return err
		}
		s.Status, s.Result, s.Error, s.ErrorDetail, s.Final = journal.StepSucceeded, []byte(payload), "", nil, false
		wrote = true
		return writeStep(ctx, tx.StmtContext(ctx, j.writeStepStmt), l, s)
	})
	if err != nil {
		return s, false, fmt.Errorf("run %s, await %s: %w", s.RunID, s.StepKey, writeLock(err))
	}
	return s, wrote, nil
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
	err := j.read.QueryRowContext(ctx, `SELECT wake_at FROM resume_runs
		WHERE status = 'waiting' AND wake_at <> '' AND parent_run_id = '' AND workflow IN (?`+strings.Repeat(", ?", len(workflows)-1)+`)
		ORDER BY wake_at LIMIT 1`, args...).Scan(&at)
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
