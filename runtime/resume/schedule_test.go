package resume

import (
	"context"
	"strings"
	"testing"
	"time"
)

// report is a workflow of one argument, for the schedule's checks.
func report(ctx context.Context, day string) (string, error) { return day, nil }

func init() {
	Register(report, &WorkflowDef{Package: "example.com/sched", Name: "report", Version: "v1",
		Run: func(ctx context.Context, args Args) (any, error) { return nil, nil }})
}

func utc(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

// stoppedClock is a clock that reads one time, and whose waits never end.
type stoppedClock time.Time

func (c stoppedClock) Now() time.Time                { return time.Time(c) }
func (c stoppedClock) At(time.Time) <-chan time.Time { return nil }

func TestScheduleRefusesWhatItCannotRun(t *testing.T) {
	e := NewEngine(nil, WithClock(stoppedClock(utc("2026-11-30T12:00:00Z"))))
	day := func(time.Time) []any { return []any{"mon"} }
	for _, c := range []struct {
		s    Schedule
		want string
	}{
		{Schedule{Name: "r", Cron: "0 25 * * *", Workflow: report, Args: day}, "end of range (25) above maximum (23)"},
		{Schedule{Name: "r", Cron: "* * * *", Workflow: report, Args: day}, "expected exactly 5 fields"},
		{Schedule{Name: "r", Cron: "0 * * * * *", Workflow: report, Args: day}, "expected exactly 5 fields"},
		{Schedule{Name: "r", Cron: "CRON_TZ=UTC", Workflow: report, Args: day}, "CRON_TZ=Zone, a space, then the spec"},
		{Schedule{Name: "r", Cron: "CRON_TZ=Mars/Olympus 0 * * * *", Workflow: report, Args: day}, "provided bad location Mars/Olympus"},
		{Schedule{Name: "r", Cron: "@fortnightly", Workflow: report, Args: day}, "unrecognized descriptor"},
		{Schedule{Name: "r", Cron: "0 0 30 2 *", Workflow: report, Args: day}, "never fires"},
		{Schedule{Name: "r", Cron: "@hourly", Every: time.Hour, Workflow: report, Args: day}, "not both"},
		{Schedule{Name: "r", Workflow: report, Args: day}, "set Cron"},
		{Schedule{Name: "r", Every: 1500 * time.Millisecond, Workflow: report, Args: day}, "whole number of seconds"},
		{Schedule{Name: "r", Every: -time.Minute, Workflow: report, Args: day}, "whole number of seconds"},
		{Schedule{Name: "", Every: time.Minute, Workflow: report, Args: day}, "the name must be"},
		{Schedule{Name: "a@b", Every: time.Minute, Workflow: report, Args: day}, "the name must be"},
		{Schedule{Name: "daily report", Every: time.Minute, Workflow: report, Args: day}, "the name must be"},
		{Schedule{Name: strings.Repeat("x", 101), Every: time.Minute, Workflow: report, Args: day}, "the name must be"},
		{Schedule{Name: "r", Every: time.Minute, Workflow: report, Args: day, Missed: 7}, "want SkipMissed or CatchUpMissed"},
		{Schedule{Name: "r", Every: time.Minute, Workflow: report, Args: day, CatchUpLimit: 3}, "it is for CatchUpMissed"},
		{Schedule{Name: "r", Every: time.Minute, Workflow: report, Args: day, Missed: CatchUpMissed, CatchUpLimit: -1}, "must not be negative"},
		{Schedule{Name: "r", Every: time.Minute, Workflow: strings.ToUpper, Args: day}, "is not a registered workflow"},
		{Schedule{Name: "r", Every: time.Minute, Workflow: report}, "takes 1 arguments after its context, not 0"},
		{Schedule{Name: "r", Every: time.Minute, Workflow: report, Args: func(time.Time) []any { return []any{42} }}, "argument"},
		{Schedule{Name: "r", Every: time.Minute, Workflow: report, Args: func(time.Time) []any { return []any{"a", "b"} }}, "not 2"},
	} {
		_, err := e.schedulePlan(c.s)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("schedule %+v: error %v, want one containing %q", c.s, err, c.want)
			continue
		}
		if !strings.HasPrefix(err.Error(), "resume: schedule ") {
			t.Errorf("error %q does not name the schedule", err)
		}
	}
	for _, s := range []Schedule{
		{Name: "r.1_x-y", Cron: "*/5 * * * *", Workflow: report, Args: day},
		{Name: "r", Cron: "@every 90s", Workflow: report, Args: day, Missed: CatchUpMissed},
		{Name: "r", Cron: "CRON_TZ=America/New_York 30 2 * * *", Workflow: report, Args: day},
		{Name: "r", Every: 15 * time.Minute, Workflow: report, Args: day, Missed: CatchUpMissed, CatchUpLimit: 5},
	} {
		if _, err := e.schedulePlan(s); err != nil {
			t.Errorf("schedule %+v refused: %v", s, err)
		}
	}
}

