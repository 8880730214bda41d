package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/resumegen/resumegen/generator"
	"github.com/resumegen/resumegen/runtime/journal"
	"github.com/resumegen/resumegen/runtime/journaltest"
	"github.com/resumegen/resumegen/runtime/resume"
	"github.com/resumegen/resumegen/runtime/sqlitejournal"
)

// approvalRuns stores, in the SQLite journal at db, runs of the approval
// example pinned to an older version whose third step was Nudge (the
// code's is Remind): one waiting for its approval past that step, one
// sleeping before it, and, with all, one parked for a person, one pending
// and one running. It returns the example's generated workflows.
func approvalRuns(t *testing.T, db string, all bool) []*generator.Workflow {
	t.Helper()
	ctx := context.Background()
	res, err := generator.Generate(generator.Config{Context: ctx, Patterns: []string{"../../examples/approval"}})
	if err != nil || len(res.Diagnostics) > 0 || len(res.Workflows) != 1 {
		t.Fatalf("generate the approval example: %v %v", err, res.Diagnostics)
	}
	w := res.Workflows[0]
	old := codeDef(w)
	old.Version = "0000000000000001"
	// The code descends from that version (as code generated over the
	// old version's file records): its runs are the code's to move.
	w.Lineage = append([]string{old.Version}, w.Lineage...)
	old.Steps = append([]resume.StepDef(nil), old.Steps...)
	for i, s := range old.Steps {
		if s.Name == "Remind" {
			// Another step, not a likely rename of Remind (another
			// signature): runs before it move, runs past it stop.
			old.Steps[i].Name, old.Steps[i].Callee, old.Steps[i].Signature = "Nudge", w.Package+".Nudge", "func(context.Context) error"
		}
	}
	defn, err := json.Marshal(old.Definition())
	if err != nil {
		t.Fatal(err)
	}
	j, err := sqlitejournal.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	if err := j.SaveManifest(ctx, journal.ManifestRecord{Workflow: w.ID, Version: old.Version, Manifest: old.Manifest(), Definition: defn}); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	run := func(id string, keys []string, end journal.RunRecord) {
		r, _, err := j.CreateRun(ctx, journal.RunRecord{RunID: id, Workflow: w.ID, Version: old.Version, Input: json.RawMessage(`[{}]`),
			CreatedAt: now, UpdatedAt: now, LeaseOwner: "old-worker", LeaseUntil: now.Add(time.Hour)})
		if err != nil {
			t.Fatal(err)
		}
		l := journal.Lease{RunID: id, Owner: "old-worker", Epoch: r.Epoch}
		for i, k := range keys {
			s := journal.StepRecord{RunID: id, StepKey: k, Name: k, Status: journal.StepSucceeded, Result: json.RawMessage("null"), Attempt: 1, Seq: int64(i + 1), StartedAt: now}
			if k == "approval" {
				s.Status = journal.StepWaiting
			}
			if err := j.WriteStep(ctx, l, s); err != nil {
				t.Fatal(err)
			}
		}
		if end.Status == journal.StatusRunning {
			return
		}
		end.RunID, end.UpdatedAt = id, now
		if err := j.FinishRun(ctx, l, end); err != nil {
			t.Fatal(err)
		}
	}
	run("awaits-approval", []string{"Submit", "resume.Sleep", "Nudge", "approval"},
		journal.RunRecord{Status: journal.StatusWaiting, WaitKind: journal.WaitSignal, WaitName: "approval"})
	run("sleeps", []string{"Submit", "resume.Sleep"}, journal.RunRecord{Status: journal.StatusWaiting, WaitKind: journal.WaitSleep, WakeAt: now.Add(time.Hour)})
	if all {
		run("parked", []string{"Submit"}, journal.RunRecord{Status: journal.StatusNeedsAttention, AttentionKind: journal.AttentionKindJournal, AttentionStep: "Submit", Error: "a row does not decode"})
		run("pending", nil, journal.RunRecord{Status: journal.StatusPending})
		run("running", []string{"Submit"}, journal.RunRecord{Status: journal.StatusRunning})
	}
	return res.Workflows
}

