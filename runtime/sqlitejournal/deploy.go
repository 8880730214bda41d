package sqlitejournal

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/resumegen/resumegen/runtime/journal"
)

// Advertise replaces the versions owner advertised with versions, seen now
// by the journal's clock read once the write lock is held; nil withdraws
// them.
func (j *Journal) Advertise(ctx context.Context, owner string, versions []journal.WorkflowVersion) error {
	err := j.inTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM resume_workers WHERE owner = ?`, owner); err != nil {
			return writeLock(err)
		}
		now := ts(j.clock())
		for _, v := range versions {
			if _, err := tx.ExecContext(ctx, `INSERT INTO resume_workers (owner, workflow, version, seen_at) VALUES (?, ?, ?, ?)
				ON CONFLICT (owner, workflow, version) DO UPDATE SET seen_at = excluded.seen_at`, owner, v.Workflow, v.Version, now); err != nil {
				return writeLock(err)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("owner %s: advertise: %w", owner, err)
	}
	return nil
}

// MoveRun re-pins the run l holds to m.To and m.Workflow, relabels its step
// rows by m.Renames and appends m to its moves, in one transaction fenced
// by the lease: nothing is written unless l is still the run's.
func (j *Journal) MoveRun(ctx context.Context, l journal.Lease, m journal.Move) error {
	err := j.inTx(ctx, func(tx *sql.Tx) error {
		r, err := j.run(ctx, tx, l.RunID)
		if err != nil {
			return err
		}
		if r.LeaseOwner != l.Owner || r.Epoch != l.Epoch {
			return fmt.Errorf("epoch %d: %w", l.Epoch, journal.ErrLeaseLost)
		}
		if r.Unreadable != "" {
			return fmt.Errorf("its row cannot be read: %s", r.Unreadable)
		}
		if err := j.relabel(ctx, tx, l.RunID, m.Renames); err != nil {
			return err
		}
		now := j.clock().UTC()
		m.At = now
		if m.Workflow == "" {
			m.Workflow = r.Workflow
		}
		moves, err := journal.EncodeMoves(append(r.Moves, m))
		if err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, `UPDATE resume_runs SET workflow = ?, version = ?, moves = ?, failed_step = ?, updated_at = ?
			WHERE run_id = ? AND lease_owner = ? AND epoch = ?`,
			m.Workflow, m.To, string(moves), journal.RenameKey(r.FailedStep, m.Renames), ts(now), l.RunID, l.Owner, l.Epoch)
		if err != nil {
			return writeLock(err)
		}
		return leaseHeld(res, l)
	})
	if err != nil {
		return fmt.Errorf("run %s: move to version %s: %w", l.RunID, m.To, err)
	}
	return nil
}

// relabel renames the run's step rows by renames, in tx: first to a key
// no step can have (a name holds no ':'), then to their new key, so that
// renames that swap or chain names never meet a row half renamed.
func (j *Journal) relabel(ctx context.Context, tx *sql.Tx, runID string, renames map[string]string) error {
	if len(renames) == 0 {
		return nil
	}
	j.reads.Add(1)
	rows, err := tx.QueryContext(ctx, `SELECT s.step_key, s.name, s.status, s.final,
			EXISTS (SELECT 1 FROM resume_runs c WHERE c.run_id = s.run_id || '/' || s.step_key)
		FROM resume_steps s WHERE s.run_id = ?`, runID)
	if err != nil {
		return err
	}
	var all []journal.RelabelRow
	for rows.Next() {
		var s journal.RelabelRow
		var status string
		if err := rows.Scan(&s.Key, &s.Name, &status, &s.Final, &s.HasChild); err != nil {
			rows.Close()
			return err
		}
		s.Status = journal.StepStatus(status)
		all = append(all, s)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	plan, err := journal.PlanRelabel(runID, all, renames)
	if err != nil {
		return err
	}
	return journal.Relabel(plan, func(from, to, name string) error {
		_, err := tx.ExecContext(ctx, `UPDATE resume_steps SET step_key = ?, name = ? WHERE run_id = ? AND step_key = ?`,
			to, name, runID, from)
		return writeLock(err)
	})
}
