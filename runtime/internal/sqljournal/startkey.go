package sqljournal

import (
	"context"
	"errors"
	"fmt"

	"github.com/resumegen/resumegen/runtime/journal"
)

// StartKeyed starts a run by start key (journal.KeyedStarter) in one
// transaction that takes the key's row first (inserted if it is new, then
// read with the dialect's ForUpdate): two processes starting one key at
// once queue on that row (PostgreSQL) or on the one writer (SQLite) and
// create one run; the key's last run is read locked, so a debounce cannot
// replace the input of a run a claim took meanwhile. insert is the
// backend's run insert, its CreateRun's rule in tx.
func (s *Store) StartKeyed(ctx context.Context, k journal.KeyedStart, insert InsertRun) (journal.RunRecord, journal.KeyedOutcome, error) {
	if err := journal.CheckKeyedStart(k); err != nil {
		return journal.RunRecord{}, "", err
	}
	var stored journal.RunRecord
	var outcome journal.KeyedOutcome
	err := s.cfg.InTx(ctx, func(tx Executor) (err error) {
		stored, outcome, err = s.startKeyed(ctx, tx, k, insert)
		return err
	})
	if err != nil {
		return journal.RunRecord{}, "", fmt.Errorf("start key %q of %s: %w", k.Key, k.Run.Workflow, err)
	}
	return stored, outcome, nil
}

func (s *Store) startKeyed(ctx context.Context, tx Executor, k journal.KeyedStart, insert InsertRun) (journal.RunRecord, journal.KeyedOutcome, error) {
	d := s.cfg.Dialect
	if _, err := tx.Exec(ctx, d.Rebind(`INSERT INTO {schema}.resume_start_keys (workflow, start_key, seq, run_id)
		VALUES ($1, $2, 0, '') ON CONFLICT DO NOTHING`), k.Run.Workflow, k.Key); err != nil {
		return journal.RunRecord{}, "", fmt.Errorf("store the key's row: %w", d.WriteErr(err))
	}
	var seq int64
	var last string
	if err := tx.QueryRow(ctx, d.Rebind(`SELECT seq, run_id FROM {schema}.resume_start_keys
		WHERE workflow = $1 AND start_key = $2 `+d.ForUpdate()), k.Run.Workflow, k.Key).Scan(&seq, &last); err != nil {
		return journal.RunRecord{}, "", fmt.Errorf("lock the key's row: %w", d.WriteErr(err))
	}
	if last != "" {
		r, err := s.run(ctx, tx, last)
		switch {
		case errors.Is(err, journal.ErrRunNotFound):
			// Purged, or deleted by hand: the key starts its next run.
		case err != nil:
			return journal.RunRecord{}, "", err
		case k.Mode == journal.StartSingleton && r.HoldsKey():
			return r, journal.KeyedDropped, nil
		case k.Mode == journal.StartDebounce && r.Replaceable():
			return s.replaceInput(ctx, tx, k, r)
		}
	}
	r := k.Run
	seq++
	r.RunID = journal.KeyedRunID(k.Key, seq)
	r.LeaseOwner, r.Parent, r.WaitKind, r.WaitName = "", "", "", ""
	if k.Mode == journal.StartDebounce {
		r.WaitKind = journal.WaitStart
	}
	var err error
	if r.Input, err = k.Input(r.RunID); err != nil {
		return journal.RunRecord{}, "", fmt.Errorf("run %s: %w", r.RunID, err)
	}
	if err := journal.CheckRun(r); err != nil {
		return journal.RunRecord{}, "", err
	}
	stored, created, err := insert(ctx, tx, r.Created())
	if err != nil {
		return journal.RunRecord{}, "", err
	}
	if !created {
		// KEY#N exists though the key's row did not name it: a run started
		// by id under a keyed run's name. Refused rather than adopted.
		return stored, "", fmt.Errorf("run %s exists, not started by its key: %w", r.RunID, journal.ErrRunConflict)
	}
	if _, err := tx.Exec(ctx, d.Rebind(`UPDATE {schema}.resume_start_keys SET seq = $1, run_id = $2
		WHERE workflow = $3 AND start_key = $4`), seq, r.RunID, r.Workflow, k.Key); err != nil {
		return journal.RunRecord{}, "", fmt.Errorf("run %s: record it on its key: %w", r.RunID, d.WriteErr(err))
	}
	return stored, journal.KeyedCreated, nil
}

// replaceInput gives r, the key's unstarted run, the debounce's input and
// start time.
func (s *Store) replaceInput(ctx context.Context, tx Executor, k journal.KeyedStart, r journal.RunRecord) (journal.RunRecord, journal.KeyedOutcome, error) {
	input, err := k.Input(r.RunID)
	if err == nil {
		err = journal.CheckValue("input", input)
	}
	if err != nil {
		return journal.RunRecord{}, "", fmt.Errorf("run %s: %w", r.RunID, err)
	}
	d := s.cfg.Dialect
	a := NewArgs(d)
	q := `UPDATE {schema}.resume_runs SET input = ` + a.Add(string(input)) + `, wake_at = ` + a.Add(d.Time(k.Run.WakeAt)) +
		`, updated_at = ` + d.Now(a, s.cfg.Clock()) + ` WHERE run_id = ` + a.Add(r.RunID)
	if _, err := tx.Exec(ctx, d.Rebind(q), a.Values()...); err != nil {
		return journal.RunRecord{}, "", fmt.Errorf("run %s: replace its input: %w", r.RunID, d.WriteErr(err))
	}
	stored, err := s.run(ctx, tx, r.RunID)
	if err != nil {
		return journal.RunRecord{}, "", err
	}
	return stored, journal.KeyedReplaced, nil
}
