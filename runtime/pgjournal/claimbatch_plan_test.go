package pgjournal_test

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/resumegen/resumegen/runtime/journal"
	"github.com/resumegen/resumegen/runtime/pgjournal"
)

// TestClaimBatchPlan: the batched claim (ClaimNext is a batch of one)
// reads each kind of candidate from the index that yields it first, with
// 100,000 runs queued and 100,000 asleep: no scan of the table, no read
// of runs in created order past other statuses, no sort of a
// candidate's rows (issue 23 §2). It checks the plans, generic and
// custom, with and without the worker's versions, each executed and
// rolled back (its pages read are logged). The statistics are taken while every run was
// still running, as after a burst of starts, so that the plans do not
// depend on fresh ones: "status = 'running'" let the planner read every
// run in created order then (resume_runs_by_created, 11 to 22 ms a claim
// in a storm of 10,000 runs just put to sleep).
func TestClaimBatchPlan(t *testing.T) {
	ctx := context.Background()
	pool := testPool(t)
	pages := map[int]int{}
	for _, n := range []int{1_000, 100_000} {
		j, schema := openFresh(t, pool)
		defer j.Close()
		runs := pgx.Identifier{schema, "resume_runs"}.Sanitize()
		// n pending, n asleep for long, 1,000 due: all inserted running,
		// analyzed, then moved to their status, as Start leaves them.
		for _, q := range []string{
			`INSERT INTO ` + runs + ` (run_id, workflow, version, status, input, created_at, updated_at, lease_owner, lease_until)
				SELECT 'r-' || i, 'app.Flow', 'v1', 'running', '[]', now() - interval '1 day' + i * interval '1 ms', now(), 'starter', now() + interval '1 hour'
				FROM generate_series(1, $1::int * 2 + 1000) AS i`,
			`ANALYZE ` + runs,
			`UPDATE ` + runs + ` SET status = 'pending', lease_owner = '', lease_until = NULL WHERE run_id IN (SELECT 'r-' || i FROM generate_series(1, $1::int) AS i)`,
			`UPDATE ` + runs + ` SET status = 'waiting', lease_owner = '', lease_until = NULL, wait_kind = 'sleep', wake_at = now() + interval '100 years'
				WHERE run_id IN (SELECT 'r-' || i FROM generate_series($1::int + 1, $1::int * 2) AS i)`,
			`UPDATE ` + runs + ` SET status = 'waiting', lease_owner = '', lease_until = NULL, wait_kind = 'sleep', wake_at = now() - interval '1 minute'
				WHERE status = 'running'`,
		} {
			var args []any
			if strings.Contains(q, "$1") {
				args = []any{n}
			}
			if _, err := pool.Exec(ctx, q, args...); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
		conn, err := pool.Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, versions := range []bool{false, true} {
			args := `'w', '1 minute', '{app.Flow}', '{}'`
			if versions {
				args += `, '{app.Flow}', '{v1}', '1 minute', '{}', '{}'`
			}
			name := fmt.Sprintf("claim_%d_%v", n, versions)
			if _, err := conn.Exec(ctx, `PREPARE `+name+` AS `+pgjournal.ClaimBatchSQL(j, 16, versions)); err != nil {
				t.Fatal(err)
			}
			// A first execution marks dead the index entries the status
			// moves left behind (once, whatever claims follow).
			explainRolledBack(t, conn.Conn(), "force_generic_plan", `EXECUTE `+name+`(`+args+`)`)
			for _, mode := range []string{"force_custom_plan", "force_generic_plan"} {
				plan := explainRolledBack(t, conn.Conn(), mode, `EXECUTE `+name+`(`+args+`)`)
				text := strings.Join(plan, "\n")
				if mode == "force_generic_plan" {
					t.Logf("%d runs, versions %v, generic plan:\n%s", n, versions, text)
				}
				// The plan a worker keeps (generic, after five
				// executions), at depth: a custom plan of a small table
				// may scan it, and one from statistics older than the
				// status moves may sort a candidate's few rows.
				for _, bad := range []string{"Seq Scan on resume_runs", "resume_runs_by_created ", "resume_runs_by_workflow_created", "Sort Key: resume_runs"} {
					if n > 1000 && mode == "force_generic_plan" && strings.Contains(text, bad) {
						t.Errorf("%d runs, versions %v, %s: the plan has %q:\n%s", n, versions, mode, bad, text)
					}
				}
				if n > 1000 && mode == "force_generic_plan" && (strings.Count(text, "resume_runs_by_status_created") != 1 ||
					!strings.Contains(text, "resume_runs_claim_pending") || !strings.Contains(text, "resume_runs_claim_due")) {
					t.Errorf("%d runs, versions %v, %s: the candidates are not read from their indexes:\n%s", n, versions, mode, text)
				}
				hit := pagesRead(t, text)
				pages[n] = max(pages[n], hit)
				t.Logf("%d runs, versions %v, %s: %d pages", n, versions, mode, hit)
			}
		}
		conn.Release()
	}
	// Logged, not asserted: the pages also count the dead index entries
	// the setup's mass updates left, which the first claims mark dead.
	t.Logf("pages read by a batch of 16: %v", pages)
}

// explainRolledBack runs EXPLAIN (ANALYZE, BUFFERS) of query under the
// plan cache mode, in a transaction rolled back: the claim it executes
// claims nothing for good.
func explainRolledBack(t *testing.T, conn *pgx.Conn, mode, query string) []string {
	t.Helper()
	ctx := context.Background()
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `SET LOCAL plan_cache_mode = `+mode); err != nil {
		t.Fatal(err)
	}
	rows, err := tx.Query(ctx, `EXPLAIN (ANALYZE, BUFFERS) `+query, pgx.QueryExecModeSimpleProtocol)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	return plan
}

