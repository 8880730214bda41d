package sqlitejournal

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/resumegen/resumegen/runtime/journal"
)

// StartKeyed starts a run by start key (see [journal.KeyedStarter]) in
// one write transaction: SQLite's single writer is the key's lock, so two
// processes starting one key at once create one run, and a debounce
// cannot replace the input of a run a claim took meanwhile.
func (j *Journal) StartKeyed(ctx context.Context, k journal.KeyedStart) (journal.RunRecord, journal.KeyedOutcome, error) {
	if err := journal.CheckKeyedStart(k); err != nil {
		return journal.RunRecord{}, "", err
	}
	var stored journal.RunRecord
	var outcome journal.KeyedOutcome
	err := j.group.Do(ctx, func(ctx context.Context, tx *sql.Tx) error {
		return j.withTx(ctx, tx, func(tx *sql.Tx) (err error) {
			stored, outcome, err = j.startKeyed(ctx, tx, k)
			return err
		})
	})
	if err != nil {
		return journal.RunRecord{}, "", fmt.Errorf("start key %q of %s: %w", k.Key, k.Run.Workflow, err)
	}
	return stored, outcome, nil
}

func (j *Journal) startKeyed(ctx context.Context, tx *sql.Tx, k journal.KeyedStart) (journal.RunRecord, journal.KeyedOutcome, error) {
	var seq int64
	var last string
	err := tx.QueryRowContext(ctx, `SELECT seq, run_id FROM resume_start_keys WHERE workflow = ? AND start_key = ?`,
		k.Run.Workflow, k.Key).Scan(&seq, &last)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return journal.RunRecord{}, "", fmt.Errorf("read the key's row: %w", writeLock(err))
	}
	if last != "" {
		r, err := j.run(ctx, tx, last)
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
			now := j.clock()
			if _, err := tx.ExecContext(ctx, `UPDATE resume_runs SET input = ?, wake_at = ?, updated_at = ? WHERE run_id = ?`,
				string(input), ts(k.Run.WakeAt), ts(now), r.RunID); err != nil {
				return journal.RunRecord{}, "", fmt.Errorf("run %s: replace its input: %w", r.RunID, writeLock(err))
			}
			r.Input, r.WakeAt, r.UpdatedAt = input, k.Run.WakeAt, now
			return r, journal.KeyedReplaced, nil
		}
	}
	r := k.Run
	seq++
	r.RunID = journal.KeyedRunID(k.Key, seq)
	r.LeaseOwner, r.Parent = "", ""
	r.WaitKind, r.WaitName = "", ""
	if k.Mode == journal.StartDebounce {
		r.WaitKind = journal.WaitStart
	}
	if r.Input, err = k.Input(r.RunID); err != nil {
		return journal.RunRecord{}, "", fmt.Errorf("run %s: %w", r.RunID, err)
	}
	if err := journal.CheckRun(r); err != nil {
		return journal.RunRecord{}, "", err
	}
	r = r.Created()
	stored, created, err := j.createRun(ctx, tx, r, 0)
	if err != nil {
		return journal.RunRecord{}, "", err
	}
	if !created {
		// KEY#N exists though the key's row did not name it: a run started
		// by id under a keyed run's name. Refused rather than adopted.
		return stored, "", fmt.Errorf("run %s exists, not started by its key: %w", r.RunID, journal.ErrRunConflict)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO resume_start_keys (workflow, start_key, seq, run_id) VALUES (?, ?, ?, ?)
		ON CONFLICT (workflow, start_key) DO UPDATE SET seq = excluded.seq, run_id = excluded.run_id`,
		r.Workflow, k.Key, seq, r.RunID); err != nil {
		return journal.RunRecord{}, "", fmt.Errorf("run %s: record it on its key: %w", r.RunID, writeLock(err))
	}
	return stored, journal.KeyedCreated, nil
}
