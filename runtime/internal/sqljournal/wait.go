package sqljournal

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/resumegen/resumegen/runtime/journal"
)

// KeptSignal returns the oldest signal named name of run runID that no
// await consumed.
func (s *Store) KeptSignal(ctx context.Context, runID, name string) (journal.SignalRecord, bool, error) {
	sig := journal.SignalRecord{RunID: runID, Name: name}
	var payload []byte
	var sent any
	s.cfg.Reads.Add(1)
	err := s.cfg.Read.QueryRow(ctx, s.sql.keptSignal, runID, name).Scan(&sig.Seq, &payload, &sent)
	if s.cfg.Dialect.NoRows(err) {
		return sig, false, nil
	}
	if err != nil {
		return sig, false, fmt.Errorf("run %s: read signal %s: %w", runID, name, err)
	}
	sig.Payload = json.RawMessage(payload)
	sig.SentAt, _ = s.cfg.Dialect.ScanTime(sent) // an unreadable time is left zero, the signal kept
	return sig, true, nil
}

// ListSignals lists a run's signals in the order they were sent.
func (s *Store) ListSignals(ctx context.Context, runID string) ([]journal.SignalRecord, error) {
	s.cfg.Reads.Add(1)
	rows, err := s.cfg.Read.Query(ctx, s.sql.listSignals, runID)
	if err != nil {
		return nil, fmt.Errorf("run %s: list signals: %w", runID, err)
	}
	return Collect(rows, "run "+runID+": list signals", func(row Row) (journal.SignalRecord, error) {
		var sig journal.SignalRecord
		var payload []byte
		var sent any
		if err := row.Scan(&sig.RunID, &sig.Name, &sig.Seq, &payload, &sent, &sig.ConsumedKey); err != nil {
			return sig, err
		}
		sig.Payload = json.RawMessage(payload)
		sig.SentAt, _ = s.cfg.Dialect.ScanTime(sent) // as KeptSignal
		return sig, nil
	})
}

// ConsumeSignal marks signal seq of run runID consumed by the await of
// step key, in tx; a signal another await consumed is an error naming the
// event.
func (s *Store) ConsumeSignal(ctx context.Context, tx Executor, runID, key, event string, seq int64) error {
	n, err := tx.Exec(ctx, s.sql.consumeSignal, key, runID, seq)
	if err != nil {
		return s.cfg.Dialect.WriteErr(err)
	}
	if n != 1 {
		return fmt.Errorf("signal %d of event %s is not kept for the run any more: an await consumed it", seq, event)
	}
	return nil
}

// WakeForSignal makes run r pending if it waits for event name, and then
// its ancestors that wait for it (a child run's parent suspends with it),
// in tx; now is the journal's clock as the host read it (see Dialect.Now).
func (s *Store) WakeForSignal(ctx context.Context, tx Executor, r journal.RunRecord, name string, now time.Time) error {
	d := s.cfg.Dialect
	wake := func(kind, runID, waitName string) (int64, error) {
		a := NewArgs(d)
		q := `UPDATE {schema}.resume_runs SET status = 'pending', wait_kind = '', wait_name = '', wake_at = ` + a.Add(d.Time(time.Time{})) +
			`, updated_at = ` + d.Now(a, now) + ` WHERE run_id = ` + a.Add(runID) +
			` AND status = 'waiting' AND wait_kind = '` + kind + `' AND wait_name = ` + a.Add(waitName)
		n, err := tx.Exec(ctx, d.Rebind(q), a.Values()...)
		return n, d.WriteErr(err)
	}
	n, err := wake(journal.WaitSignal, r.RunID, name)
	if err != nil {
		return err
	}
	for child, parent := r.RunID, r.Parent; parent != "" && n > 0; {
		if n, err = wake(journal.WaitChild, parent, child); err != nil {
			return err
		}
		child = parent
		if err := tx.QueryRow(ctx, s.sql.parentOf, parent).Scan(&parent); err != nil {
			return err
		}
	}
	return nil
}

// Signal keeps s for the run's next await of s.Name and wakes the run if
// it waits for that event, and its ancestors that wait for it, in one
// transaction holding the run's row (and, where rows are locked, its
// ancestors' in run id order, so that a parent suspending for the run at
// this moment sees it woken). A finished run, or one asked to stop,
// refuses it with journal.ErrRunFinished.
func (s *Store) Signal(ctx context.Context, sig journal.SignalRecord) (journal.SignalRecord, error) {
	if err := journal.CheckSignal(sig); err != nil {
		return sig, fmt.Errorf("run %s: signal: %w", sig.RunID, err)
	}
	err := s.cfg.InTx(ctx, func(tx Executor) error {
		r, err := s.run(ctx, tx, sig.RunID)
		if err != nil {
			return err
		}
		if r.Status.Finished() {
			return fmt.Errorf("run %s is %s: %w", sig.RunID, r.Status, journal.ErrRunFinished)
		}
		if !r.CancelRequested.IsZero() {
			return fmt.Errorf("run %s is being cancelled: %w", sig.RunID, journal.ErrRunFinished)
		}
		sig.ConsumedKey = ""
		if err := s.keepSignal(ctx, tx, &sig); err != nil {
			return s.cfg.Dialect.WriteErr(err)
		}
		if err := s.RecordAction(ctx, tx, sig.RunID); err != nil {
			return err
		}
		return s.WakeForSignal(ctx, tx, r, sig.Name, sig.SentAt)
	})
	if err != nil {
		return sig, fmt.Errorf("run %s: signal %s: %w", sig.RunID, sig.Name, err)
	}
	return sig, nil
}

