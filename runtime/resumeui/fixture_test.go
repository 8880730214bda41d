package resumeui

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/resumegen/resumegen/internal/pgtest"
	"github.com/resumegen/resumegen/runtime/deploy"
	"github.com/resumegen/resumegen/runtime/journal"
	"github.com/resumegen/resumegen/runtime/openjournal"
)

const (
	shopWF = "example.com/shop.Checkout"
	// markupID is a run id an attacker chose: it must render as text.
	markupID = `<script>alert("id")</script><img src=x onerror=alert(1)>`
	parkedID = "order-1042"
	failedID = "order-1041"
)

// base is the fixture's clock origin.
var base = time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)

// openSQLite is a fresh SQLite journal; openPG one on a fresh PostgreSQL
// database (skipped without a server).
func openSQLite(t *testing.T) journal.Journal {
	return openAt(t, filepath.Join(t.TempDir(), "journal.db"))
}

func openPG(t *testing.T) journal.Journal { return openAt(t, pgtest.FreshDatabase(t)) }

func openAt(t *testing.T, db string) journal.Journal {
	t.Helper()
	j, err := openjournal.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { j.Close() })
	return j
}

// seed fills j with n plain runs and the runs the tests look at: one
// parked on a once step, one failed, one whose id holds markup. It
// returns the ids of the plain runs, newest first.
func seed(t *testing.T, j journal.Journal, n int) []string {
	t.Helper()
	ctx := context.Background()
	def := deploy.Definition{Workflow: shopWF, Version: "v2", Steps: []deploy.Step{
		{Name: "Reserve", Callee: "example.com/shop.Reserve", Policy: "default", Pos: "shop/checkout.go:31"},
		{Name: "Charge", Callee: "example.com/shop.Charge", Policy: "once", Pos: "shop/checkout.go:35"},
		{Name: "Ship", Callee: "example.com/shop.Ship", Policy: "default", Pos: "shop/checkout.go:40"},
	}, Graph: "flowchart TD\n  n1([\"Checkout\"])\n  n2([\"end\"])\n  n3[\"Reserve\"]\n  n4[\"Charge (once)\"]\n  n5[\"Ship\"]\n  n1 --> n3\n  n3 --> n4\n  n4 --> n5\n  n5 --> n2\n  %% step n3 Reserve\n  %% step n4 Charge\n  %% step n5 Ship\n"}
	b, _ := json.Marshal(def)
	if err := j.SaveManifest(ctx, journal.ManifestRecord{Workflow: shopWF, Version: "v2", Manifest: "Reserve\nCharge\nShip\n", Definition: b, CreatedAt: base}); err != nil {
		t.Fatal(err)
	}
	var plain []string
	for i := range n {
		id := fmt.Sprintf("sync-%05d", i)
		at := base.Add(-time.Duration(n-i) * time.Minute)
		if _, _, err := j.CreateRun(ctx, journal.RunRecord{RunID: id, Workflow: "example.com/batch.Sync", Version: "v1", Input: []byte(`[1]`), CreatedAt: at, UpdatedAt: at}); err != nil {
			t.Fatal(err)
		}
		plain = append([]string{id}, plain...)
	}
	parked(t, j, parkedID, base.Add(time.Minute))
	failed(t, j, failedID, base.Add(2*time.Minute))
	if _, _, err := j.CreateRun(ctx, journal.RunRecord{RunID: markupID, Workflow: shopWF, Version: "v2", Input: []byte(`["<b>bold</b>"]`), CreatedAt: base.Add(3 * time.Minute), UpdatedAt: base}); err != nil {
		t.Fatal(err)
	}
	return plain
}

// entered creates run id of the shop workflow claimed by a worker, and
// returns its lease.
func entered(t *testing.T, j journal.Journal, id string, at time.Time) journal.Lease {
	t.Helper()
	_, _, err := j.CreateRun(context.Background(), journal.RunRecord{RunID: id, Workflow: shopWF, Version: "v2", Input: []byte(`[{"id":1042,"total":"99.90"}]`),
		CreatedAt: at, UpdatedAt: at, LeaseOwner: "worker-a", LeaseUntil: at.Add(time.Minute)})
	if err != nil {
		t.Fatal(err)
	}
	return journal.Lease{RunID: id, Owner: "worker-a", Epoch: 1}
}

func write(t *testing.T, j journal.Journal, l journal.Lease, s journal.StepRecord) {
	t.Helper()
	s.RunID = l.RunID
	if err := j.WriteStep(context.Background(), l, s); err != nil {
		t.Fatal(err)
	}
}

// parked makes run id park on its once step Charge, whose outcome is
// unknown.
func parked(t *testing.T, j journal.Journal, id string, at time.Time) {
	l := entered(t, j, id, at)
	write(t, j, l, journal.StepRecord{StepKey: "Reserve", Name: "Reserve", Status: journal.StepSucceeded, Result: []byte(`{"hold":"h-77"}`), Attempt: 2, Seq: 1,
		StartedAt: at, FinishedAt: at.Add(120 * time.Millisecond),
		History: []journal.AttemptRecord{{Attempt: 1, StartedAt: at, FinishedAt: at.Add(time.Millisecond), Error: "inventory: 503 Service Unavailable"}}})
	write(t, j, l, journal.StepRecord{StepKey: "Charge", Name: "Charge", Status: journal.StepInFlight, Attempt: 1, Seq: 2, StartedAt: at.Add(time.Second)})
	err := j.FinishRun(context.Background(), l, journal.RunRecord{RunID: id, Status: journal.StatusNeedsAttention, AttentionKind: journal.AttentionKindStep,
		AttentionStep: "Charge", Error: "step Charge (once) was in flight when its process stopped", UpdatedAt: at.Add(2 * time.Second)})
	if err != nil {
		t.Fatal(err)
	}
}

// failed makes run id fail on step Ship.
func failed(t *testing.T, j journal.Journal, id string, at time.Time) {
	l := entered(t, j, id, at)
	write(t, j, l, journal.StepRecord{StepKey: "Reserve", Name: "Reserve", Status: journal.StepSucceeded, Result: []byte(`{"hold":"h-76"}`), Attempt: 1, Seq: 1, StartedAt: at, FinishedAt: at.Add(time.Millisecond)})
	write(t, j, l, journal.StepRecord{StepKey: "Ship", Name: "Ship", Status: journal.StepFailed, Final: true, Error: "carrier: address rejected", Attempt: 3, Seq: 2, StartedAt: at, FinishedAt: at.Add(time.Second)})
	err := j.FinishRun(context.Background(), l, journal.RunRecord{RunID: id, Status: journal.StatusFailed, FailedStep: "Ship", Error: "step Ship: carrier: address rejected", UpdatedAt: at.Add(time.Second)})
	if err != nil {
		t.Fatal(err)
	}
}
