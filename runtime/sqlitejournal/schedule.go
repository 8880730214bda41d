package sqlitejournal

import (
	"context"
	"fmt"

	"github.com/resumegen/resumegen/runtime/journal"
)

// scanSchedule scans sqljournal.ScheduleColumns. A column that does not convert is
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

// CreateSchedule inserts s, revision 1, unless its name exists, and
// returns the stored row.
func (j *Journal) CreateSchedule(ctx context.Context, s journal.ScheduleRecord) (journal.ScheduleRecord, bool, error) {
	return j.store.CreateSchedule(ctx, s)
}

// UpdateSchedule replaces the schedule if its revision is still
// s.Revision.
func (j *Journal) UpdateSchedule(ctx context.Context, s journal.ScheduleRecord) (journal.ScheduleRecord, error) {
	return j.store.UpdateSchedule(ctx, s)
}

// LoadSchedule reads one schedule.
func (j *Journal) LoadSchedule(ctx context.Context, name string) (journal.ScheduleRecord, error) {
	return j.store.LoadSchedule(ctx, name)
}

// ListSchedules lists every schedule, by name.
func (j *Journal) ListSchedules(ctx context.Context) ([]journal.ScheduleRecord, error) {
	return j.store.ListSchedules(ctx)
}
