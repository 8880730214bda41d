package pgjournal_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/resumegen/resumegen/runtime/journal"
	"github.com/resumegen/resumegen/runtime/pgjournal"
	"github.com/resumegen/resumegen/runtime/resume"
)

// A tx step whose connection ends while one of its statements is on the
// wire loses its transaction: the server aborts it, and pgx closes the
// connection (of a statement whose context ended: a run cancelled while
// it executes, a lease about to expire; or of a FATAL error: a terminated
// session, a server restart), so the rollback that follows cannot be sent
// ("conn closed"). Nothing of the transaction committed all the same.
//
//   - Cancelled: the run ends cancelled, as its stop says. Before, the
//     engine stopped the run on the failed rollback and left it pending:
//     resumectl's TestCancelRunning/postgres failed so, now and then, its
//     WriteScores step cancelled inside an INSERT.
//   - Terminated: the attempt has no outcome of its own (the journal's
//     connection failed, not the step): the run stops unjournaled, and its
//     resume executes the step again, as after a crash. Journaling the
//     step's error instead failed the run (the chaos test's runs failed
//     with "insert score ...: terminating connection due to administrator
//     command").

// slowTxPlan steers slowTxFlow: the table its tx step writes to, and a
// marker that names its slow statement in pg_stat_activity.
type slowTxPlan struct {
	Table, Marker string
}

// slowTxSlept lists the markers whose slow statement ran: it runs in the
// first execution of a run's step only.
var slowTxSlept sync.Map

// slowTxStep writes a row in its transaction, then runs a statement that
// lasts until its context ends. It is only called in a run, where
// resume.Tx hands it the step's transaction.
func slowTxStep(ctx context.Context, p slowTxPlan) error {
	q := resume.Tx[execer](ctx, nil)
	if _, err := q.Exec(ctx, `INSERT INTO `+p.Table+` (note) VALUES ('written')`); err != nil {
		return err
	}
	if _, slept := slowTxSlept.LoadOrStore(p.Marker, true); slept {
		return nil
	}
	_, err := q.Exec(ctx, `SELECT pg_sleep(60) /* `+p.Marker+` */`)
	return err
}

// slowTxAfter must never execute in a cancelled run.
func slowTxAfter(ctx context.Context) error { defer begin(ctx)(); return nil }

var slowTxSteps = []resume.StepDef{
	{Name: "SlowTx", Callee: holdPkg + ".slowTxStep", Signature: "func(context.Context, " + holdPkg + ".slowTxPlan) error", Policy: resume.PolicyTx, JSON: "null"},
	{Name: "After", Callee: holdPkg + ".slowTxAfter", Signature: "func(context.Context) error", JSON: "null"},
}

// slowTxFlow, the workflow SlowTxFlow, runs SlowTx, then After.
func slowTxFlow(ctx context.Context, p slowTxPlan) error {
	if err := slowTxStep(ctx, p); err != nil {
		return err
	}
	return slowTxAfter(ctx)
}

func init() {
	resume.Register(slowTxFlow, &resume.WorkflowDef{
		Package: holdPkg, Name: "SlowTxFlow", Version: "slowtx-v1", Steps: slowTxSteps,
		Run: func(ctx context.Context, args resume.Args) (any, error) {
			var p slowTxPlan
			if err := args.Decode(&p); err != nil {
				return nil, err
			}
			if err := resume.Call0(ctx, &slowTxSteps[0], func(ctx context.Context) error { return slowTxStep(ctx, p) }); err != nil {
				return nil, err
			}
			return nil, resume.Call0(ctx, &slowTxSteps[1], slowTxAfter)
		},
	})
}

func TestTxStepLosesItsConnection(t *testing.T) {
	for _, how := range []string{"cancelled", "terminated"} {
		t.Run(how+"/direct", func(t *testing.T) { loseTxConnection(t, how, testPool(t), testPool(t)) })
		t.Run(how+"/pgbouncer", func(t *testing.T) { loseTxConnection(t, how, pgBouncerPool(t), testPool(t)) })
	}
}

