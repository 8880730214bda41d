package pgjournal_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/resumegen/resumegen/runtime/journal"
	"github.com/resumegen/resumegen/runtime/journaltest"
	"github.com/resumegen/resumegen/runtime/pgjournal"
)

// groupFixture opens a journal in a fresh schema with n runs, each claimed
// by owner "a".
func groupFixture(t *testing.T, n int) (*pgjournal.Journal, string, []journal.Lease) {
	t.Helper()
	j, schema := openFresh(t, testPool(t))
	return j, schema, journaltest.ClaimedRuns(t, j, n)
}

// groupForms are the two ways a group writes its step rows: one
// statement a row, and one statement for all (from 2 rows on).
var groupForms = []struct {
	name string
	from int
}{{"one statement a row", 1 << 30}, {"one statement", 2}}

// eachGroupForm runs test once in each form, from being the group size
// from which step rows go in one statement.
func eachGroupForm(t *testing.T, test func(t *testing.T, from int)) {
	for _, form := range groupForms {
		t.Run(form.name, func(t *testing.T) { test(t, form.from) })
	}
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
	eachGroupForm(t, groupFencesEachRow)
}

func groupFencesEachRow(t *testing.T, from int) {
	ctx := context.Background()
	j, schema, leases := groupFixture(t, 5)
	pgjournal.StepsInOneStatement(j, from)
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
	eachGroupForm(t, groupOneFaultyRow)
}

