package journaltest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/resumegen/resumegen/runtime/journal"
)

// The fixtures and checks of the backends' group-commit tests: each
// backend queues writes behind a commit its own way (a row lock, the
// writer connection) and hands the outcomes here.

// ClaimedRuns creates runs r0 to r<n-1> of workflow w in j, each claimed
// by owner "a" for a minute, and returns their leases.
func ClaimedRuns(t *testing.T, j journal.Journal, n int) []journal.Lease {
	t.Helper()
	ctx := context.Background()
	var leases []journal.Lease
	for i := range n {
		id := fmt.Sprintf("r%d", i)
		now := time.Now()
		if _, _, err := j.CreateRun(ctx, journal.RunRecord{RunID: id, Workflow: "w", Version: "v", Status: journal.StatusPending,
			Input: []byte(`[]`), CreatedAt: now, UpdatedAt: now}); err != nil {
			t.Fatal(err)
		}
		run, _, err := j.Claim(ctx, journal.ClaimRequest{RunID: id, Owner: "a", Lease: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		leases = append(leases, journal.Lease{RunID: id, Owner: "a", Epoch: run.Epoch})
	}
	return leases
}

// SucceededStep is a succeeded step row key of run runID.
func SucceededStep(runID, key string) journal.StepRecord {
	return journal.StepRecord{RunID: runID, StepKey: key, Name: key, Status: journal.StepSucceeded, Result: []byte(`1`),
		Attempt: 1, Seq: 1, StartedAt: time.Now(), FinishedAt: time.Now(), Final: true}
}

// StepWritten reports whether run runID has a row for step key.
func StepWritten(t *testing.T, j journal.Journal, runID, key string) bool {
	t.Helper()
	_, steps, err := j.LoadRun(context.Background(), runID)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range steps {
		if s.StepKey == key {
			return true
		}
	}
	return false
}

// CheckOneFaultyRow checks the outcomes errs of step writes keys, one per
// lease, that queued together, the row of step keys[bad] refused by the
// database (its error says refused): only that write fails, with an error
// naming its run, and every other row is written.
func CheckOneFaultyRow(t *testing.T, j journal.Journal, leases []journal.Lease, keys []string, bad int, refused string, errs []error) {
	t.Helper()
	for i, err := range errs {
		if i == bad {
			if err == nil || !strings.Contains(err.Error(), refused) || !strings.Contains(err.Error(), leases[i].RunID) {
				t.Errorf("the refused row: %v, want its own error naming its run", err)
			}
			continue
		}
		if err != nil {
			t.Errorf("write %d: %v", i, err)
		}
	}
	for i, key := range keys {
		if got, want := StepWritten(t, j, leases[i].RunID, key), i != bad; got != want {
			t.Errorf("step %s of run %s written: %v, want %v", key, leases[i].RunID, got, want)
		}
	}
}

// CheckNoneDue claims n times for workflow app.Flow in j, whose runs all
// wait for later, and fails unless each claim finds no run ready; it logs
// what one claim took (a figure to read, not a bound: no timed
// assertion).
func CheckNoneDue(t *testing.T, j journal.Journal, n int) {
	t.Helper()
	ctx := context.Background()
	start := time.Now()
	for range n {
		if _, _, err := j.ClaimNext(ctx, journal.ClaimNextRequest{Owner: "w", Lease: time.Minute, Workflows: []string{"app.Flow"}}); !errors.Is(err, journal.ErrNoRunReady) {
			t.Fatalf("ClaimNext with only runs waiting for later: %v", err)
		}
	}
	t.Logf("ClaimNext over only waiting runs: %v each", time.Since(start)/time.Duration(n))
}
