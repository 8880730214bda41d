package pgjournal

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/resumegen/resumegen/runtime/journal"
)

const scheduleColumns = `name, workflow, spec, missed, catch_up_limit, last_tick, next_tick, revision, created_at, updated_at`

func scanSchedule(row pgx.Row) (journal.ScheduleRecord, error) {
	var r journal.ScheduleRecord
	var last *time.Time
	err := row.Scan(&r.Name, &r.Workflow, &r.Spec, &r.Missed, &r.CatchUpLimit, &last, &r.NextTick, &r.Revision, &r.CreatedAt, &r.UpdatedAt)
	r.LastTick, r.NextTick = timeOf(last), r.NextTick.UTC()
	r.CreatedAt, r.UpdatedAt = r.CreatedAt.UTC(), r.UpdatedAt.UTC()
	return r, err
}

// CreateSchedule inserts s, revision 1, unless its name exists, and
// returns the stored row.
func (j *Journal) CreateSchedule(ctx context.Context, s journal.ScheduleRecord) (journal.ScheduleRecord, bool, error) {
	// One statement: the insert returns the new row, or, on a conflict,
	// nothing; then the row another process stored is read.
	j.commits.Add(1)
	stored, err := scanSchedule(j.pool.QueryRow(ctx, qualify(`INSERT INTO {schema}.resume_schedules (`+scheduleColumns+`)
		VALUES ($1, $2, $3, $4, $5, $6, $7, 1, $8, $9) ON CONFLICT (name) DO NOTHING RETURNING `+scheduleColumns, j.schema),
		s.Name, s.Workflow, s.Spec, s.Missed, s.CatchUpLimit, nullTime(s.LastTick), s.NextTick, s.CreatedAt, s.UpdatedAt))
	if err == nil {
		return stored, true, nil
	}
	if !errors.Is(err, pgx.ErrNoRows) {
		return s, false, fmt.Errorf("schedule %s: create: %w", s.Name, err)
	}
	stored, err = j.LoadSchedule(ctx, s.Name)
	return stored, false, err
}

// UpdateSchedule replaces the schedule if its revision is still
// s.Revision.
func (j *Journal) UpdateSchedule(ctx context.Context, s journal.ScheduleRecord) (journal.ScheduleRecord, error) {
	j.commits.Add(1)
	stored, err := scanSchedule(j.pool.QueryRow(ctx, qualify(`UPDATE {schema}.resume_schedules SET workflow = $1, spec = $2,
		missed = $3, catch_up_limit = $4, last_tick = $5, next_tick = $6, revision = revision + 1, updated_at = $7
		WHERE name = $8 AND revision = $9 RETURNING `+scheduleColumns, j.schema),
		s.Workflow, s.Spec, s.Missed, s.CatchUpLimit, nullTime(s.LastTick), s.NextTick, s.UpdatedAt, s.Name, s.Revision))
	if err == nil {
		return stored, nil
	}
	if !errors.Is(err, pgx.ErrNoRows) {
		return s, fmt.Errorf("schedule %s: update: %w", s.Name, err)
	}
	if _, err := j.LoadSchedule(ctx, s.Name); err != nil {
		return s, err
	}
	return s, fmt.Errorf("schedule %s: revision %d: %w", s.Name, s.Revision, journal.ErrScheduleMoved)
}

// LoadSchedule reads one schedule.
func (j *Journal) LoadSchedule(ctx context.Context, name string) (journal.ScheduleRecord, error) {
	j.reads.Add(1)
	s, err := scanSchedule(j.pool.QueryRow(ctx, qualify(`SELECT `+scheduleColumns+` FROM {schema}.resume_schedules WHERE name = $1`, j.schema), name))
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return s, fmt.Errorf("schedule %s: %w", name, journal.ErrScheduleNotFound)
	case err != nil:
		return s, fmt.Errorf("schedule %s: read: %w", name, err)
	}
	return s, nil
}

// ListSchedules lists every schedule, by name.
func (j *Journal) ListSchedules(ctx context.Context) ([]journal.ScheduleRecord, error) {
	j.reads.Add(1)
	rows, err := j.pool.Query(ctx, qualify(`SELECT `+scheduleColumns+` FROM {schema}.resume_schedules ORDER BY name`, j.schema))
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
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list schedules: %w", err)
	}
	return out, nil
}