// TestCronIsUTCWithoutAZone: a spec without CRON_TZ ticks in UTC, whatever
// the process's local zone.
func TestCronIsUTCWithoutAZone(t *testing.T) {
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Skip("no zone database:", err)
	}
	local := time.Local
	time.Local = ny
	defer func() { time.Local = local }()
	for spec, want := range map[string]string{
		"0 9 * * *":                          "2026-11-30T09:00:00Z",
		"@daily":                             "2026-12-01T00:00:00Z",
		"CRON_TZ=America/New_York 0 9 * * *": "2026-11-30T14:00:00Z",
	} {
		s, err := parseCron(spec)
		if err != nil {
			t.Fatal(err)
		}
		if got := s.Next(utc("2026-11-30T05:00:00Z")).UTC(); !got.Equal(utc(want)) {
			t.Errorf("%q: next tick after 05:00Z is %v, want %s", spec, got, want)
		}
	}
}

func TestEveryTicksOnMultiplesOfItsInterval(t *testing.T) {
	for _, c := range []struct {
		d        time.Duration
		from, to string
	}{
		{time.Hour, "2026-11-30T12:34:56Z", "2026-11-30T13:00:00Z"},
		{time.Hour, "2026-11-30T13:00:00Z", "2026-11-30T14:00:00Z"},
		{15 * time.Minute, "2026-11-30T12:44:59Z", "2026-11-30T12:45:00Z"},
		{24 * time.Hour, "2026-11-30T23:59:59Z", "2026-12-01T00:00:00Z"},
	} {
		if got := alignedEvery(c.d).Next(utc(c.from)); !got.Equal(utc(c.to)) {
			t.Errorf("every %v after %s: %v, want %s", c.d, c.from, got, c.to)
		}
	}
}

func TestDueTicksKeepTheLatestUpToTheLimit(t *testing.T) {
	every := alignedEvery(time.Minute)
	from := utc("2026-11-30T12:00:00Z")
	now := utc("2026-11-30T12:09:30Z") // ticks 12:00 .. 12:09 are due
	for _, c := range []struct {
		limit, skipped int
		first          string
	}{
		{1, 9, "2026-11-30T12:09:00Z"},
		{3, 7, "2026-11-30T12:07:00Z"},
		{10, 0, "2026-11-30T12:00:00Z"},
		{100, 0, "2026-11-30T12:00:00Z"},
	} {
		d := dueTicks(every, from, now, c.limit)
		if d.skipped != c.skipped || len(d.start) != 10-c.skipped || !d.start[0].Equal(utc(c.first)) ||
			!d.start[len(d.start)-1].Equal(utc("2026-11-30T12:09:00Z")) || !d.next.Equal(utc("2026-11-30T12:10:00Z")) {
			t.Errorf("limit %d: %+v", c.limit, d)
		}
		if c.skipped > 0 && (!d.firstSkipped.Equal(from) || !d.lastSkipped.Equal(d.start[0].Add(-time.Minute))) {
			t.Errorf("limit %d: skipped %v .. %v", c.limit, d.firstSkipped, d.lastSkipped)
		}
	}
	if d := dueTicks(every, from, from, 1); len(d.start) != 1 || d.skipped != 0 {
		t.Errorf("a tick due right now: %+v", d)
	}
}

func TestTickRunID(t *testing.T) {
	ny, _ := time.LoadLocation("America/New_York")
	tick := time.Date(2026, 11, 30, 8, 0, 0, 0, ny)
	if ny != nil && tickRunID("report", tick) != "report@2026-11-30T13:00:00Z" {
		t.Errorf("run id %q", tickRunID("report", tick))
	}
}
