package journaltest

import (
	"context"
	"fmt"
	"testing"

	"github.com/resumegen/resumegen/runtime/journal"
)

// The checks of a journal upgraded from schema version 1, shared by the
// backends' migration tests: each writes a version 1 schema and its rows
// by hand, in its own SQL, then opens it and hands the journal here.

// CheckUpgradedV1 checks journal j opened on a version 1 schema holding
// the runs parked-step (needs_attention for its in_flight step Notify),
// parked-version (needs_attention, no step: a version stop) and done
// (succeeded), each entered attempts times, and the manifests of workflow
// w: v0, v1 ("Notify x func() once") and v2, created in that order. It
// tells the parked runs apart, counts no claim since progress, and numbers
// the manifests by their creation, a new version last.
func CheckUpgradedV1(t *testing.T, j journal.Journal, attempts int) {
	t.Helper()
	ctx := context.Background()
	runs, err := j.ListRuns(ctx, journal.RunFilter{})
	if err != nil || len(runs) != 3 {
		t.Fatalf("runs after upgrade: %d (%v), want 3", len(runs), err)
	}
	for id, kind := range map[string]string{"parked-step": journal.AttentionKindStep, "parked-version": journal.AttentionKindVersion, "done": ""} {
		r, steps, err := j.LoadRun(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if r.AttentionKind != kind {
			t.Errorf("run %s: attention kind %q, want %q", id, r.AttentionKind, kind)
		}
		if r.Attempts != attempts || r.ClaimsSinceProgress != 0 {
			t.Errorf("run %s: %d attempts, %d claims since progress; want %d and 0", id, r.Attempts, r.ClaimsSinceProgress, attempts)
		}
		if id == "parked-step" && (len(steps) != 1 || steps[0].Status != journal.StepInFlight) {
			t.Errorf("run %s: steps %+v, want its in_flight Notify", id, steps)
		}
	}
	if m, err := j.Manifest(ctx, "w", "v1"); err != nil || m != "Notify x func() once" {
		t.Errorf("manifest after upgrade = %q, %v", m, err)
	}
	// seq follows created_at, no definition, and a new version comes last.
	if err := j.SaveManifest(ctx, journal.ManifestRecord{Workflow: "w", Version: "v3", Manifest: "v3", Definition: []byte(`{}`)}); err != nil {
		t.Fatal(err)
	}
	ms, err := j.ListManifests(ctx, "w")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range ms {
		got = append(got, fmt.Sprintf("%s:%d:%s", m.Version, m.Seq, m.Definition))
	}
	if want := "[v3:4:{} v2:3: v1:2: v0:1:]"; fmt.Sprint(got) != want {
		t.Errorf("manifests after upgrade: %v, want %s", got, want)
	}
}

// CheckUpgradedFailedRuns checks journal j opened on a version 1 schema
// holding run failed (steps A failed, B succeeded, C failed, in that
// order) and run pending (step A failed): a failed run's failed rows were
// delivered to its body (final), and its last failed row is the step a
// retry reopens; a failed row of an unfinished run was cut short and
// carries on.
func CheckUpgradedFailedRuns(t *testing.T, j journal.Journal) {
	t.Helper()
	ctx := context.Background()
	r, steps, err := j.LoadRun(ctx, "failed")
	if err != nil {
		t.Fatal(err)
	}
	if len(steps) != 3 {
		t.Fatalf("failed run after upgrade: %d steps, want 3", len(steps))
	}
	if r.FailedStep != "C" || !steps[0].Final || steps[1].Final || !steps[2].Final {
		t.Errorf("failed run after upgrade: failed step %q, final A=%v B=%v C=%v; want C, true, false, true",
			r.FailedStep, steps[0].Final, steps[1].Final, steps[2].Final)
	}
	if r, steps, err := j.LoadRun(ctx, "pending"); err != nil || len(steps) != 1 || r.FailedStep != "" || steps[0].Final {
		t.Errorf("pending run after upgrade: failed step %q, steps %+v (%v); want none, A not final", r.FailedStep, steps, err)
	}
	if err := j.Retry(ctx, "failed"); err != nil {
		t.Fatal(err)
	}
	r, steps, _ = j.LoadRun(ctx, "failed")
	if r.Status != journal.StatusPending || r.FailedStep != "" || !steps[0].Final || steps[2].Final || steps[2].AttemptBase != 1 || steps[0].AttemptBase != 0 {
		t.Errorf("after retry: %s, failed step %q, A %+v, C %+v; want pending, only C reopened with a fresh budget", r.Status, r.FailedStep, steps[0], steps[2])
	}
}
