package pgjournal_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/resumegen/resumegen/internal/pgtest"
	"github.com/resumegen/resumegen/runtime/journal"
	"github.com/resumegen/resumegen/runtime/pgjournal"
)

// TestClaimWithVersionsKeepsAGenericPlan: the claim of a worker that lists
// its versions and a short lineage is planned once per connection, not at
// every claim. Given its version lists as constants, a custom plan would
// always look cheaper than the generic one, and the server planned the
// statement anew each time (about a millisecond, as much as the claim:
// BenchmarkClaimNext's versions/any was 1.4 to 1.9 instead of 0.7 to 0.9).
func TestClaimWithVersionsKeepsAGenericPlan(t *testing.T) {
	ctx := context.Background()
	cfg, err := pgxpool.ParseConfig(pgtest.FreshDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	cfg.MaxConns = 1 // the prepared statement's counters are per connection
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	j, err := pgjournal.Open(ctx, pool)
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	const wf = "app.Flow"
	if err := j.Advertise(ctx, "v1-worker", []journal.WorkflowVersion{{Workflow: wf, Version: "v1"}}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 50; i++ {
		now := time.Now()
		r := journal.RunRecord{RunID: fmt.Sprint("skipped-", i), Workflow: wf, Version: []string{"v1", "v3"}[i%2], Input: []byte(`[]`), CreatedAt: now, UpdatedAt: now}
		if _, _, err := j.CreateRun(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	const claims = 20
	for i := 0; i < claims; i++ {
		now := time.Now()
		if _, _, err := j.CreateRun(ctx, journal.RunRecord{RunID: fmt.Sprint("mine-", i), Workflow: wf, Version: "v2", Input: []byte(`[]`), CreatedAt: now, UpdatedAt: now}); err != nil {
			t.Fatal(err)
		}
		r, _, err := j.ClaimNext(ctx, journal.ClaimNextRequest{Owner: "v2-worker", Lease: time.Minute, Workflows: []string{wf},
			Versions: []journal.WorkflowVersion{{Workflow: wf, Version: "v2"}}, Older: []journal.WorkflowVersion{{Workflow: wf, Version: "v1"}},
			AdvertisedWithin: time.Hour})
		if err != nil || r.Version != "v2" {
			t.Fatalf("claim %d: %s, %v", i, r.Version, err)
		}
	}
	var generic, custom int64
	if err := pool.QueryRow(ctx, `SELECT generic_plans, custom_plans FROM pg_prepared_statements
		WHERE statement LIKE '%claimable AS%' AND statement NOT LIKE '%pg_prepared_statements%'`).Scan(&generic, &custom); err != nil {
		t.Fatalf("the claim's prepared statement: %v", err)
	}
	t.Logf("%d claims: %d generic plans, %d custom plans", claims, generic, custom)
	if generic == 0 || custom > 5 {
		t.Errorf("%d claims took %d custom plans and %d generic ones: the claim is planned anew each time", claims, custom, generic)
	}
}