// keepSignal stores sig in tx, numbered after the run's others (the
// run's row is held) and stamped with the journal's clock, which it sets
// in sig, after locking the run's ancestors where rows are locked.
func (s *Store) keepSignal(ctx context.Context, tx Executor, sig *journal.SignalRecord) error {
	d := s.cfg.Dialect
	if s.sql.lockAncestors != "" {
		if _, err := tx.Exec(ctx, s.sql.lockAncestors, sig.RunID); err != nil {
			return err
		}
	}
	// Where statements are in process, the number and the time are read
	// first, then inserted: SQLite gives an insert that reads its own
	// table (INSERT ... SELECT, or a subquery in VALUES) a statement
	// journal, 7-10% of a signal. Elsewhere the second round trip costs
	// more (7-10% on PostgreSQL) and the insert reads them itself. The
	// arguments are gathered as New gathered them for the text.
	a := NewArgs(d)
	if !d.InProcess() {
		a.Add(sig.RunID)
		a.Add(sig.Name)
		a.Add(string(sig.Payload))
		d.Now(a, s.cfg.Clock())
		return s.scanSignal(tx.QueryRow(ctx, s.sql.nextSignal, a.Values()...), sig)
	}
	d.Now(a, s.cfg.Clock())
	a.Add(sig.RunID)
	s.cfg.Reads.Add(1)
	if err := s.scanSignal(tx.QueryRow(ctx, s.sql.nextSignal, a.Values()...), sig); err != nil {
		return err
	}
	_, err := tx.Exec(ctx, s.sql.insertSignal, sig.RunID, sig.Name, sig.Seq, string(sig.Payload), d.RequiredTime(sig.SentAt))
	return err
}

// scanSignal sets sig's number and time from row (see keepSignal).
func (s *Store) scanSignal(row Row, sig *journal.SignalRecord) error {
	var sent any
	if err := row.Scan(&sig.Seq, &sent); err != nil {
		return err
	}
	at, err := s.cfg.Dialect.ScanTime(sent)
	if err != nil {
		return fmt.Errorf("signal %s: the journal's clock: %w", sig.Name, err)
	}
	sig.SentAt = at
	return nil
}

// NextWake returns how long until the earliest wake-up time of a waiting
// run of workflows that a worker claims (not a child its parent runs),
// by the journal's clock; ok is false when none has one.
func (s *Store) NextWake(ctx context.Context, workflows []string) (d time.Duration, ok bool, err error) {
	if len(workflows) == 0 {
		return 0, false, nil
	}
	dl := s.cfg.Dialect
	q, args := NextWakeQuery(dl, s.cfg.Clock(), workflows)
	var wake, at any
	s.cfg.Reads.Add(1)
	err = s.cfg.Read.QueryRow(ctx, q, args...).Scan(&wake, &at)
	if dl.NoRows(err) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("next wake-up: %w", err)
	}
	w, err := dl.ScanTime(wake)
	if err != nil {
		return 0, false, fmt.Errorf("next wake-up: wake_at %v: %w", wake, err)
	}
	t, err := dl.ScanTime(at)
	if err != nil {
		return 0, false, fmt.Errorf("next wake-up: the journal's clock %v: %w", at, err)
	}
	return max(w.Sub(t), 0), true, nil
}

// NextWakeQuery is [Store.NextWake]'s query in dialect d for workflows
// (at least one), and its arguments, now being the journal's clock as the
// host reads it: the earliest wake-up time, and the journal's clock.
func NextWakeQuery(d Dialect, now time.Time, workflows []string) (string, []any) {
	a := NewArgs(d)
	clock := d.Now(a, now)
	in, args := d.AnyOf("workflow", a.Len()+1, workflows)
	// Set bounds the range read of the index on (status, wake_at): the
	// runs that wait for a signal without a timeout are not walked.
	q := `SELECT wake_at, ` + clock + ` FROM {schema}.resume_runs
		WHERE status = 'waiting' AND ` + d.Set("wake_at") + ` AND (parent_run_id = '' OR detached) AND ` + in + `
		ORDER BY wake_at LIMIT 1`
	return d.Rebind(q), append(a.Values(), args...)
}
