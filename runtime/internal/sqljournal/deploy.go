package sqljournal

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/resumegen/resumegen/runtime/journal"
)

// advertiseRows bounds the rows of one advertisement's insert (SQLite
// binds at most 32,766 arguments a statement).
const advertiseRows = 500

// Advertise replaces the versions owner advertised with versions, seen
// now by the journal's clock (read once the backend holds its write
// lock), in one transaction; nil withdraws them. A version listed twice
// is advertised once.
func (s *Store) Advertise(ctx context.Context, owner string, versions []journal.WorkflowVersion) error {
	d := s.cfg.Dialect
	vs := slices.Clone(versions)
	slices.SortFunc(vs, func(a, b journal.WorkflowVersion) int {
		return cmp.Or(cmp.Compare(a.Workflow, b.Workflow), cmp.Compare(a.Version, b.Version))
	})
	vs = slices.Compact(vs)
	err := s.cfg.InTx(ctx, func(tx Executor) error {
		if _, err := tx.Exec(ctx, s.sql.deleteWorkers, owner); err != nil {
			return d.WriteErr(err)
		}
		now := s.cfg.Clock()
		for len(vs) > 0 {
			chunk := vs[:min(len(vs), advertiseRows)]
			vs = vs[len(chunk):]
			a := NewArgs(d)
			who, at := a.Add(owner), d.Now(a, now)
			rows := make([]string, len(chunk))
			for i, v := range chunk {
				rows[i] = "(" + who + ", " + a.Add(v.Workflow) + ", " + a.Add(v.Version) + ", " + at + ")"
			}
			q := `INSERT INTO {schema}.resume_workers (owner, workflow, version, seen_at) VALUES ` + strings.Join(rows, ", ") + `
				ON CONFLICT (owner, workflow, version) DO UPDATE SET seen_at = excluded.seen_at`
			if _, err := tx.Exec(ctx, d.Rebind(q), a.Values()...); err != nil {
				return d.WriteErr(err)
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
// rows by m.Renames and appends m, stamped with the journal's clock, to
// its moves, in one transaction holding the run's row: nothing is written
// unless l is still the run's.
func (s *Store) MoveRun(ctx context.Context, l journal.Lease, m journal.Move) error {
	err := s.cfg.InTx(ctx, func(tx Executor) error {
		r, err := s.run(ctx, tx, l.RunID)
		if err != nil {
			return err
		}
		if r.LeaseOwner != l.Owner || r.Epoch != l.Epoch {
			return fmt.Errorf("epoch %d: %w", l.Epoch, journal.ErrLeaseLost)
		}
		if r.Unreadable != "" {
			return fmt.Errorf("its row cannot be read: %s", r.Unreadable)
		}
		if err := s.relabel(ctx, tx, l.RunID, m.Renames); err != nil {
			return err
		}
		if m.Workflow == "" {
			m.Workflow = r.Workflow
		}
		d, now := s.cfg.Dialect, s.cfg.Clock()
		a := NewArgs(d)
		q := `UPDATE {schema}.resume_runs SET workflow = ` + a.Add(m.Workflow) + `, version = ` + a.Add(m.To) +
			`, failed_step = ` + a.Add(journal.RenameKey(r.FailedStep, m.Renames))
		expr, moves, err := d.AppendMove(r.Moves, m, now, d.Param(a.Len()+1))
		if err != nil {
			return err
		}
		a.Add(moves)
		q += `, moves = ` + expr + `, updated_at = ` + d.Now(a, now) +
			` WHERE run_id = ` + a.Add(l.RunID) + ` AND lease_owner = ` + a.Add(l.Owner) + ` AND epoch = ` + a.Add(l.Epoch)
		n, err := tx.Exec(ctx, d.Rebind(q), a.Values()...)
		if err != nil {
			return d.WriteErr(err)
		}
		return LeaseHeld(n, l)
	})
	if err != nil {
		return fmt.Errorf("run %s: move to version %s: %w", l.RunID, m.To, err)
	}
	return nil
}

// relabel renames the run's step rows by renames, in tx: first to a key no
// step can have (a name holds no ':'), then to their new key, so that
// renames that swap or chain names never meet a row half renamed.
func (s *Store) relabel(ctx context.Context, tx Executor, runID string, renames map[string]string) error {
	if len(renames) == 0 {
		return nil
	}
	s.cfg.Reads.Add(1)
	rows, err := tx.Query(ctx, s.sql.selectRelabel, runID)
	if err != nil {
		return err
	}
	all, err := Collect(rows, "run "+runID+": read its steps", func(row Row) (journal.RelabelRow, error) {
		var r journal.RelabelRow
		var status string
		err := row.Scan(&r.Key, &r.Name, &status, &r.Final, &r.HasChild)
		r.Status = journal.StepStatus(status)
		return r, err
	})
	if err != nil {
		return err
	}
	plan, err := journal.PlanRelabel(runID, all, renames)
	if err != nil {
		return err
	}
	return journal.Relabel(plan, func(from, to, name string) error {
		_, err := tx.Exec(ctx, s.sql.relabel, to, name, runID, from)
		return s.cfg.Dialect.WriteErr(err)
	})
}
