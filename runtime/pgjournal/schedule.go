package pgjournal

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/resumegen/resumegen/runtime/journal"
)

// scanSchedule scans sqljournal.ScheduleColumns.
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
