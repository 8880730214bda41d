package sqlitejournal_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/resumegen/resumegen/runtime/journal"
	"github.com/resumegen/resumegen/runtime/journaltest"
	"github.com/resumegen/resumegen/runtime/sqlitejournal"
)

// groupFixture opens a journal with n runs, each claimed by owner "a".
func groupFixture(t *testing.T, n int) (*sqlitejournal.Journal, []journal.Lease) {
	t.Helper()
	ctx := context.Background()
	j, err := sqlitejournal.Open(ctx, filepath.Join(t.TempDir(), "journal.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { j.Close() })
	return j, journaltest.ClaimedRuns(t, j, n)
}

func groupStep(runID, key string) journal.StepRecord { return journaltest.SucceededStep(runID, key) }

// queueBehind holds the writer connection, starts write (the leader, which
// waits for the connection), then each of writes, and waits until all of
// those queued behind the leader before it lets the writer go. It returns
// each write's outcome, the leader's first.
func queueBehind(t *testing.T, j *sqlitejournal.Journal, writes []func() error) []error {
	t.Helper()
	ctx := context.Background()
	held, err := j.DB().BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	errs := make([]chan error, len(writes))
	for i, w := range writes {
		errs[i] = make(chan error, 1)
		go func() { errs[i] <- w() }()
		// The leader's write waits for the connection, in the queue's
		// head until its commit ends; each next one queues behind it.
		for deadline := time.Now().Add(10 * time.Second); sqlitejournal.GroupWaiting(j) < i+1; time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("write %d did not queue: %d waiting", i, sqlitejournal.GroupWaiting(j))
			}
		}
	}
	held.Rollback()
	out := make([]error, len(writes))
	for i := range errs {
		select {
		case out[i] = <-errs[i]:
		case <-time.After(10 * time.Second):
			t.Fatalf("write %d did not return", i)
		}
	}
	return out
}

func stepWritten(t *testing.T, j *sqlitejournal.Journal, runID, key string) bool {
	t.Helper()
	return journaltest.StepWritten(t, j, runID, key)
}

// The writes that queue behind a commit go in one transaction, each with
// its own fence: a run whose lease moved on writes nothing and learns it,
// and the others commit, durable when their WriteStep returns.
func TestGroupCommitFencesEachRow(t *testing.T) {
	ctx := context.Background()
	j, leases := groupFixture(t, 5)
	stale := leases[2]
	stale.Epoch-- // a lease this run had before: its owner lost it
	write := func(l journal.Lease, key string) func() error {
		return func() error { return j.WriteStep(ctx, l, groupStep(l.RunID, key)) }
	}
	before := j.Counters().Commits
	errs := queueBehind(t, j, []func() error{
		write(leases[0], "A"), write(leases[1], "B"), write(stale, "C"), write(leases[3], "D"), write(leases[4], "E"),
	})
	for i, err := range errs {
		if i == 2 {
			if !errors.Is(err, journal.ErrLeaseLost) {
				t.Errorf("the write under a lost lease: %v, want ErrLeaseLost", err)
			}
			continue
		}
		if err != nil {
			t.Errorf("write %d: %v", i, err)
		}
	}
	if got := j.Counters().Commits - before; got != 2 {
		t.Errorf("%d commits for the leader's row and four queued behind it, want 2 (the leader's, then the group's)", got)
	}
	for i, key := range []string{"A", "B", "C", "D", "E"} {
		if got, want := stepWritten(t, j, leases[i].RunID, key), i != 2; got != want {
			t.Errorf("step %s of run %s written: %v, want %v", key, leases[i].RunID, got, want)
		}
	}
}

// One row that the database refuses is not another's fault, even when its
// fault ends the transaction (a trigger's RAISE(ROLLBACK) here, as a full
// disk or an I/O error would): the group's rows go one by one instead, so
// that only that row fails.
func TestGroupCommitOneFaultyRow(t *testing.T) {
	ctx := context.Background()
	j, leases := groupFixture(t, 4)
	if _, err := j.DB().Exec(`CREATE TRIGGER boom BEFORE INSERT ON resume_steps WHEN NEW.step_key = 'boom'
		BEGIN SELECT RAISE(ROLLBACK, 'boom refused'); END`); err != nil {
		t.Fatal(err)
	}
	write := func(l journal.Lease, key string) func() error {
		return func() error { return j.WriteStep(ctx, l, groupStep(l.RunID, key)) }
	}
	keys := []string{"A", "B", "boom", "D"}
	errs := queueBehind(t, j, []func() error{
		write(leases[0], keys[0]), write(leases[1], keys[1]), write(leases[2], keys[2]), write(leases[3], keys[3]),
	})
	journaltest.CheckOneFaultyRow(t, j, leases, keys, 2, "boom refused", errs)
}

// A caller that gives up while its write waits its turn gets its
// context's error, and its row is not written; the rows queued beside it
// are.
func TestGroupCommitCallerGivesUp(t *testing.T) {
	j, leases := groupFixture(t, 3)
	gone, cancel := context.WithCancel(context.Background())
	ctx := context.Background()
	errs := queueBehind(t, j, []func() error{
		func() error { return j.WriteStep(ctx, leases[0], groupStep(leases[0].RunID, "A")) },
		func() error {
			defer cancel()
			return j.WriteStep(gone, leases[1], groupStep(leases[1].RunID, "B"))
		},
		func() error {
			cancel() // B has queued: give it up before its turn
			return j.WriteStep(ctx, leases[2], groupStep(leases[2].RunID, "C"))
		},
	})
	if errs[0] != nil || errs[2] != nil {
		t.Errorf("the rows beside the abandoned one: %v, %v", errs[0], errs[2])
	}
	if !errors.Is(errs[1], context.Canceled) {
		t.Errorf("the abandoned write: %v, want context.Canceled", errs[1])
	}
	if stepWritten(t, j, leases[1].RunID, "B") {
		t.Error("the abandoned write's row was written")
	}
	if !stepWritten(t, j, leases[0].RunID, "A") || !stepWritten(t, j, leases[2].RunID, "C") {
		t.Error("a row beside the abandoned one was not written")
	}
}
