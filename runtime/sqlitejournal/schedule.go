package sqlitejournal

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/resumegen/resumegen/runtime/journal"
)

const scheduleColumns = `name, workflow, spec, missed, catch_up_limit, last_tick, next_tick, revision, created_at, updated_at`

// scanSchedule scans scheduleColumns. A column that does not convert is
// an error naming the schedule and the column: a scheduler must not guess
// the tick it is at.
func scanSchedule(s scanner) (journal.ScheduleRecord, error) {
	var r journal.ScheduleRecord
	var v [10]any
	dest := make([]any, len(v))
	for i := range v {
		dest[i] = &v[i]
	}
	if err := s.Scan(dest...); err != nil {
		return r, err
	}
	var c cells
	r.Name, r.Workflow, r.Spec, r.Missed = c.text("name", v[0]), c.text("workflow", v[1]), c.text("spec", v[2]), c.text("missed", v[3])
	r.CatchUpLimit = int(c.integer("catch_up_limit", v[4]))
	r.LastTick, r.NextTick = c.time("last_tick", v[5]), c.time("next_tick", v[6])
	r.Revision = c.integer("revision", v[7])
	r.CreatedAt, r.UpdatedAt = c.time("created_at", v[8]), c.time("updated_at", v[9])
	if p := c.problem(); p != "" {
		return r, fmt.Errorf("schedule %s: journal row: %s", r.Name, p)
	}
	return r, nil
}

func (j *Journal) schedule(ctx context.Context, q querier, name string) (journal.ScheduleRecord, error) {
	j.reads.Add(1)
	r, err := scanSchedule(q.QueryRowContext(ctx, `SELECT `+scheduleColumns+` FROM resume_schedules WHERE name = ?`, name))
	if errors.Is(err, sql.ErrNoRows) {
		return r, fmt.Errorf("schedule %s: %w", name, journal.ErrScheduleNotFound)
	}
	return r, err
}

// CreateSchedule inserts s, revision 1, unless its name exists, and
// returns the stored row.
func (j *Journal) CreateSchedule(ctx context.Context, s journal.ScheduleRecord) (journal.ScheduleRecord, bool, error) {
	var created bool
	err := j.inTx(ctx, func(tx *sql.Tx) error {
		s.Revision = 1
		res, err := tx.ExecContext(ctx, `INSERT INTO resume_schedules (`+scheduleColumns+`)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (name) DO NOTHING`,
			s.Name, s.Workflow, s.Spec, s.Missed, s.CatchUpLimit, ts(s.LastTick), ts(s.NextTick), s.Revision, ts(s.CreatedAt), ts(s.UpdatedAt))
		if err != nil {
			return writeLock(err)
		}
		if n, _ := res.RowsAffected(); n == 1 {
			created = true
			return nil
		}
		s, err = j.schedule(ctx, tx, s.Name)
		return err
	})
	if err != nil {
		return s, false, fmt.Errorf("schedule %s: create: %w", s.Name, err)
	}
	if created {
		s, err = j.LoadSchedule(ctx, s.Name) // as stored: times at their precision
	}
	return s, created, err
}

// UpdateSchedule replaces the schedule if its revision is still
// s.Revision.
func (j *Journal) UpdateSchedule(ctx context.Context, s journal.ScheduleRecord) (journal.ScheduleRecord, error) {
	res, err := j.db.ExecContext(ctx, `UPDATE resume_schedules SET workflow = ?, spec = ?, missed = ?, catch_up_limit = ?,
		last_tick = ?, next_tick = ?, revision = revision + 1, updated_at = ? WHERE name = ? AND revision = ?`,
		s.Workflow, s.Spec, s.Missed, s.CatchUpLimit, ts(s.LastTick), ts(s.NextTick), ts(s.UpdatedAt), s.Name, s.Revision)
	if err != nil {
		return s, fmt.Errorf("schedule %s: update: %w", s.Name, writeLock(err))
	}
	j.commits.Add(1)
	if n, _ := res.RowsAffected(); n == 1 {
		return j.LoadSchedule(ctx, s.Name)
	}
	if _, err := j.LoadSchedule(ctx, s.Name); err != nil {
		return s, err
	}
	return s, fmt.Errorf("schedule %s: revision %d: %w", s.Name, s.Revision, journal.ErrScheduleMoved)
}

// LoadSchedule reads one schedule.
func (j *Journal) LoadSchedule(ctx context.Context, name string) (journal.ScheduleRecord, error) {
	return j.schedule(ctx, j.read, name)
}

// ListSchedules lists every schedule, by name.
func (j *Journal) ListSchedules(ctx context.Context) ([]journal.ScheduleRecord, error) {
	j.reads.Add(1)
	rows, err := j.read.QueryContext(ctx, `SELECT `+scheduleColumns+` FROM resume_schedules ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("list schedules: %w", err)
	}
	defer rows.Close()
	var out []journal.ScheduleRecord
	for rows.Next() {
		s, err := scanSchedule(rows)
		if err != nil {
			return nil, fmt.Errorf("list schedules: %w", err)
		}
		out = append(out, s)
	}
	return out, rows.Err()
}
