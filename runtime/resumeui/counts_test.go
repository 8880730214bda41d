package resumeui

import (
	"context"
	"fmt"
	"regexp"
	"testing"
	"time"

	"github.com/resumegen/resumegen/runtime/journal"
)

// TestCountsIncludeWaitingAndParkedRuns: the list's counts name every
// status a run can be in, waiting and parked (needs_attention) ones as
// pending and running ones, and a run being cancelled says so.
func TestCountsIncludeWaitingAndParkedRuns(t *testing.T) {
	ctx := context.Background()
	for name, open := range map[string]func(*testing.T) journal.Journal{"sqlite": openSQLite, "postgres": openPG} {
		t.Run(name, func(t *testing.T) {
			j := open(t)
			seed(t, j, 2) // two pending, one parked, one failed, one pending with markup
			at := base.Add(10 * time.Minute)
			for i, wait := range []journal.RunRecord{
				{Status: journal.StatusWaiting, WaitKind: journal.WaitSignal, WaitName: "approval"},
				{Status: journal.StatusWaiting, WaitKind: journal.WaitSleep, WakeAt: at.Add(time.Hour)},
			} {
				id := fmt.Sprintf("order-w%d", i)
				l := entered(t, j, id, at)
				write(t, j, l, journal.StepRecord{StepKey: "Reserve", Name: "Reserve", Status: journal.StepSucceeded, Result: []byte(`{}`), Attempt: 1, Seq: 1, StartedAt: at})
				wait.RunID, wait.UpdatedAt = id, at
				if err := j.FinishRun(ctx, l, wait); err != nil {
					t.Fatal(err)
				}
			}
			if err := j.Cancel(ctx, "order-w1", journal.CancelOptions{}); err != nil {
				t.Fatal(err)
			}
			srv := serve(t, j, Options{})
			code, body := get(t, srv.URL+"/ops/")
			if code != 200 {
				t.Fatalf("GET / = %d", code)
			}
			for status, n := range map[string]int{"waiting": 1, "needs_attention": 1, "pending": 4, "failed": 1} {
				re := regexp.MustCompile(`data-status="` + status + `">` + status + ` <b>(\d+)</b>`)
				m := re.FindStringSubmatch(body)
				if m == nil || m[1] != fmt.Sprint(n) {
					t.Errorf("the count of %s runs: %v, want %d", status, m, n)
				}
			}
			if !regexp.MustCompile(`pending \(cancelling\)`).MatchString(body) {
				t.Errorf("the run being cancelled is not shown so")
			}
		})
	}
}
