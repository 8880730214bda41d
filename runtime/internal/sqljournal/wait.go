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

// KeepSignal stores signal s of run r in tx, setting its Seq (the next of
// the run's) and SentAt (by the journal's clock): how is the backend's
// (PostgreSQL also locks the run's ancestors, so that a parent suspending
// for r at this moment sees it woken).
type KeepSignal func(ctx context.Context, tx Executor, r journal.RunRecord, s *journal.SignalRecord) error

// Signal keeps s for the run's next await of s.Name, with keep, and wakes
// the run if it waits for that event, and its ancestors that wait for it,
// in one transaction holding the run's row. A finished run, or one asked
// to stop, refuses it with journal.ErrRunFinished.
func (s *Store) Signal(ctx context.Context, sig journal.SignalRecord, keep KeepSignal) (journal.SignalRecord, error) {
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
		if err := keep(ctx, tx, r, &sig); err != nil {
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
