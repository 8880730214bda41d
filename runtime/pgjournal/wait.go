package pgjournal

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"errors"
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
// it waits for that event, in one transaction holding the run's row.
func (j *Journal) Signal(ctx context.Context, s journal.SignalRecord) (journal.SignalRecord, error) {
	if err := journal.CheckSignal(s); err != nil {
		return s, fmt.Errorf("run %s: signal: %w", s.RunID, err)
	}
	q := func(sql string) string { return qualify(sql, j.schema) }
	err := j.inTx(ctx, func(tx pgx.Tx) error {
		r, err := j.run(ctx, tx, j.sql.selectRunForUpdate, s.RunID)
		if err != nil {
			return err
		}
		if r.Status.Finished() {
			return fmt.Errorf("run %s is %s: %w", s.RunID, r.Status, journal.ErrRunFinished)
		}
		if !r.CancelRequested.IsZero() {
			return fmt.Errorf("run %s is being cancelled: %w", s.RunID, journal.ErrRunFinished)
		}
		// Lock the ancestors too: a parent suspending for this child at
		// this moment then sees the child woken (see finishWaiting).
		if _, err := tx.Exec(ctx, q(`WITH RECURSIVE up(id) AS (
				SELECT parent_run_id FROM {schema}.resume_runs WHERE run_id = $1 AND parent_run_id <> ''
				UNION SELECT r.parent_run_id FROM {schema}.resume_runs r JOIN up ON r.run_id = up.id WHERE r.parent_run_id <> '')
			SELECT 1 FROM {schema}.resume_runs WHERE run_id IN (SELECT id FROM up) ORDER BY run_id FOR UPDATE`), s.RunID); err != nil {
			return err
		}
		s.ConsumedKey = ""
		err = tx.QueryRow(ctx, q(`INSERT INTO {schema}.resume_signals (run_id, name, seq, payload, sent_at)
			SELECT $1, $2, COALESCE(MAX(seq), 0) + 1, $3, clock_timestamp() FROM {schema}.resume_signals WHERE run_id = $1
			RETURNING seq, sent_at`), s.RunID, s.Name, string(s.Payload)).Scan(&s.Seq, &s.SentAt)
		if err != nil {
			return err
		}
		s.SentAt = s.SentAt.UTC()
		if err := j.recordAction(ctx, tx, s.RunID); err != nil {
			return err
		}
		return j.wakeForSignal(ctx, tx, r, s.Name)
	})
	if err != nil {
		return s, fmt.Errorf("run %s: signal %s: %w", s.RunID, s.Name, err)
	}
	return s, nil
}

// wakeForSignal makes run r pending if it waits for event name (its
// status trigger notifies idle workers), and then its ancestors that wait
// for it.
func (j *Journal) wakeForSignal(ctx context.Context, tx pgx.Tx, r journal.RunRecord, name string) error {
	q := func(sql string) string { return qualify(sql, j.schema) }
	const set = `UPDATE {schema}.resume_runs SET status = 'pending', wait_kind = '', wait_name = '', wake_at = NULL, updated_at = clock_timestamp()`
	tag, err := tx.Exec(ctx, q(set+` WHERE run_id = $1 AND status = 'waiting' AND wait_kind = 'signal' AND wait_name = $2`), r.RunID, name)
	if err != nil {
		return err
	}
	for child, parent := r.RunID, r.Parent; parent != "" && tag.RowsAffected() > 0; {
		tag, err = tx.Exec(ctx, q(set+` WHERE run_id = $1 AND status = 'waiting' AND wait_kind = 'child' AND wait_name = $2`), parent, child)
		if err != nil {
			return err
		}
		child = parent
		if err := tx.QueryRow(ctx, q(`SELECT parent_run_id FROM {schema}.resume_runs WHERE run_id = $1`), parent).Scan(&parent); err != nil {
			return err
		}
	}
	return nil
}

// KeptSignal returns the oldest signal named name of run runID that no
// await consumed.
func (j *Journal) KeptSignal(ctx context.Context, runID, name string) (journal.SignalRecord, bool, error) {
	s := journal.SignalRecord{RunID: runID, Name: name}
	j.reads.Add(1)
	err := j.pool.QueryRow(ctx, qualify(`SELECT seq, payload, sent_at FROM {schema}.resume_signals
		WHERE run_id = $1 AND name = $2 AND consumed_key = '' ORDER BY seq LIMIT 1`, j.schema), runID, name).Scan(&s.Seq, &s.Payload, &s.SentAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return s, false, nil
	}
	if err != nil {
		return s, false, fmt.Errorf("run %s: read signal %s: %w", runID, name, err)
	}
	s.SentAt = s.SentAt.UTC()
	return s, true, nil
}

