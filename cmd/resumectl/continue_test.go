package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/resumegen/resumegen/runtime/journaltest"
	"github.com/resumegen/resumegen/runtime/resume"
	"github.com/resumegen/resumegen/runtime/sqlitejournal"
)

// TestShowContinuedRuns checks that runs show names a continued run's
// successor and the run a continuing run continues, in both forms.
func TestShowContinuedRuns(t *testing.T) {
	ctx := context.Background()
	db := filepath.Join(t.TempDir(), "j.db")
	j, err := sqlitejournal.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	res, err := resume.NewEngine(j).Start(ctx, "poll", journaltest.Poller, journaltest.PollPlan{At: 1, Until: 2})
	if err != nil || res.ContinuedAs != "poll~2" {
		t.Fatalf("Start = %+v, %v; want continued as poll~2", res, err)
	}
	j.Close()

	code, out := ctlRun(t, db, "runs", "show", "poll")
	if code != 0 || !strings.Contains(out, "continued as") || !strings.Contains(out, "poll~2") {
		t.Errorf("runs show poll (exit %d) does not name its successor:\n%s", code, out)
	}
	code, out = ctlRun(t, db, "runs", "show", "poll~2", "-json")
	var s showJSON
	if err := json.Unmarshal([]byte(out), &s); code != 0 || err != nil || s.ContinuedFrom != "poll" || s.ContinuedAs != "" {
		t.Errorf("runs show poll~2 -json (exit %d, %v): continued_from %q, continued_as %q; want poll, none:\n%s", code, err, s.ContinuedFrom, s.ContinuedAs, out)
	}
}