// TestClaimPastBacklog: a claim reads no run it may not take. 100,000
// runs it may not take are older than 2,000 it may, in each of three
// kinds: pending runs of another workflow (a program with no worker
// here), pending runs of a queue (its limits hold them back; a queue's
// runs start through its own claim) and due waiting runs of another
// workflow; with the table analyzed, and never analyzed (autovacuum off:
// a table that grew within autovacuum's first minute). And the claimer's
// own 100,000 runs, when it also runs a workflow with no run at all: with
// statistics that showed nearly every run pending, the planner read that
// workflow's candidates in created order, past the whole table. A batch of 16
// reads as many pages behind 100,000 as behind 1,000 (less 50%), and
// every run it claims is one of its own. Before (its candidates read from
// indexes of every run of the status), 2,000-2,500 pages against 390
// here, 31 ms a batch behind 100,000 pending runs of another workflow
// against 1.4 ms behind none, and a wake storm without statistics drained
// at 380 runs/s against 2,600.
func TestClaimPastBacklog(t *testing.T) {
	ctx := context.Background()
	pool := testPool(t)
	for _, kind := range []string{"other workflow", "queue", "other workflow, due", "own"} {
		for _, analyzed := range []bool{true, false} {
			pages := map[int]int{}
			for _, n := range []int{1_000, 100_000} {
				j, schema := openFresh(t, pool)
				runs := pgx.Identifier{schema, "resume_runs"}.Sanitize()
				if !analyzed {
					if _, err := pool.Exec(ctx, `ALTER TABLE `+runs+` SET (autovacuum_enabled = false)`); err != nil {
						t.Fatal(err)
					}
				}
				wf, queue, status := "app.Other", "", "pending"
				switch kind {
				case "queue":
					wf, queue = "app.Flow", "q"
				case "other workflow, due":
					status = "waiting"
				case "own":
					wf = "app.Flow" // the claimer's own, oldest first: it takes them
				}
				if _, err := pool.Exec(ctx, `INSERT INTO `+runs+` (run_id, workflow, version, status, input, created_at, updated_at, queue, wait_kind, wake_at)
						SELECT 'o-' || i, $2, 'v1', $3, '[]', now() - interval '1 day' + i * interval '1 ms', now(), $4,
							CASE WHEN $3 = 'waiting' THEN 'sleep' ELSE '' END, CASE WHEN $3 = 'waiting' THEN now() - interval '2 days' END
						FROM generate_series(1, $1::int) AS i`, n, wf, status, queue); err != nil {
					t.Fatal(err)
				}
				if _, err := pool.Exec(ctx, `INSERT INTO `+runs+` (run_id, workflow, version, status, input, created_at, updated_at, wait_kind, wake_at)
						SELECT 'm-' || i, 'app.Flow', 'v1', $1, '[]', now() + i * interval '1 ms', now(),
							CASE WHEN $1 = 'waiting' THEN 'sleep' ELSE '' END, CASE WHEN $1 = 'waiting' THEN now() - interval '1 hour' END
						FROM generate_series(1, 2000) AS i`, status); err != nil {
					t.Fatal(err)
				}
				if analyzed {
					if _, err := pool.Exec(ctx, `ANALYZE `+runs); err != nil {
						t.Fatal(err)
					}
				}
				conn, err := pool.Acquire(ctx)
				if err != nil {
					t.Fatal(err)
				}
				name := fmt.Sprintf("past_%d_%d_%v", len(kind), n, analyzed)
				if _, err := conn.Exec(ctx, `PREPARE `+name+` AS `+pgjournal.ClaimBatchSQL(j, 16, false)); err != nil {
					t.Fatal(err)
				}
				for _, mode := range []string{"force_custom_plan", "force_generic_plan"} {
					plan := explainRolledBack(t, conn.Conn(), mode, `EXECUTE `+name+`('w', '1 minute', '{app.Flow,app.Absent}', '{}')`)
					text := strings.Join(plan, "\n")
					if !strings.Contains(text, "rows=16 loops=1") || !strings.HasPrefix(plan[0], "Update on resume_runs") {
						t.Fatalf("%s, analyzed %v, %d: the claim did not take 16 runs:\n%s", kind, analyzed, n, text)
					}
					hit := pagesRead(t, text)
					pages[n] = max(pages[n], hit)
					t.Logf("%s, analyzed %v, behind %d, %s: %d pages", kind, analyzed, n, mode, hit)
					if n > 1000 {
						if hit > pages[1000]*3/2 {
							t.Errorf("%s, analyzed %v, %s: %d pages behind %d runs, %d behind 1,000:\n%s", kind, analyzed, mode, hit, n, pages[1000], text)
						}
					}
				}
				if _, err := conn.Exec(ctx, `DEALLOCATE `+name); err != nil {
					t.Fatal(err)
				}
				conn.Release()
				// What the claim takes, for good: its own runs only.
				got, err := j.ClaimBatch(ctx, journal.ClaimNextRequest{Owner: "w", Lease: time.Minute, Workflows: []string{"app.Flow", "app.Absent"}}, 16)
				if err != nil || len(got) != 16 {
					t.Fatalf("%s: ClaimBatch = %d runs, %v", kind, len(got), err)
				}
				want := "m-"
				if kind == "own" {
					want = "o-"
				}
				for _, r := range got {
					if !strings.HasPrefix(r.Run.RunID, want) {
						t.Errorf("%s: claimed %s (queue %q, workflow %s), which is not the claimer's to take", kind, r.Run.RunID, r.Run.Queue, r.Run.Workflow)
					}
				}
				j.Close()
			}
		}
	}
}

// pagesRead is the shared buffers the plan's top node hit, from EXPLAIN
// (ANALYZE, BUFFERS) text.
func pagesRead(t *testing.T, plan string) int {
	t.Helper()
	m := regexp.MustCompile(`Buffers: shared hit=(\d+)`).FindStringSubmatch(plan)
	if m == nil {
		t.Fatalf("no buffer count in the plan:\n%s", plan)
	}
	hit, _ := strconv.Atoi(m[1])
	return hit
}