// TakeSignal writes await row s and consumes signal seq, in one
// transaction, fenced.
func (j *Journal) TakeSignal(ctx context.Context, l journal.Lease, seq int64, s journal.StepRecord) error {
	err := j.inTx(ctx, func(tx pgx.Tx) error {
		if seq > 0 {
			tag, err := tx.Exec(ctx, qualify(`UPDATE {schema}.resume_signals SET consumed_key = $1
				WHERE run_id = $2 AND seq = $3 AND consumed_key = ''`, j.schema), s.StepKey, s.RunID, seq)
			if err != nil {
				return err
			}
			if tag.RowsAffected() != 1 {
				return fmt.Errorf("signal %d of event %s is not kept for the run any more: an await consumed it", seq, s.Name)
			}
		}
		return j.writeStep(ctx, tx, l, s)
	})
	if err != nil {
		return fmt.Errorf("run %s, await %s: %w", s.RunID, s.StepKey, err)
	}
	return nil
}

// finishWaiting is FinishRun for a run that suspends for a signal or a
// child: with the run's row locked (a Signal holding it commits first, and
// the next statement sees it), a signal kept for it, or a child that no
// longer waits, stores it pending instead.
func (j *Journal) finishWaiting(ctx context.Context, l journal.Lease, r journal.RunRecord) error {
	q := func(sql string) string { return qualify(sql, j.schema) }
	return j.inTx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, q(`SELECT 1 FROM {schema}.resume_runs WHERE run_id = $1 FOR UPDATE`), r.RunID); err != nil {
			return fmt.Errorf("run %s: finish: %w", r.RunID, err)
		}
		var over bool
		var err error
		if r.WaitKind == journal.WaitSignal {
			err = tx.QueryRow(ctx, q(`SELECT EXISTS (SELECT 1 FROM {schema}.resume_signals WHERE run_id = $1 AND name = $2 AND consumed_key = '')`),
				r.RunID, r.WaitName).Scan(&over)
		} else if r.WaitKind == journal.WaitChildren {
			over, err = j.childrenDone(ctx, tx, r.RunID)
		} else {
			err = tx.QueryRow(ctx, q(`SELECT EXISTS (SELECT 1 FROM {schema}.resume_runs WHERE run_id = $1 AND status <> 'waiting')`), r.WaitName).Scan(&over)
		}
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
	j.reads.Add(1)
	rows, err := j.pool.Query(ctx, qualify(`SELECT run_id, name, seq, payload, sent_at, consumed_key FROM {schema}.resume_signals
		WHERE run_id = $1 ORDER BY seq`, j.schema), runID)
	if err != nil {
		return nil, fmt.Errorf("run %s: list signals: %w", runID, err)
	}
	defer rows.Close()
	var out []journal.SignalRecord
	for rows.Next() {
		var s journal.SignalRecord
		if err := rows.Scan(&s.RunID, &s.Name, &s.Seq, &s.Payload, &s.SentAt, &s.ConsumedKey); err != nil {
			return nil, fmt.Errorf("run %s: list signals: %w", runID, err)
		}
		s.SentAt = s.SentAt.UTC()
		out = append(out, s)
	}
	return out, rows.Err()
}

// NextWake returns how long until the earliest wake-up time of a waiting
// run of workflows, by the server's clock.
func (j *Journal) NextWake(ctx context.Context, workflows []string) (time.Duration, bool, error) {
	if len(workflows) == 0 {
		return 0, false, nil
	}
	var d *time.Duration
	j.reads.Add(1)
	err := j.pool.QueryRow(ctx, qualify(`SELECT GREATEST(wake_at - clock_timestamp(), interval '0') FROM {schema}.resume_runs
		WHERE status = 'waiting' AND wake_at IS NOT NULL AND (parent_run_id = '' OR detached) AND workflow = ANY($1::text[])
		ORDER BY wake_at LIMIT 1`, j.schema), workflows).Scan(&d)
	if errors.Is(err, pgx.ErrNoRows) || err == nil && d == nil {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("next wake-up: %w", err)
	}
	return *d, true, nil
}
