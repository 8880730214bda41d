package pgjournal_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/resumegen/resumegen/runtime/journal"
	"github.com/resumegen/resumegen/runtime/journaltest"
	"github.com/resumegen/resumegen/runtime/pgjournal"
)

// groupFixture opens a journal in a fresh schema with n runs, each claimed
// by owner "a".
func groupFixture(t *testing.T, n int) (*pgjournal.Journal, string, []journal.Lease) {
	t.Helper()
	ctx := context.Background()
	pool := testPool(t)
	schema := freshSchema(t, pool)
	j, err := pgjournal.Open(ctx, pool, pgjournal.WithSchema(schema))
	if err != nil {
		t.Fatal(err)
	}
	return j, schema, journaltest.ClaimedRuns(t, j, n)
}

func groupStep(runID, key string) journal.StepRecord { return journaltest.SucceededStep(runID, key) }

// queueBehind locks the first run's row, starts writes[0] (the leader,
// which waits for the lock), then each other write, and lets the lock go
// once all of those queued behind the leader. It returns each write's
// outcome.
func queueBehind(t *testing.T, j *pgjournal.Journal, schema string, writes []func() error) []error {
	t.Helper()
	ctx := context.Background()
	held, err := j.Pool().Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Rollback(ctx)
	if _, err := held.Exec(ctx, `SELECT 1 FROM `+pgx.Identifier{schema, "resume_runs"}.Sanitize()+` WHERE run_id = 'r0' FOR UPDATE`); err != nil {
		t.Fatal(err)
	}
	errs := make([]chan error, len(writes))
	for i, w := range writes {
		errs[i] = make(chan error, 1)
		go func() { errs[i] <- w() }()
		for deadline := time.Now().Add(10 * time.Second); pgjournal.GroupWaiting(j) < i+1; time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("write %d did not queue: %d waiting", i, pgjournal.GroupWaiting(j))
			}
		}
	}
	if err := held.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
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

func stepWritten(t *testing.T, j *pgjournal.Journal, runID, key string) bool {
	t.Helper()
	return journaltest.StepWritten(t, j, runID, key)
}

// The writes that queue behind a commit go in one transaction, each with
// its own fence: a run whose lease moved on writes nothing and learns it,
// a finish in the same group commits, and the others' rows are durable
// when their call returns.
func TestGroupCommitFencesEachRow(t *testing.T) {
	ctx := context.Background()
	j, schema, leases := groupFixture(t, 5)
	stale := leases[2]
	stale.Epoch--
	write := func(l journal.Lease, key string) func() error {
		return func() error { return j.WriteStep(ctx, l, groupStep(l.RunID, key)) }
	}
	before := j.Counters().Commits
	errs := queueBehind(t, j, schema, []func() error{
		write(leases[0], "A"), write(leases[1], "B"), write(stale, "C"), write(leases[3], "D"),
		func() error {
			return j.FinishRun(ctx, leases[4], journal.RunRecord{Status: journal.StatusSucceeded, Output: []byte(`7`), UpdatedAt: time.Now()})
		},
	})
	for i, err := range errs {
		if i == 2 {
			if !errors.Is(err, journal.ErrLeaseLost) || !strings.Contains(err.Error(), "step C") {
				t.Errorf("the write under a lost lease: %v, want ErrLeaseLost naming its step", err)
			}
			continue
		}
		if err != nil {
			t.Errorf("write %d: %v", i, err)
		}
	}
	if got := j.Counters().Commits - before; got != 2 {
		t.Errorf("%d commits for the leader's write and four queued behind it, want 2 (the leader's, then the group's)", got)
	}
	for i, key := range []string{"A", "B", "C", "D"} {
		if got, want := stepWritten(t, j, leases[i].RunID, key), i != 2; got != want {
			t.Errorf("step %s of run %s written: %v, want %v", key, leases[i].RunID, got, want)
		}
	}
	if r, _, err := j.LoadRun(ctx, leases[4].RunID); err != nil || r.Status != journal.StatusSucceeded || string(r.Output) != "7" {
		t.Errorf("the finished run: %s %s, %v", r.Status, r.Output, err)
	}
}

// One row the server refuses aborts the group's transaction, but it is not
// the others' fault: their writes go one by one, and only that row fails,
// with its own error.
func TestGroupCommitOneFaultyRow(t *testing.T) {
	ctx := context.Background()
	j, schema, leases := groupFixture(t, 4)
	fn := pgx.Identifier{schema, "boom"}.Sanitize()
	if _, err := j.Pool().Exec(ctx, `CREATE FUNCTION `+fn+`() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN IF NEW.step_key = 'boom' THEN RAISE EXCEPTION 'boom refused'; END IF; RETURN NEW; END $$`); err != nil {
		t.Fatal(err)
	}
	if _, err := j.Pool().Exec(ctx, `CREATE TRIGGER boom BEFORE INSERT ON `+pgx.Identifier{schema, "resume_steps"}.Sanitize()+
		` FOR EACH ROW EXECUTE FUNCTION `+fn+`()`); err != nil {
		t.Fatal(err)
	}
	write := func(l journal.Lease, key string) func() error {
		return func() error { return j.WriteStep(ctx, l, groupStep(l.RunID, key)) }
	}
	keys := []string{"A", "B", "boom", "D"}
	errs := queueBehind(t, j, schema, []func() error{
		write(leases[0], keys[0]), write(leases[1], keys[1]), write(leases[2], keys[2]), write(leases[3], keys[3]),
	})
	journaltest.CheckOneFaultyRow(t, j, leases, keys, 2, "boom refused", errs)
}
