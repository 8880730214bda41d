package sqljournal

import (
	"context"
	"fmt"

	"github.com/resumegen/resumegen/runtime/journal"
)

// ContinueRun ends the run l holds as succeeded, continued as next.RunID,
// and creates next pending, continuing it, in one transaction holding the
// old run's row (see journal.Continuer): nothing is written unless l is
// still the run's and next.RunID is free.
func (s *Store) ContinueRun(ctx context.Context, l journal.Lease, r, next journal.RunRecord) (journal.RunRecord, error) {
	if err := journal.CheckValue("output", r.Output); err != nil {
		return journal.RunRecord{}, fmt.Errorf("run %s: continue as %s: %w", l.RunID, next.RunID, err)
	}
	if err := journal.CheckValue("input", next.Input); err != nil {
		return journal.RunRecord{}, fmt.Errorf("run %s: continue as %s: %w", l.RunID, next.RunID, err)
	}
	var stored journal.RunRecord
	err := s.cfg.InTx(ctx, func(tx Executor) error {
		old, err := s.run(ctx, tx, l.RunID)
		if err != nil {
			return err
		}
		if old.LeaseOwner != l.Owner || old.Epoch != l.Epoch {
			return fmt.Errorf("epoch %d: %w", l.Epoch, journal.ErrLeaseLost)
		}
		d, now := s.cfg.Dialect, s.cfg.Clock()
		a := NewArgs(d)
		var output any
		if r.Output != nil {
			output = string(r.Output)
		}
		q := `UPDATE {schema}.resume_runs SET status = 'succeeded', output = ` + a.Add(output) +
			`, error = '', attention_step = '', attention_kind = '', failed_step = '', error_detail = NULL,
			lease_owner = '', lease_until = ` + d.NoTime() + `, progress_attempt = attempts,
			wait_kind = '', wait_name = '', wake_at = ` + d.NoTime() + `, continued_as = ` + a.Add(next.RunID) +
			`, updated_at = ` + d.Now(a, now) +
			` WHERE run_id = ` + a.Add(l.RunID) + ` AND lease_owner = ` + a.Add(l.Owner) + ` AND epoch = ` + a.Add(l.Epoch)
		n, err := tx.Exec(ctx, d.Rebind(q), a.Values()...)
		if err != nil {
			return d.WriteErr(err)
		}
		if err := LeaseHeld(n, l); err != nil {
			return err
		}
		a = NewArgs(d)
		at := d.Now(a, now)
		q = `INSERT INTO {schema}.resume_runs (run_id, workflow, version, status, input, created_at, updated_at,
				continued_from, cancel_requested_at, deadline, queue, queue_key, priority)
			VALUES (` + a.Add(next.RunID) + `, ` + a.Add(next.Workflow) + `, ` + a.Add(next.Version) + `, 'pending', ` +
			a.Add(string(next.Input)) + `, ` + at + `, ` + at + `, ` + a.Add(l.RunID) + `, ` + a.Add(d.Time(old.CancelRequested)) +
			`, ` + a.Add(d.Time(next.Deadline)) + `, ` + a.Add(next.Queue) + `, ` + a.Add(next.QueueKey) + `, ` + a.Add(next.Priority) + `)
			ON CONFLICT (run_id) DO NOTHING`
		n, err = tx.Exec(ctx, d.Rebind(q), a.Values()...)
		if err != nil {
			return d.WriteErr(err)
		}
		if n == 0 {
			return fmt.Errorf("run %s exists already: %w", next.RunID, journal.ErrRunConflict)
		}
		// A start key whose last run this was names the next one: a
		// singleton's chain holds its key for as long as it continues.
		a = NewArgs(d)
		q = `UPDATE {schema}.resume_start_keys SET run_id = ` + a.Add(next.RunID) + ` WHERE run_id = ` + a.Add(l.RunID)
		if _, err := tx.Exec(ctx, d.Rebind(q), a.Values()...); err != nil {
			return fmt.Errorf("move its start key: %w", d.WriteErr(err))
		}
		stored, err = s.run(ctx, tx, next.RunID)
		return err
	})
	if err != nil {
		return journal.RunRecord{}, fmt.Errorf("run %s: continue as %s: %w", l.RunID, next.RunID, err)
	}
	return stored, nil
}
