package sqljournal

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/resumegen/resumegen/runtime/journal"
)

// RecordAction inserts the operator's action ctx carries
// (journal.WithAction), if any, for run runID, in tx, whose caller holds
// the run's row locked: it commits with the action or not at all. Its
// time is the journal's clock.
func (s *Store) RecordAction(ctx context.Context, tx Executor, runID string) error {
	act, ok := journal.ActionOf(ctx)
	if !ok {
		return nil
	}
	d := s.cfg.Dialect
	a := NewArgs(d)
	id := a.Add(runID)
	q := `INSERT INTO {schema}.resume_actions (run_id, seq, action, detail, actor, origin, via, at)
		SELECT ` + id + `, COALESCE(MAX(seq), 0) + 1, ` + a.Add(act.Action) + `, ` + a.Add(act.Detail) + `, ` +
		a.Add(act.Actor) + `, ` + a.Add(act.Origin) + `, ` + a.Add(act.Via) + `, ` + d.Now(a, s.cfg.Clock()) + `
		FROM {schema}.resume_actions WHERE run_id = ` + id
	if _, err := tx.Exec(ctx, d.Rebind(q), a.Values()...); err != nil {
		return fmt.Errorf("run %s: record the operator's %s: %w", runID, act.Action, d.WriteErr(err))
	}
	return nil
}

// ListActions lists the operators' actions on run runID, oldest first
// (journal.Auditor).
func (s *Store) ListActions(ctx context.Context, runID string) ([]journal.ActionRecord, error) {
	s.cfg.Reads.Add(1)
	rows, err := s.cfg.Read.Query(ctx, s.sql.listActions, runID)
	if err != nil {
		return nil, fmt.Errorf("run %s: list actions: %w", runID, err)
	}
	return Collect(rows, "run "+runID+": list actions", func(row Row) (journal.ActionRecord, error) {
		a := journal.ActionRecord{RunID: runID}
		var at any
		if err := row.Scan(&a.Seq, &a.Action, &a.Detail, &a.Actor, &a.Origin, &a.Via, &at); err != nil {
			return a, err
		}
		a.At, _ = s.cfg.Dialect.ScanTime(at) // an unreadable time is left zero, the action kept
		return a, nil
	})
}

// RecordKeys notes the ids of the keys that seal the journal's values
// (journal.KeyRegistry), stamped with the journal's clock, in one
// transaction; an id seen before keeps its time.
func (s *Store) RecordKeys(ctx context.Context, ids []string) error {
	d := s.cfg.Dialect
	return s.cfg.InTx(ctx, func(tx Executor) error {
		now := s.cfg.Clock()
		for _, id := range ids {
			a := NewArgs(d)
			q := `INSERT INTO {schema}.resume_keys (key_id, first_sealed_at) VALUES (` + a.Add(id) + `, ` + d.Now(a, now) + `)
				ON CONFLICT (key_id) DO NOTHING`
			if _, err := tx.Exec(ctx, d.Rebind(q), a.Values()...); err != nil {
				return fmt.Errorf("record sealing key %q: %w", id, d.WriteErr(err))
			}
		}
		return nil
	})
}

// SealingKeys lists the recorded sealing keys, first seen first
// (journal.KeyRegistry).
func (s *Store) SealingKeys(ctx context.Context) ([]journal.KeyRecord, error) {
	s.cfg.Reads.Add(1)
	rows, err := s.cfg.Read.Query(ctx, s.sql.sealingKeys)
	if err != nil {
		return nil, fmt.Errorf("list sealing keys: %w", err)
	}
	return Collect(rows, "list sealing keys", func(row Row) (journal.KeyRecord, error) {
		var k journal.KeyRecord
		var at any
		if err := row.Scan(&k.KeyID, &at); err != nil {
			return k, err
		}
		k.FirstSealedAt, _ = s.cfg.Dialect.ScanTime(at) // an unreadable time is left zero, the key kept
		return k, nil
	})
}

// run reads run runID in tx, its row locked where the dialect locks rows.
func (s *Store) run(ctx context.Context, tx Executor, runID string) (journal.RunRecord, error) {
	s.cfg.Reads.Add(1)
	r, err := s.cfg.ScanRun(tx.QueryRow(ctx, s.sql.selectRun, runID))
	if s.cfg.Dialect.NoRows(err) {
		return r, fmt.Errorf("run %s: %w", runID, journal.ErrRunNotFound)
	}
	if err != nil {
		return r, fmt.Errorf("run %s: read: %w", runID, err)
	}
	return r, nil
}

// exec runs a write of tx, its error classified and naming what.
func (s *Store) exec(ctx context.Context, tx Executor, what, sql string, args ...any) error {
	if _, err := tx.Exec(ctx, sql, args...); err != nil {
		return fmt.Errorf("%s: %w", what, s.cfg.Dialect.WriteErr(err))
	}
	return nil
}

// reopen makes run runID pending, records the operator's action and wakes
// the parents that wait for it, in tx; what names the operation.
func (s *Store) reopen(ctx context.Context, tx Executor, runID, what string) error {
	now := s.cfg.Dialect.Time(time.Now())
	if err := s.exec(ctx, tx, "run "+runID+": "+what, s.sql.makePending, now, runID); err != nil {
		return err
	}
	return s.settled(ctx, tx, runID, what)
}