// loseTxConnection runs slowTxFlow on pool and, once its tx step's slow
// statement is on the wire (seen in pg_stat_activity through the direct
// pool), cancels the run or terminates the statement's session (how).
func loseTxConnection(t *testing.T, how string, pool, direct *pgxpool.Pool) {
	ctx := context.Background()
	schema := freshSchema(t, direct)
	j, err := pgjournal.Open(ctx, pool, pgjournal.WithSchema(schema))
	if err != nil {
		t.Fatal(err)
	}
	table := pgx.Identifier{schema, "notes"}.Sanitize()
	if _, err := direct.Exec(ctx, `CREATE TABLE `+table+` (note text NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	e := resume.NewEngine(j, resume.WithLease(3*time.Second))
	id := "slowtx-" + schema
	plan := slowTxPlan{Table: table, Marker: "marker-" + schema}
	type outcome struct {
		res resume.Result
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := e.Start(ctx, id, slowTxFlow, plan)
		done <- outcome{res, err}
	}()
	var pid int32
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		err := direct.QueryRow(ctx, `SELECT pid FROM pg_stat_activity WHERE state = 'active' AND pid <> pg_backend_pid() AND query LIKE '%' || $1 || '%'`,
			plan.Marker).Scan(&pid)
		if err == nil {
			break
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			t.Fatal(err)
		}
		select {
		case out := <-done:
			t.Fatalf("the run ended before its slow statement ran: %s, %v", out.res.Status, out.err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("the tx step's slow statement never ran")
		}
	}
	if how == "cancelled" {
		err = e.Cancel(ctx, id, journal.CancelOptions{Running: true})
	} else {
		_, err = direct.Exec(ctx, `SELECT pg_terminate_backend($1)`, pid)
	}
	if err != nil {
		t.Fatal(err)
	}
	var out outcome
	select {
	case out = <-done:
	case <-time.After(60 * time.Second):
		t.Fatalf("the run did not return within 60s of its tx step's session being %s", how)
	}
	rows := func() int {
		var n int
		if err := direct.QueryRow(ctx, `SELECT count(*) FROM `+table).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := rows(); n != 0 {
		t.Errorf("%d rows of the lost transaction committed, want 0", n)
	}

	if how == "cancelled" {
		if out.res.Status != journal.StatusCancelled || !errors.Is(out.err, resume.ErrRunCancelled) {
			t.Fatalf("Start of the run cancelled inside its tx step's statement: %s, %v; want cancelled", out.res.Status, out.err)
		}
		if strings.Contains(out.err.Error(), "roll back") {
			t.Errorf("the run's error speaks of its rollback: %v", out.err)
		}
		if r, _, err := j.LoadRun(ctx, id); err != nil || r.Status != journal.StatusCancelled {
			t.Errorf("the journal says %s (%v), want cancelled", r.Status, err)
		}
		if n := len(executionsOf(id, "After")); n != 0 {
			t.Errorf("After executed %d times in the cancelled run", n)
		}
		return
	}

	// Terminated: the run stopped, its step's attempt unjournaled, and it
	// resumes as after a crash.
	if out.res.Status != journal.StatusPending || !errors.Is(out.err, journal.ErrTxLost) {
		t.Fatalf("Start of the run whose tx step's session was terminated: %s, %v; want pending, the transaction lost", out.res.Status, out.err)
	}
	r, steps, err := j.LoadRun(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != journal.StatusPending || len(steps) != 0 {
		t.Errorf("the journal says %s with %d steps, want pending with none: %+v", r.Status, len(steps), steps)
	}
	res, err := e.Resume(ctx, id)
	if err != nil || res.Status != journal.StatusSucceeded {
		t.Fatalf("the resume: %s, %v; want succeeded", res.Status, err)
	}
	if n := rows(); n != 1 {
		t.Errorf("%d rows of the tx step after the resume, want 1", n)
	}
	if n := len(executionsOf(id, "After")); n != 1 {
		t.Errorf("After executed %d times, want once", n)
	}
}
