package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/resumegen/resumegen/runtime/journal"
	"github.com/resumegen/resumegen/runtime/sqlitejournal"
)

// TestSchedulesList lists schedules as the journal stores them, with the
// status of each one's last run, in a table and as JSON, and writes
// nothing.
func TestSchedulesList(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "j.db")
	j, err := sqlitejournal.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	code, out, _ := ctl(t, "schedules", "list", "-db", path)
	if code != exitOK || strings.TrimSpace(out) != "no schedules" {
		t.Fatalf("empty journal: %d %q", code, out)
	}
	tick := time.Date(2026, 11, 30, 13, 0, 0, 0, time.UTC)
	for _, r := range []journal.ScheduleRecord{
		{Name: "report", Workflow: "example.com/app/reports.Daily", Spec: "@hourly", Missed: "skip", CatchUpLimit: 1,
			NextTick: tick, CreatedAt: tick, UpdatedAt: tick},
		{Name: "sweep", Workflow: "example.com/app/jobs.Sweep", Spec: "every 15m0s", Missed: "catch_up", CatchUpLimit: 5,
			NextTick: tick, CreatedAt: tick, UpdatedAt: tick},
		{Name: "gone", Workflow: "example.com/app/jobs.Gone", Spec: "0 9 * * *", Missed: "skip", CatchUpLimit: 1,
			NextTick: tick, CreatedAt: tick, UpdatedAt: tick},
	} {
		stored, _, err := j.CreateSchedule(ctx, r)
		if err != nil {
			t.Fatal(err)
		}
		if r.Name != "report" {
			stored.LastTick, stored.NextTick = tick.Add(-15*time.Minute), tick.Add(15*time.Minute)
			if _, err := j.UpdateSchedule(ctx, stored); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, _, err := j.CreateRun(ctx, journal.RunRecord{RunID: "sweep@2026-11-30T12:45:00Z", Workflow: "example.com/app/jobs.Sweep",
		Version: "v1", Input: json.RawMessage("[]"), CreatedAt: tick, UpdatedAt: tick}); err != nil {
		t.Fatal(err)
	}
	j.Close()

	code, out, errOut := ctl(t, "schedules", "list", "-db", path)
	if code != exitOK {
		t.Fatalf("schedules list: %d %s", code, errOut)
	}
	// The first read made the -wal and -shm files a WAL reader needs
	// (empty); from then on the folder and the file stay as they are.
	before := snapshot(t, path)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	want := [][]string{
		{"NAME", "WORKFLOW", "SPEC", "MISSED", "LAST TICK", "NEXT TICK", "LAST RUN"},
		{"gone", "jobs.Gone", "0 9 * * *", "skip", "2026-11-30T12:45:00Z", "2026-11-30T13:15:00Z", "(not in the journal)"},
		{"report", "reports.Daily", "@hourly", "skip", "-", "2026-11-30T13:00:00Z", "-"},
		{"sweep", "jobs.Sweep", "every 15m0s", "catch_up (5)", "2026-11-30T12:45:00Z", "2026-11-30T13:15:00Z", "pending"},
	}
	if len(lines) != len(want) {
		t.Fatalf("table:\n%s", out)
	}
	for i, cells := range want {
		for _, c := range cells {
			if !strings.Contains(lines[i], c) {
				t.Errorf("line %d %q lacks %q", i, lines[i], c)
			}
		}
	}

	code, out, _ = ctl(t, "schedules", "list", "-db", path, "-json")
	var got []scheduleJSON
	if err := json.Unmarshal([]byte(out), &got); code != exitOK || err != nil || len(got) != 3 {
		t.Fatalf("-json: %d %v\n%s", code, err, out)
	}
	if s := got[2]; s.Name != "sweep" || s.LastRun != "sweep@2026-11-30T12:45:00Z" || s.LastRunStatus != "pending" ||
		s.CatchUpLimit != 5 || s.LastTick == nil || !s.NextTick.Equal(tick.Add(15*time.Minute)) {
		t.Errorf("-json sweep: %+v", s)
	}
	if s := got[1]; s.Name != "report" || s.LastTick != nil || s.LastRun != "" {
		t.Errorf("-json report, never ticked: %+v", s)
	}
	if !strings.Contains(out, `"last_tick": null`) {
		t.Errorf("-json: a schedule never ticked has last_tick null:\n%s", out)
	}
	ctl(t, "schedules", "list", "-db", path)
	if after := snapshot(t, path); after != before {
		t.Fatal("schedules list changed the journal file")
	}
	if code, _, errOut := ctl(t, "schedules"); code != exitUsage || !strings.Contains(errOut, "schedules: missing subcommand") {
		t.Fatalf("schedules without a subcommand: %d %q", code, errOut)
	}
}
