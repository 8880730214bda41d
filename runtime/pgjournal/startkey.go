package pgjournal

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/resumegen/resumegen/runtime/journal"
)

// StartKeyed starts a run by start key (see [journal.KeyedStarter]) in
// one transaction that locks the key's row first (created if it is new):
// two processes starting one key at once queue on that lock and create
// one run; the key's last run is read FOR UPDATE, so a debounce cannot
// replace the input of a run a claim took meanwhile (the claim waits, or
// the debounce sees it claimed). Safe behind a transaction pooler: it
// keeps no session state.
func (j *Journal) StartKeyed(ctx context.Context, k journal.KeyedStart) (journal.RunRecord, journal.KeyedOutcome, error) {
	if err := journal.CheckKeyedStart(k); err != nil {
		return journal.RunRecord{}, "", err
	}
	var stored journal.RunRecord
	var outcome journal.KeyedOutcome
	err := j.inTx(ctx, func(tx pgx.Tx) (err error) {
		stored, outcome, err = j.startKeyed(ctx, tx, k)
		return err
	})
	if err != nil {
		return journal.RunRecord{}, "", fmt.Errorf("start key %q of %s: %w", k.Key, k.Run.Workflow, err)
	}
	return stored, outcome, nil
}

func (j *Journal) startKeyed(ctx context.Context, tx pgx.Tx, k journal.KeyedStart) (journal.RunRecord, journal.KeyedOutcome, error) {
	if _, err := tx.Exec(ctx, qualify(`INSERT INTO {schema}.resume_start_keys (workflow, start_key, seq, run_id)
		VALUES ($1, $2, 0, '') ON CONFLICT DO NOTHING`, j.schema), k.Run.Workflow, k.Key); err != nil {
		return journal.RunRecord{}, "", fmt.Errorf("store the key's row: %w", err)
	}
	var seq int64
	var last string
	if err := tx.QueryRow(ctx, qualify(`SELECT seq, run_id FROM {schema}.resume_start_keys
		WHERE workflow = $1 AND start_key = $2 FOR UPDATE`, j.schema), k.Run.Workflow, k.Key).Scan(&seq, &last); err != nil {
		return journal.RunRecord{}, "", fmt.Errorf("lock the key's row: %w", err)
	}
	if last != "" {
		r, err := j.run(ctx, tx, j.sql.selectRunForUpdate, last)
		switch {
		case errors.Is(err, journal.ErrRunNotFound):
			// Purged, or deleted by hand: the key starts its next run.
		case err != nil:
			return journal.RunRecord{}, "", err
		case k.Mode == journal.StartSingleton && r.HoldsKey():
			return r, journal.KeyedDropped, nil
		case k.Mode == journal.StartDebounce && r.Replaceable():
			input, err := k.Input(r.RunID)
			if err == nil {
				err = journal.CheckValue("input", input)
			}
			if err != nil {
				return journal.RunRecord{}, "", fmt.Errorf("run %s: %w", r.RunID, err)
			}
			var updated time.Time
			if err := tx.QueryRow(ctx, qualify(`UPDATE {schema}.resume_runs SET input = $1, wake_at = $2, updated_at = clock_timestamp()
				WHERE run_id = $3 RETURNING updated_at`, j.schema), string(input), k.Run.WakeAt, r.RunID).Scan(&updated); err != nil {
				return journal.RunRecord{}, "", fmt.Errorf("run %s: replace its input: %w", r.RunID, err)
			}
			r.Input, r.WakeAt, r.UpdatedAt = input, k.Run.WakeAt, updated
			return r, journal.KeyedReplaced, nil
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
	r = r.Created()
	var timeout *time.Duration
	if !r.Deadline.IsZero() {
		d := r.Deadline.Sub(r.CreatedAt)
		timeout = &d
	}
	stored, created, err := j.insertRun(ctx, tx, r, nil, timeout)
	if err != nil {
		return journal.RunRecord{}, "", err
	}
	if !created {
		// KEY#N exists though the key's row did not name it: a run started
		// by id under a keyed run's name. Refused rather than adopted.
		return stored, "", fmt.Errorf("run %s exists, not started by its key: %w", r.RunID, journal.ErrRunConflict)
	}
	if _, err := tx.Exec(ctx, qualify(`UPDATE {schema}.resume_start_keys SET seq = $1, run_id = $2
		WHERE workflow = $3 AND start_key = $4`, j.schema), seq, r.RunID, r.Workflow, k.Key); err != nil {
		return journal.RunRecord{}, "", fmt.Errorf("run %s: record it on its key: %w", r.RunID, err)
	}
	return stored, journal.KeyedCreated, nil
}
