package sqljournal

import (
	"context"
	"fmt"

	"github.com/resumegen/resumegen/runtime/journal"
)

// ScheduleColumns are the columns of resume_schedules, in the order a
// backend's ScanSchedule scans them.
const ScheduleColumns = `name, workflow, spec, missed, catch_up_limit, last_tick, next_tick, revision, created_at, updated_at`

// scheduleStatements are the schedules' statements, rebound once.
type scheduleStatements struct {
	create, update, load, list string
}

func newScheduleStatements(d Dialect) scheduleStatements {
	return scheduleStatements{
		create: d.Rebind(`INSERT INTO {schema}.resume_schedules (` + ScheduleColumns + `)
			VALUES ($1, $2, $3, $4, $5, $6, $7, 1, $8, $9) ON CONFLICT (name) DO NOTHING`),
		update: d.Rebind(`UPDATE {schema}.resume_schedules SET workflow = $1, spec = $2, missed = $3, catch_up_limit = $4,
			last_tick = $5, next_tick = $6, revision = revision + 1, updated_at = $7
			WHERE name = $8 AND revision = $9 RETURNING ` + ScheduleColumns),
		load: d.Rebind(`SELECT ` + ScheduleColumns + ` FROM {schema}.resume_schedules WHERE name = $1`),
		list: d.Rebind(`SELECT ` + ScheduleColumns + ` FROM {schema}.resume_schedules ORDER BY name`),
	}
}

// CreateSchedule inserts s, revision 1, unless a schedule of its name
// exists, and returns the stored row (as stored: its times at the
// backend's precision) and whether it inserted it, in one transaction.
func (s *Store) CreateSchedule(ctx context.Context, sc journal.ScheduleRecord) (journal.ScheduleRecord, bool, error) {
	d := s.cfg.Dialect
	var stored journal.ScheduleRecord
	var created bool
	err := s.cfg.InTx(ctx, func(tx Executor) error {
		n, err := tx.Exec(ctx, s.sch.create, sc.Name, sc.Workflow, sc.Spec, sc.Missed, sc.CatchUpLimit,
			d.Time(sc.LastTick), d.RequiredTime(sc.NextTick), d.RequiredTime(sc.CreatedAt), d.RequiredTime(sc.UpdatedAt))
		if err != nil {
			return d.WriteErr(err)
		}
		created = n == 1
		stored, err = s.schedule(ctx, tx, sc.Name)
		return err
	})
	if err != nil {
		return sc, false, fmt.Errorf("schedule %s: create: %w", sc.Name, err)
	}
	return stored, created, nil
}

// UpdateSchedule replaces the schedule if its revision is still
// sc.Revision, and returns it as stored; ErrScheduleMoved if another
// scheduler moved it on, ErrScheduleNotFound if it is gone.
func (s *Store) UpdateSchedule(ctx context.Context, sc journal.ScheduleRecord) (journal.ScheduleRecord, error) {
	d := s.cfg.Dialect
	var stored journal.ScheduleRecord
	moved := false
	err := s.cfg.Write(ctx, func(tx Executor) error {
		var err error
		stored, err = s.cfg.ScanSchedule(tx.QueryRow(ctx, s.sch.update, sc.Workflow, sc.Spec, sc.Missed, sc.CatchUpLimit,
			d.Time(sc.LastTick), d.RequiredTime(sc.NextTick), d.RequiredTime(sc.UpdatedAt), sc.Name, sc.Revision))
		if d.NoRows(err) {
			moved = true
			return nil
		}
		return d.WriteErr(err)
	})
	switch {
	case err != nil:
		return sc, fmt.Errorf("schedule %s: update: %w", sc.Name, err)
	case moved:
		if _, err := s.LoadSchedule(ctx, sc.Name); err != nil {
			return sc, err
		}
		return sc, fmt.Errorf("schedule %s: revision %d: %w", sc.Name, sc.Revision, journal.ErrScheduleMoved)
	}
	return stored, nil
}

// LoadSchedule reads one schedule (ErrScheduleNotFound for none).
func (s *Store) LoadSchedule(ctx context.Context, name string) (journal.ScheduleRecord, error) {
	return s.schedule(ctx, s.cfg.Read, name)
}

func (s *Store) schedule(ctx context.Context, q Executor, name string) (journal.ScheduleRecord, error) {
	s.cfg.Reads.Add(1)
	sc, err := s.cfg.ScanSchedule(q.QueryRow(ctx, s.sch.load, name))
	switch {
	case s.cfg.Dialect.NoRows(err):
		return sc, fmt.Errorf("schedule %s: %w", name, journal.ErrScheduleNotFound)
	case err != nil:
		return sc, fmt.Errorf("schedule %s: read: %w", name, err)
	}
	return sc, nil
}

// ListSchedules lists every schedule, by name.
func (s *Store) ListSchedules(ctx context.Context) ([]journal.ScheduleRecord, error) {
	s.cfg.Reads.Add(1)
	rows, err := s.cfg.Read.Query(ctx, s.sch.list)
	if err != nil {
		return nil, fmt.Errorf("list schedules: %w", err)
	}
	return Collect(rows, "list schedules", s.cfg.ScanSchedule)
}