func groupOneFaultyRow(t *testing.T, from int) {
	ctx := context.Background()
	j, schema, leases := groupFixture(t, 4)
	pgjournal.StepsInOneStatement(j, from)
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

// A group's step rows go in one statement, whatever their columns: each
// row reads back as the same row written alone, and the first row of a
// run's entry marks its progress.
func TestGroupCommitRowsAsWrittenAlone(t *testing.T) {
	eachGroupForm(t, groupRowsAsWrittenAlone)
}

func groupRowsAsWrittenAlone(t *testing.T, from int) {
	ctx := context.Background()
	j, schema, leases := groupFixture(t, 4)
	pgjournal.StepsInOneStatement(j, from)
	// Claimed once more: each run's next row is its entry's first.
	for i, l := range leases {
		run, _, err := j.Claim(ctx, journal.ClaimRequest{RunID: l.RunID, Owner: "a", Lease: time.Minute, Abandoned: &l})
		if err != nil {
			t.Fatal(err)
		}
		leases[i].Epoch = run.Epoch
	}
	t0 := time.Date(2026, 12, 2, 6, 0, 0, 123456000, time.UTC)
	rows := []journal.StepRecord{
		{RunID: "r0", StepKey: "A", Name: "a", Status: journal.StepSucceeded, Result: []byte(`{"x":[1,2]}`), Attempt: 2, AttemptBase: 1, Seq: 7,
			StartedAt: t0, FinishedAt: t0.Add(time.Second), Final: true},
		{RunID: "r1", StepKey: "B", Name: "b", Status: journal.StepFailed, Error: "no", ErrorDetail: []byte(`{"kind":"x"}`), Attempt: 3, Seq: 2,
			StartedAt: t0, FinishedAt: t0.Add(2 * time.Second),
			History: []journal.AttemptRecord{{Attempt: 1, Error: "first", StartedAt: t0, FinishedAt: t0.Add(time.Millisecond)}}},
		{RunID: "r2", StepKey: "C", Name: "c", Status: journal.StepInFlight, Attempt: 1, Seq: 3, StartedAt: t0},
		{RunID: "r3", StepKey: "D", Name: "d", Status: journal.StepSucceeded, Result: []byte(`null`), Attempt: 1, Seq: 4, StartedAt: t0, FinishedAt: t0},
	}
	var writes []func() error
	for i, s := range rows {
		writes = append(writes, func() error { return j.WriteStep(ctx, leases[i], s) })
	}
	before := j.Counters().Commits
	for i, err := range queueBehind(t, j, schema, writes) {
		if err != nil {
			t.Errorf("write %d: %v", i, err)
		}
	}
	if got := j.Counters().Commits - before; got != 2 {
		t.Errorf("%d commits for the leader's write and three queued behind it, want 2", got)
	}
	// The same rows, written alone, in a journal of their own.
	alone, _, aloneLeases := groupFixture(t, 4)
	for i, s := range rows {
		if err := alone.WriteStep(ctx, aloneLeases[i], s); err != nil {
			t.Fatal(err)
		}
	}
	for i, s := range rows {
		r, got, err := j.LoadRun(ctx, s.RunID)
		if err != nil || len(got) != 1 {
			t.Fatalf("run %s: %d rows, %v", s.RunID, len(got), err)
		}
		_, want, err := alone.LoadRun(ctx, s.RunID)
		if err != nil || len(want) != 1 {
			t.Fatalf("run %s alone: %d rows, %v", s.RunID, len(want), err)
		}
		if g, w := fmt.Sprintf("%+v", got[0]), fmt.Sprintf("%+v", want[0]); g != w {
			t.Errorf("row %d in a group:\n%s\nwritten alone:\n%s", i, g, w)
		}
		if r.ClaimsSinceProgress != 0 {
			t.Errorf("run %s: %d claims since progress after its entry's first row, want 0", s.RunID, r.ClaimsSinceProgress)
		}
	}
}

// Each row of a group is fenced by its own lease, also when two writes
// name one run: the stale lease's row is refused, the current one's
// written. And a row written twice in one group keeps the order of the
// calls.
func TestGroupCommitLeasePerRow(t *testing.T) {
	eachGroupForm(t, groupLeasePerRow)
}

func groupLeasePerRow(t *testing.T, from int) {
	ctx := context.Background()
	j, schema, leases := groupFixture(t, 3)
	pgjournal.StepsInOneStatement(j, from)
	stale := leases[1]
	stale.Owner = "b"
	second := groupStep("r2", "E")
	second.Status, second.Attempt = journal.StepFailed, 2
	errs := queueBehind(t, j, schema, []func() error{
		func() error { return j.WriteStep(ctx, leases[0], groupStep("r0", "A")) },
		func() error { return j.WriteStep(ctx, stale, groupStep("r1", "stale")) },
		func() error { return j.WriteStep(ctx, leases[1], groupStep("r1", "B")) },
		func() error { return j.WriteStep(ctx, leases[2], groupStep("r2", "C")) },
	})
	errs = append(errs, queueBehind(t, j, schema, []func() error{
		func() error { return j.WriteStep(ctx, leases[0], groupStep("r0", "A2")) },
		func() error { return j.WriteStep(ctx, leases[2], groupStep("r2", "E")) },
		func() error { return j.WriteStep(ctx, leases[2], second) },
	})...)
	for i, err := range errs {
		if i == 1 {
			if !errors.Is(err, journal.ErrLeaseLost) || !strings.Contains(err.Error(), "step stale") {
				t.Errorf("the stale lease's write: %v, want ErrLeaseLost naming its step", err)
			}
			continue
		}
		if err != nil {
			t.Errorf("write %d: %v", i, err)
		}
	}
	if stepWritten(t, j, "r1", "stale") || !stepWritten(t, j, "r1", "B") {
		t.Errorf("run r1: the stale lease's row written, or the current one's not")
	}
	_, steps, err := j.LoadRun(ctx, "r2")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range steps {
		if s.StepKey == "E" && (s.Status != journal.StepFailed || s.Attempt != 2) {
			t.Errorf("run r2's row E written twice in one group: %+v; want the second write's", s)
		}
	}
}

// A pool that prepares nothing (as behind a transaction pooler) writes a
// group's step rows in one statement from two rows on; one that caches
// prepared statements only for large groups.
func TestGroupOneStatementFromPool(t *testing.T) {
	cfg, err := pgxpool.ParseConfig("host=/nonexistent")
	if err != nil {
		t.Fatal(err)
	}
	for mode, want := range map[pgx.QueryExecMode]int{
		pgx.QueryExecModeCacheStatement: 32, pgx.QueryExecModeCacheDescribe: 32,
		pgx.QueryExecModeExec: 2, pgx.QueryExecModeDescribeExec: 2, pgx.QueryExecModeSimpleProtocol: 2,
	} {
		c := cfg.Copy()
		c.ConnConfig.DefaultQueryExecMode = mode
		pool, err := pgxpool.NewWithConfig(context.Background(), c)
		if err != nil {
			t.Fatal(err)
		}
		if got := pgjournal.OneStatementFrom(pool); got != want {
			t.Errorf("%v: one statement from %d rows, want %d", mode, got, want)
		}
		pool.Close()
	}
}