// settled records the operator's action on run runID and wakes the
// parents that wait, parked, for it, in tx.
func (s *Store) settled(ctx context.Context, tx Executor, runID, what string) error {
	if err := s.RecordAction(ctx, tx, runID); err != nil {
		return err
	}
	return s.exec(ctx, tx, "run "+runID+": "+what+": wake its parents", s.sql.wakeParents, s.cfg.Dialect.Time(time.Now()), runID)
}

// Resolve applies a person's resolution to an in_flight step of a run in
// needs_attention, atomically, with the run and step rows locked.
func (s *Store) Resolve(ctx context.Context, runID, stepKey string, res journal.Resolution) error {
	if err := journal.CheckValue("resolution result", res.Result); err != nil {
		return fmt.Errorf("run %s, step %s: resolve: %w", runID, stepKey, err)
	}
	d := s.cfg.Dialect
	return s.cfg.InTx(ctx, func(tx Executor) error {
		r, err := s.run(ctx, tx, runID)
		if err != nil {
			return err
		}
		if r.Status != journal.StatusNeedsAttention {
			return fmt.Errorf("run %s is %s, not needs_attention: %w", runID, r.Status, journal.ErrRunBusy)
		}
		var status string
		s.cfg.Reads.Add(1)
		err = tx.QueryRow(ctx, s.sql.selectStepStatus, runID, stepKey).Scan(&status)
		if d.NoRows(err) {
			return fmt.Errorf("run %s has no step %s: %w", runID, stepKey, journal.ErrStepNotFound)
		}
		if err != nil {
			return fmt.Errorf("run %s, step %s: read: %w", runID, stepKey, err)
		}
		if journal.StepStatus(status) != journal.StepInFlight {
			return fmt.Errorf("run %s, step %s is %s: %w", runID, stepKey, status, journal.ErrNotInFlight)
		}
		now := d.Time(time.Now())
		what := "run " + runID + ", step " + stepKey + ": resolve"
		if res.Done {
			result := res.Result
			if len(result) == 0 {
				result = json.RawMessage("null")
			}
			err = s.exec(ctx, tx, what, s.sql.resolveDone, string(result), now, runID, stepKey)
		} else {
			err = s.exec(ctx, tx, what, s.sql.resolveRedo, now, runID, stepKey, res.RedoText())
		}
		if err != nil {
			return err
		}
		return s.reopen(ctx, tx, runID, "resolve")
	})
}

// Retry makes a failed run pending and reopens the step whose failure ended
// it, with a fresh budget; other failed rows stay final. A run parked on a
// journal row a person repaired is made pending: its next entry reads the
// row anew.
func (s *Store) Retry(ctx context.Context, runID string) error {
	return s.cfg.InTx(ctx, func(tx Executor) error {
		r, err := s.run(ctx, tx, runID)
		if err != nil {
			return err
		}
		if r.Status == journal.StatusNeedsAttention && r.AttentionKind == journal.AttentionKindJournal {
			return s.reopen(ctx, tx, runID, "retry")
		}
		if r.Status != journal.StatusFailed {
			return fmt.Errorf("run %s is %s: %w", runID, r.Status, journal.ErrNotFailed)
		}
		what := "run " + runID + ": retry"
		if err := s.exec(ctx, tx, what, s.sql.retrySteps, runID, r.FailedStep); err != nil {
			return err
		}
		if err := s.exec(ctx, tx, what, s.sql.retryRun, s.cfg.Dialect.Time(time.Now()), runID); err != nil {
			return err
		}
		return s.RecordAction(ctx, tx, runID)
	})
}

// AcceptVersion moves a run stopped on a version change to version,
// pending, with its row locked; any other run is refused and left
// unchanged. The move is appended to the run's moves as the dialect
// stamps it (see Dialect.AppendMove).
func (s *Store) AcceptVersion(ctx context.Context, runID, version string) error {
	return s.cfg.InTx(ctx, func(tx Executor) error {
		r, err := s.run(ctx, tx, runID)
		if err != nil {
			return err
		}
		if err := Acceptable(r); err != nil {
			return err
		}
		m := journal.Move{Workflow: r.Workflow, From: r.Version, To: version, Why: "accepted by an operator", By: "operator"}
		now := time.Now()
		d := s.cfg.Dialect
		expr, moves, err := d.AppendMove(r.Moves, m, now, d.Param(3))
		if err != nil {
			return fmt.Errorf("run %s: accept version %s: %w", runID, version, err)
		}
		if err := s.exec(ctx, tx, "run "+runID+": accept version", strings.Replace(s.sql.acceptVersion, "{moves}", expr, 1),
			version, d.Time(now), moves, runID); err != nil {
			return err
		}
		return s.settled(ctx, tx, runID, "accept version")
	})
}

// Acceptable refuses a version change for a run not stopped on one.
func Acceptable(r journal.RunRecord) error {
	if r.Status != journal.StatusNeedsAttention {
		return fmt.Errorf("run %s is %s: %w", r.RunID, r.Status, journal.ErrNotVersionStop)
	}
	if r.AttentionKind != journal.AttentionKindVersion {
		return fmt.Errorf("run %s needs attention for step %s, not for a version: %w", r.RunID, r.AttentionStep, journal.ErrNotVersionStop)
	}
	return nil
}
