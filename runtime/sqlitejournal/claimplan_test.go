package sqlitejournal_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/resumegen/resumegen/runtime/journal"
	"github.com/resumegen/resumegen/runtime/sqlitejournal"
)

// TestClaimBatchPlan: the batched claim (ClaimNext is a batch of one)
// reads each kind of candidate from the index that yields it first, in
// the order wanted, with 100,000 runs pending, 100,000 asleep and 1,000
// due: no scan of resume_runs, no OR of indexes, and no sort but the
// final pick's of the few candidates (issue 23 §2). The pending and the
// due ones come a workflow at a time from the indexes that hold exactly
// them (resume_runs_claim_pending, _claim_due), the due earliest due
// first: ordered by created_at, every due run of a storm was read and
// sorted at each claim.
func TestClaimBatchPlan(t *testing.T) {
	ctx := context.Background()
	j, err := sqlitejournal.Open(ctx, filepath.Join(t.TempDir(), "j.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	if _, err := j.DB().ExecContext(ctx, `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 201000)
		INSERT INTO resume_runs (run_id, workflow, version, status, input, created_at, updated_at, wait_kind, wake_at)
		SELECT 'r-' || i, 'app.Flow', 'v1', CASE WHEN i <= 100000 THEN 'pending' ELSE 'waiting' END, '[]',
			strftime('%Y-%m-%dT%H:%M:%f000Z', '2026-01-01', '+' || i || ' seconds'), '2026-01-01T00:00:00.000000Z',
			CASE WHEN i <= 100000 THEN '' ELSE 'sleep' END,
			CASE WHEN i <= 100000 THEN '' WHEN i <= 200000 THEN '2999-01-01T00:00:00.000000Z' ELSE '2026-01-01T00:00:00.000000Z' END FROM n`); err != nil {
		t.Fatal(err)
	}
	for _, req := range []journal.ClaimNextRequest{
		{Owner: "w", Lease: time.Minute, Workflows: []string{"app.Flow"}},
		{Owner: "w", Lease: time.Minute, Workflows: []string{"app.Flow", "app.Other"}, Holding: []string{"r-1"},
			Versions: []journal.WorkflowVersion{{Workflow: "app.Flow", Version: "v1"}}, AdvertisedWithin: time.Minute},
	} {
		plan, err := sqlitejournal.ExplainClaimBatch(ctx, j, req, 16)
		if err != nil {
			t.Fatal(err)
		}
		p := strings.Join(plan, "\n")
		t.Logf("plan of ClaimBatch(16, %d workflows, %d versions):\n%s", len(req.Workflows), len(req.Versions), p)
		if strings.Contains(p, "SCAN resume_runs") || strings.Contains(p, "MULTI-INDEX OR") {
			t.Errorf("the batch scans resume_runs or ORs indexes:\n%s", p)
		}
		if strings.Count(p, "resume_runs_by_status_created (status=?)") != 1 || !eachWorkflowFromClaimIndexes(p) {
			t.Errorf("the batch does not take its candidates from their indexes:\n%s", p)
		}
		if n := strings.Count(p, "USE TEMP B-TREE FOR ORDER BY"); n > 1 {
			t.Errorf("the batch sorts %d times (the candidates of one kind, not only the final pick):\n%s", n, p)
		}
	}
	// And it claims the oldest 16: the pending ones, created first.
	runs, err := j.ClaimBatch(ctx, journal.ClaimNextRequest{Owner: "w", Lease: time.Minute, Workflows: []string{"app.Flow"}}, 16)
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 16 || runs[0].Run.RunID != "r-1" || runs[15].Run.RunID != "r-16" {
		t.Fatalf("claimed %d runs, first %s", len(runs), runs[0].Run.RunID)
	}
}

// TestClaimPastBacklog: a claim reads no run it may not take. Older than
// the claimer's 2,000 pending runs are 100,000 it may not take of each
// kind: pending runs of another workflow (a program with no worker here),
// pending runs of a queue (its limits hold them back; they start through
// the queue's own claim) and due waiting runs of another workflow. The
// plan reads the claimer's candidates from the indexes that hold exactly
// them, a workflow at a time, and the claim takes its own runs only.
// (Before, its candidates came from resume_runs_by_status_created and
// resume_runs_by_wake, past every one of those runs; the time of a batch
// is logged behind 1,000 and 100,000.)
func TestClaimPastBacklog(t *testing.T) {
	ctx := context.Background()
	for _, n := range []int{1_000, 100_000} {
		j, err := sqlitejournal.Open(ctx, filepath.Join(t.TempDir(), "j.db"))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := j.DB().ExecContext(ctx, `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?1 * 3)
			INSERT INTO resume_runs (run_id, workflow, version, status, input, created_at, updated_at, queue, wait_kind, wake_at)
			SELECT 'o-' || i, CASE WHEN i % 3 = 1 THEN 'app.Flow' ELSE 'app.Other' END, 'v1', CASE WHEN i % 3 = 2 THEN 'waiting' ELSE 'pending' END, '[]',
				strftime('%Y-%m-%dT%H:%M:%f000Z', '2025-01-01', '+' || i || ' seconds'), '2025-01-01T00:00:00.000000Z',
				CASE WHEN i % 3 = 1 THEN 'q' ELSE '' END,
				CASE WHEN i % 3 = 2 THEN 'sleep' ELSE '' END,
				CASE WHEN i % 3 = 2 THEN '2025-01-01T00:00:00.000000Z' ELSE '' END FROM n`, n); err != nil {
			t.Fatal(err)
		}
		if _, err := j.DB().ExecContext(ctx, `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 2000)
			INSERT INTO resume_runs (run_id, workflow, version, status, input, created_at, updated_at)
			SELECT 'm-' || i, 'app.Flow', 'v1', 'pending', '[]', strftime('%Y-%m-%dT%H:%M:%f000Z', '2026-01-01', '+' || i || ' seconds'),
				'2026-01-01T00:00:00.000000Z' FROM n`); err != nil {
			t.Fatal(err)
		}
		// The claimer also runs a workflow with no run at all.
		req := journal.ClaimNextRequest{Owner: "w", Lease: time.Minute, Workflows: []string{"app.Flow", "app.Absent"}}
		plan, err := sqlitejournal.ExplainClaimBatch(ctx, j, req, 16)
		if err != nil {
			t.Fatal(err)
		}
		p := strings.Join(plan, "\n")
		if !eachWorkflowFromClaimIndexes(p) || strings.Contains(p, "SCAN resume_runs") {
			t.Errorf("behind %d: the claim does not read its candidates from resume_runs_claim_pending and _claim_due:\n%s", n, p)
		}
		var spent time.Duration
		const batches = 20
		for range batches {
			t0 := time.Now()
			runs, err := j.ClaimBatch(ctx, req, 16)
			spent += time.Since(t0)
			if err != nil || len(runs) != 16 {
				t.Fatalf("behind %d: ClaimBatch = %d runs, %v", n, len(runs), err)
			}
			for _, r := range runs {
				if !strings.HasPrefix(r.Run.RunID, "m-") {
					t.Fatalf("behind %d: claimed %s (workflow %s, queue %q), which is not the claimer's to take", n, r.Run.RunID, r.Run.Workflow, r.Run.Queue)
				}
			}
		}
		t.Logf("behind %d runs it may not take of each kind: %v a batch of 16", n, spent/batches)
		j.Close()
	}
}

// eachWorkflowFromClaimIndexes reports whether plan reads the pending and
// the due candidates of each of the claimer's workflows (a subquery
// correlated with each) from resume_runs_claim_pending and _claim_due.
func eachWorkflowFromClaimIndexes(plan string) bool {
	return strings.Count(plan, "CORRELATED LIST SUBQUERY") == 2 &&
		strings.Count(plan, "resume_runs_claim_pending (workflow=?)") == 1 &&
		strings.Count(plan, "resume_runs_claim_due (workflow=? AND wake_at>? AND wake_at<?)") == 1
}
