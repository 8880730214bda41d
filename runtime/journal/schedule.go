package journal

import (
	"errors"
	"time"
)

// ScheduleRecord is one row of resume_schedules: the state of one
// schedule (resume.Schedule), shared by every process that runs it.
type ScheduleRecord struct {
	Name     string
	Workflow string // qualified name of the workflow each tick starts
	// Spec is what the ticks follow, as resume.Engine.Schedule stores it:
	// the cron spec as given, or "every D" (D as time.Duration prints it).
	Spec string
	// Missed is the policy for ticks no scheduler started on time:
	// "skip" or "catch_up" (see resume.MissedPolicy).
	Missed string
	// CatchUpLimit is how many due ticks one wake-up starts at most
	// (catch_up only).
	CatchUpLimit int
	// LastTick is the latest tick whose run was started (run id
	// NAME@LastTick); zero before the first.
	LastTick time.Time
	// NextTick is the first tick not yet started.
	NextTick time.Time
	// Revision counts the row's writes: [Journal.UpdateSchedule] changes
	// the row only if it still has the revision its caller read.
	Revision  int64
	CreatedAt time.Time
	UpdatedAt time.Time
}

// Schedule errors. Implementations wrap them with the schedule's name.
var (
	ErrScheduleNotFound = errors.New("schedule not found")
	// ErrScheduleMoved is returned by UpdateSchedule when another writer
	// changed the row since it was read: read it again.
	ErrScheduleMoved = errors.New("schedule changed since it was read")
)
