package pgjournal_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/resumegen/resumegen/runtime/journal"
	"github.com/resumegen/resumegen/runtime/pgjournal"
	"github.com/resumegen/resumegen/runtime/resume"
)

// A tx step whose context ends while one of its statements is on the wire
// (a run cancelled while it executes, a lease about to expire) loses its
// connection: pgx interrupts the statement by closing it, so the rollback
// that follows cannot be sent ("conn closed"). The transaction did not
// commit all the same (the server aborts the transaction of a session that
// ends), and the run must end as its stop says, not stop on the rollback.
// This is what made resumectl's TestCancelRunning/postgres flaky: its
// WriteScores step was cancelled, now and then, inside an INSERT.

// slowTxPlan steers slowTxFlow: the table its tx step writes to, and a
// marker that names its slow statement in pg_stat_activity.
type slowTxPlan struct {
	Table, Marker string
}

// slowTxStep writes a row in its transaction, then runs a statement that
// lasts until its context ends. It is only called in a run, where
// resume.Tx hands it the step's transaction.
func slowTxStep(ctx context.Context, p slowTxPlan) error {
	q := resume.Tx[execer](ctx, nil)
	if _, err := q.Exec(ctx, `INSERT INTO `+p.Table+` (note) VALUES ('written')`); err != nil {
		return err
	}
	_, err := q.Exec(ctx, `SELECT pg_sleep(60) /* `+p.Marker+` */`)
	return err
}

// slowTxAfter must never execute in a cancelled run.
func slowTxAfter(ctx context.Context) error { return nil }

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

func TestTxStepCancelledMidStatement(t *testing.T) {
	t.Run("direct", func(t *testing.T) { cancelMidStatement(t, testPool(t), testPool(t)) })
	t.Run("pgbouncer", func(t *testing.T) { cancelMidStatement(t, pgBouncerPool(t), testPool(t)) })
}

// cancelMidStatement cancels a run on pool whose tx step is inside a
// statement (seen in pg_stat_activity through the direct pool) and checks
// that the run ends cancelled, its step's row not committed.
func cancelMidStatement(t *testing.T, pool, direct *pgxpool.Pool) {
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
	// The slow statement is on the wire once the server executes it.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		var n int
		if err := direct.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE state = 'active' AND pid <> pg_backend_pid() AND query LIKE '%' || $1 || '%'`,
			plan.Marker).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			break
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
	if err := e.Cancel(ctx, id, journal.CancelOptions{Running: true}); err != nil {
		t.Fatal(err)
	}
	var out outcome
	select {
	case out = <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("the cancelled run did not end within 60s")
	}
	if out.res.Status != journal.StatusCancelled || !errors.Is(out.err, resume.ErrRunCancelled) {
		t.Fatalf("Start of the run cancelled inside its tx step's statement: %s, %v; want cancelled", out.res.Status, out.err)
	}
	if out.err != nil && strings.Contains(out.err.Error(), "roll back") {
		t.Errorf("the run's error speaks of its rollback: %v", out.err)
	}
	r, steps, err := j.LoadRun(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != journal.StatusCancelled {
		t.Errorf("the journal says %s, want cancelled", r.Status)
	}
	for _, s := range steps {
		if s.StepKey == "After" {
			t.Errorf("After has a row in the cancelled run: %+v", s)
		}
	}
	var n int
	if err := direct.QueryRow(ctx, `SELECT count(*) FROM `+table).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Errorf("%d rows of the cancelled tx step committed, want 0", n)
	}
}