// TestCheckDeployCountsWaitingAndParkedRuns: check-deploy gives a verdict
// on waiting and parked runs as on pending and running ones, and counts
// them: a run waiting for its approval past a step the code changed would
// stop, and the deploy is refused, even when no run is pending or
// running (it used to say "no unfinished runs").
func TestCheckDeployCountsWaitingAndParkedRuns(t *testing.T) {
	for _, all := range []bool{false, true} {
		db := filepath.Join(t.TempDir(), "journal.db")
		ws := approvalRuns(t, db, all)
		j, err := sqlitejournal.OpenReadOnly(context.Background(), db)
		if err != nil {
			t.Fatal(err)
		}
		var stdout bytes.Buffer
		c := &cli{ctx: context.Background(), stdout: &stdout, stderr: &stdout, now: time.Now}
		out, err := c.deployCheck(j, ws)
		j.Close()
		if err != nil {
			t.Fatal(err)
		}
		verdicts := map[string]string{}
		for _, r := range out.Runs {
			verdicts[r.RunID] = r.Verdict
		}
		want := map[string]string{"awaits-approval": verdictStops, "sleeps": verdictMoves}
		wantCounts := map[string]int{"waiting": 2}
		if all {
			want["parked"], want["pending"], want["running"] = verdictMoves, verdictMoves, verdictMoves
			wantCounts["needs_attention"], wantCounts["pending"], wantCounts["running"] = 1, 1, 1
		}
		if out.OK || out.Checked != len(want) || len(verdicts) != len(want) {
			t.Errorf("all=%v: ok %v, checked %d, verdicts %v; want refused, %d checked: %v", all, out.OK, out.Checked, verdicts, len(want), want)
		}
		for id, v := range want {
			if verdicts[id] != v {
				t.Errorf("all=%v: run %s: verdict %q, want %q", all, id, verdicts[id], v)
			}
		}
		for s, n := range wantCounts {
			if out.Counts[s] != n {
				t.Errorf("all=%v: counts %v, want %s %d", all, out.Counts, s, n)
			}
		}
		if out.Waiting["signal"] != 1 || out.Waiting["sleep"] != 1 {
			t.Errorf("all=%v: waiting %v, want 1 signal and 1 sleep", all, out.Waiting)
		}
		c.printDeploy(out)
		text := stdout.String()
		if strings.Contains(text, "no unfinished runs") || !strings.Contains(text, "awaits-approval") ||
			!strings.Contains(text, "2 waiting (1 signal, 1 sleep)") || !strings.Contains(text, "would stop") {
			t.Errorf("all=%v: check-deploy printed\n%s", all, text)
		}
	}
}

// TestBulkCancelSelectsWaitingRuns: runs cancel by filter selects waiting
// runs (sleeping, awaiting), which unwind when a worker takes them; retry
// and accept-version do not apply to them.
func TestBulkCancelSelectsWaitingRuns(t *testing.T) {
	ctx := context.Background()
	db := filepath.Join(t.TempDir(), "j.db")
	j, err := sqlitejournal.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	e := resume.NewEngine(j)
	if _, err := e.Start(ctx, "trip-1", journaltest.Trip, journaltest.TripPlan{Wait: "await"}); !errors.Is(err, resume.ErrRunWaiting) {
		t.Fatal(err)
	}
	if _, err := e.Start(ctx, "trip-2", journaltest.Trip, journaltest.TripPlan{Wait: "sleep", Sleep: time.Hour}); !errors.Is(err, resume.ErrRunWaiting) {
		t.Fatal(err)
	}
	if _, err := e.Start(ctx, "trip-3", journaltest.Trip, journaltest.TripPlan{}); err != nil {
		t.Fatal(err)
	}
	code, out, errs := ctl(t, "runs", "cancel", "-workflow", "Trip", "-dry-run", "-db", db)
	if code != 0 || !strings.Contains(out, "would act on 2 run(s)") || !strings.Contains(out, "trip-1, trip-2") {
		t.Fatalf("cancel -dry-run: %d\n%s%s", code, out, errs)
	}
	for _, cmd := range [][]string{{"retry", "-status", "waiting", "-yes"}, {"accept-version", "-to", "v", "-status", "waiting", "-yes"}} {
		if code, _, errs := ctl(t, append(append([]string{"runs"}, cmd...), "-db", db)...); code != 2 || !strings.Contains(errs, "applies only to runs that are") {
			t.Errorf("runs %s: %d %s; want a usage error: it does not apply to waiting runs", cmd[0], code, errs)
		}
	}
	code, out, errs = ctl(t, "runs", "cancel", "-status", "waiting", "-yes", "-json", "-db", db)
	var d bulked
	if err := json.Unmarshal([]byte(out), &d); err != nil || code != 0 || strings.Join(d.Done, ",") != "trip-1,trip-2" {
		t.Fatalf("cancel -status waiting: %d %+v (%v)\n%s%s", code, d, err, out, errs)
	}
	for _, id := range []string{"trip-1", "trip-2"} {
		res, err := e.Resume(ctx, id)
		if res.Status != journal.StatusCancelled || !errors.Is(err, resume.ErrRunCancelled) {
			t.Errorf("%s: %s, %v; want cancelled", id, res.Status, err)
		}
		_, steps, _ := j.LoadRun(ctx, id)
		undone := 0
		for _, s := range steps {
			if strings.HasPrefix(s.StepKey, "Unreserve[") && s.Status == journal.StepSucceeded {
				undone++
			}
		}
		if undone != 2 {
			t.Errorf("%s: %d reservations undone, want 2", id, undone)
		}
	}
	if r, _, _ := j.LoadRun(ctx, "trip-3"); r.Status != journal.StatusSucceeded {
		t.Errorf("trip-3, which had succeeded: %s", r.Status)
	}
}
