package pgjournal_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/resumegen/resumegen/runtime/journaltest"
	"github.com/resumegen/resumegen/runtime/pgjournal"
)

// TestWaitingClaimUsesIndex: with 10,000 runs waiting for later, the claim
// of the next run reads waiting runs through resume_runs_claim_due instead
// of scanning them, and finds nothing quickly; NextWake reads the earliest
// wake-up from an index too.
func TestWaitingClaimUsesIndex(t *testing.T) {
	ctx := context.Background()
	pool := testPool(t)
	j, schema := openFresh(t, pool)
	defer j.Close()
	runs := pgx.Identifier{schema, "resume_runs"}.Sanitize()
	if _, err := pool.Exec(ctx, `INSERT INTO `+runs+` (run_id, workflow, version, status, input, created_at, updated_at, wait_kind, wake_at)
		SELECT 'w-' || i, 'app.Flow', 'v1', 'waiting', '[]', now(), now(), 'sleep', now() + interval '1 hour' + i * interval '1 second'
		FROM generate_series(1, 10000) AS i`); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `ANALYZE `+runs); err != nil {
		t.Fatal(err)
	}
	rows, err := pool.Query(ctx, `EXPLAIN `+pgjournal.ClaimBatchSQL(j, 1, false), "w", time.Minute, []string{"app.Flow"}, []string{})
	if err != nil {
		t.Fatal(err)
	}
	plan, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Join(plan, "\n")
	t.Logf("plan:\n%s", text)
	if !strings.Contains(text, "resume_runs_claim_due") || strings.Contains(text, "Seq Scan on resume_runs") {
		t.Fatalf("the claim does not read waiting runs by resume_runs_claim_due:\n%s", text)
	}
	journaltest.CheckNoneDue(t, j, 50) // over 10,000 waiting runs
	wake, args := pgjournal.NextWakeQuery(j, "app.Flow")
	rows, err = pool.Query(ctx, `EXPLAIN `+wake, args...)
	if err != nil {
		t.Fatal(err)
	}
	plan, err = pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	text = strings.Join(plan, "\n")
	t.Logf("plan of NextWake:\n%s", text)
	if !strings.Contains(text, "Index Scan using resume_runs_") || strings.Contains(text, "Seq Scan") || strings.Contains(text, "Sort") {
		t.Fatalf("NextWake does not read the earliest wake-up from an index:\n%s", text)
	}
	d, ok, err := j.NextWake(ctx, []string{"app.Flow"})
	if err != nil || !ok || d < 59*time.Minute || d > time.Hour+2*time.Second {
		t.Fatalf("NextWake = %v, %v, %v; want about an hour", d, ok, err)
	}
}
