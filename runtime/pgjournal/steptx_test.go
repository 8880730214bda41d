package pgjournal_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/resumegen/resumegen/runtime/journal"
	"github.com/resumegen/resumegen/runtime/pgjournal"
)

// stepTxFixture opens a journal in a fresh schema with an effects table and
// one run claimed by owner "a".
func stepTxFixture(t *testing.T) (j *pgjournal.Journal, effects string, lease journal.Lease) {
	t.Helper()
	ctx := context.Background()
	pool := testPool(t)
	j, schema := openFresh(t, pool)
	effects = pgx.Identifier{schema, "effects"}.Sanitize()
	if _, err := pool.Exec(ctx, `CREATE TABLE `+effects+` (run_id text NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	if _, _, err := j.CreateRun(ctx, journal.RunRecord{RunID: "r", Workflow: "w", Version: "v", Input: []byte(`[]`), CreatedAt: now, UpdatedAt: now}); err != nil {
		t.Fatal(err)
	}
	run, _, err := j.Claim(ctx, journal.ClaimRequest{RunID: "r", Owner: "a", Lease: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	return j, effects, journal.Lease{RunID: "r", Owner: "a", Epoch: run.Epoch}
}

func countRows(t *testing.T, j *pgjournal.Journal, table string) int {
	t.Helper()
	var n int
	if err := j.Pool().QueryRow(context.Background(), `SELECT count(*) FROM `+table).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// beginWithEffect begins a tx step under lease and inserts one effect row
// through the step's handle, as a step's code would.
func beginWithEffect(t *testing.T, j *pgjournal.Journal, effects string, lease journal.Lease) (journal.StepTx, pgx.Tx) {
	t.Helper()
	ctx := context.Background()
	stx, err := j.BeginStep(ctx, lease)
	if err != nil {
		t.Fatal(err)
	}
	tx := stx.Handle().(pgx.Tx)
	if _, err := tx.Exec(ctx, `INSERT INTO `+effects+` (run_id) VALUES ('r')`); err != nil {
		stx.Rollback()
		t.Fatal(err)
	}
	return stx, tx
}

var stepS = journal.StepRecord{RunID: "r", StepKey: "S", Name: "S", Status: journal.StepSucceeded, Attempt: 1, Seq: 1, StartedAt: time.Now()}

// The journal row and COMMIT go in one round trip: a lease that moved on
// while the step ran must abort the whole transaction, the step's own
// writes included, not just skip the journal row.
func TestTxStepLeaseLostDuringStepRollsBackItsWrites(t *testing.T) {
	ctx := context.Background()
	j, effects, lease := stepTxFixture(t)
	stx, _ := beginWithEffect(t, j, effects, lease)
	defer stx.Rollback()
	// Another worker takes the run over while the step runs.
	if _, _, err := j.Claim(ctx, journal.ClaimRequest{RunID: "r", Owner: "b", Lease: time.Minute, Abandoned: &lease}); err != nil {
		t.Fatalf("takeover: %v", err)
	}
	if err := stx.Commit(ctx, stepS); !errors.Is(err, journal.ErrLeaseLost) {
		t.Fatalf("commit after the lease moved on: %v, want ErrLeaseLost", err)
	}
	if n := countRows(t, j, effects); n != 0 {
		t.Errorf("the step's writes committed without its journal row: %d effect rows", n)
	}
	if _, steps, _ := j.LoadRun(ctx, "r"); len(steps) != 0 {
		t.Errorf("a fenced-out step left %d journal rows", len(steps))
	}
	// The connection went back to the pool usable, not mid-transaction.
	for i := 0; i < 25; i++ {
		if err := j.Pool().QueryRow(ctx, `SELECT 1`).Scan(new(int)); err != nil {
			t.Fatalf("pool after an aborted step: %v", err)
		}
	}
}

func TestTxStepCommitsWritesAndRowTogether(t *testing.T) {
	ctx := context.Background()
	j, effects, lease := stepTxFixture(t)
	before := j.Counters().Commits
	stx, err := j.BeginStep(ctx, lease)
	if err != nil {
		t.Fatal(err)
	}
	tx := stx.Handle().(pgx.Tx)
	// A savepoint inside the step works as in any pgx.Tx.
	sp, err := tx.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sp.Exec(ctx, `INSERT INTO `+effects+` (run_id) VALUES ('dropped')`); err != nil {
		t.Fatal(err)
	}
	if err := sp.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `INSERT INTO `+effects+` (run_id) VALUES ('r')`); err != nil {
		t.Fatal(err)
	}
	if err := stx.Commit(ctx, stepS); err != nil {
		t.Fatal(err)
	}
	stx.Rollback() // after Commit: nothing to do
	if n := countRows(t, j, effects); n != 1 {
		t.Errorf("%d effect rows, want 1 (the savepoint's row rolled back)", n)
	}
	if _, steps, _ := j.LoadRun(ctx, "r"); len(steps) != 1 || steps[0].Status != journal.StepSucceeded {
		t.Errorf("journal rows %+v, want S succeeded", steps)
	}
	if got := j.Counters().Commits - before; got != 1 {
		t.Errorf("%d commits, want 1", got)
	}
	// The step's handle is dead once the step returned: no statement can
	// reach a connection that went back to the pool.
	if _, err := tx.Exec(ctx, `INSERT INTO `+effects+` (run_id) VALUES ('late')`); !errors.Is(err, pgx.ErrTxClosed) {
		t.Errorf("exec after the step: %v, want ErrTxClosed", err)
	}
	if err := tx.QueryRow(ctx, `SELECT 1`).Scan(new(int)); !errors.Is(err, pgx.ErrTxClosed) {
		t.Errorf("query row after the step: %v, want ErrTxClosed", err)
	}
	if _, err := tx.Query(ctx, `SELECT 1`); !errors.Is(err, pgx.ErrTxClosed) {
		t.Errorf("query after the step: %v, want ErrTxClosed", err)
	}
	if err := tx.SendBatch(ctx, &pgx.Batch{}).Close(); !errors.Is(err, pgx.ErrTxClosed) {
		t.Errorf("batch after the step: %v, want ErrTxClosed", err)
	}
	if btx := tx.SendBatch(ctx, &pgx.Batch{}).Tx(); btx != nil { // pgx v5.12's addition
		t.Errorf("batch after the step began a transaction: %v", btx)
	}
	if n := countRows(t, j, effects); n != 1 {
		t.Errorf("%d effect rows after late writes, want 1", n)
	}
}

// A step's code may not end the step's transaction itself: committing
// without the journal row would break exactly once.
func TestTxStepHandleRefusesCommitAndRollback(t *testing.T) {
	ctx := context.Background()
	j, effects, lease := stepTxFixture(t)
	stx, tx := beginWithEffect(t, j, effects, lease)
	defer stx.Rollback()
	if err := tx.Commit(ctx); err == nil {
		t.Error("the step's code committed the step's transaction")
	}
	if err := tx.Rollback(ctx); err == nil {
		t.Error("the step's code rolled back the step's transaction")
	}
	if n := countRows(t, j, effects); n != 0 {
		t.Errorf("%d effect rows visible before the step's commit, want 0", n)
	}
	if err := stx.Commit(ctx, stepS); err != nil {
		t.Fatalf("the step's transaction after refused Commit/Rollback: %v", err)
	}
	if n := countRows(t, j, effects); n != 1 {
		t.Errorf("%d effect rows, want 1", n)
	}
}

// A step that swallowed the error of one of its statements returns nil on
// an aborted transaction: the commit must report it, not claim success.
func TestTxStepAbortedTransactionIsNotReportedCommitted(t *testing.T) {
	ctx := context.Background()
	j, effects, lease := stepTxFixture(t)
	stx, tx := beginWithEffect(t, j, effects, lease)
	defer stx.Rollback()
	if _, err := tx.Exec(ctx, `SELECT 1/0`); err == nil {
		t.Fatal("division by zero succeeded")
	}
	if err := stx.Commit(ctx, stepS); err == nil {
		t.Fatal("commit of an aborted transaction succeeded")
	}
	if n := countRows(t, j, effects); n != 0 {
		t.Errorf("%d effect rows, want 0", n)
	}
	if _, steps, _ := j.LoadRun(ctx, "r"); len(steps) != 0 {
		t.Errorf("%d journal rows, want 0", len(steps))
	}
}
