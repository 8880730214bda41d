// Package journaltest is the conformance suite every journal.Journal passes.
// It drives real engines over the journal under test through the behaviours
// the runtime promises: one read per run entry, one write per default step,
// the three step guarantees at every fault point, resolution, retry budgets,
// version pinning and lease fencing.
//
// A journal's test calls [Run] with a [Harness]:
//
//	func TestConformance(t *testing.T) {
//		journaltest.Run(t, journaltest.Harness{Open: ..., InsertEffect: ..., CountEffects: ...})
//	}
package journaltest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/resumegen/resumegen/runtime/journal"
	"github.com/resumegen/resumegen/runtime/resume"
)

// Harness adapts the suite to one journal implementation.
type Harness struct {
	// Open returns a new, empty journal whose user table "effects" (one
	// text column run_id) exists. The suite closes it.
	Open func(t *testing.T) journal.Journal
	// InsertEffect inserts one row for runID into the effects table of the
	// journal opened last, through resume.Tx with the journal's database as
	// fallback.
	InsertEffect func(ctx context.Context, runID string) error
	// CountEffects counts runID's rows in the effects table.
	CountEffects func(ctx context.Context, runID string) (int, error)
	// OpenAgain opens another journal on the database of the journal
	// opened last, as another process would (the suite closes it); with
	// Open's journal, it must implement [journal.Liveness]. Nil skips the
	// liveness cases.
	OpenAgain func(t *testing.T) journal.Journal
	// Exec, if set, runs one plain SQL statement on the journal opened
	// last, its tables named unqualified (resume_runs, resume_steps): the
	// suite damages rows with it, as a hand edit would. Without it the
	// corrupt-row part of the suite is skipped.
	Exec func(ctx context.Context, query string) error
}

// open opens a journal for a test, closed when the test ends.
func (h Harness) open(t *testing.T) journal.Journal {
	t.Helper()
	j := h.Open(t)
	t.Cleanup(func() { j.Close() })
	current.Lock()
	current.h = h
	current.Unlock()
	return j
}

var runSeq atomic.Int64

// newRunID returns a run id unique in this process, so effect counts of
// different tests never mix.
func newRunID(t *testing.T) string {
	return fmt.Sprintf("%s-%d-%d", strings.ReplaceAll(t.Name(), "/", "."), time.Now().UnixNano(), runSeq.Add(1))
}

// crash is the panic value of the suite's fault action: an in-process
// stand-in for SIGKILL (the real kill is proven by the example's crash
// matrix, which kills real processes).
type crash struct{ f resume.Fault }

// isCrash recognizes the suite's stand-in for SIGKILL, which the engine
// must not recover.
func isCrash(v any) bool {
	_, ok := v.(crash)
	return ok
}

// startCrashing runs the plan on an engine that "dies" at f, and reports
// whether it did.
func startCrashing(t *testing.T, j journal.Journal, runID string, p Plan, f resume.Fault) (crashed bool) {
	t.Helper()
	return startDying(j, runID, Chain, p, f)
}

// startDying starts run runID of workflow wf with input on an engine that
// "dies" (panics with crash) at f, if f names a step, or wherever j or the
// workflow panics with crash, and reports whether it did. A dead engine's
// leases have expired when it returns.
func startDying(j journal.Journal, runID string, wf, input any, f resume.Fault) (crashed bool) {
	opts := []resume.Option{resume.WithLease(crashLease), resume.WithOwner("crasher"),
		resume.WithFaultAction(func() { panic(crash{f}) }), resume.WithCrashPanics(isCrash)}
	if f.Step != "" {
		opts = append(opts, resume.WithFault(f))
	}
	e := resume.NewEngine(j, opts...)
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(crash); !ok {
				panic(r)
			}
			crashed = true
			died(j)
		}
	}()
	_, _ = e.Start(context.Background(), runID, wf, input)
	return false
}

// crashLease is the lease of the engines that "die" in the suite. Long
// enough that a step's start under load keeps the third of it a step
// needs (with 150 ms, a machine at load 8 stopped runs before their fault
// struck), short enough that waiting it out after each death costs little.
const crashLease = 400 * time.Millisecond

// died ends the "process" of the engines owned by "crasher" on j: its
// liveness signal goes, so that its runs are taken over at once, and
// (for a journal without liveness) its leases expire.
func died(j journal.Journal) {
	if l, ok := journal.Find[journal.Liveness](j); ok {
		if err := l.Release(context.Background(), "crasher"); err != nil {
			panic(err)
		}
	}
	time.Sleep(crashLease + 20*time.Millisecond)
}

// Run runs the conformance suite against the journal h opens.
func Run(t *testing.T, h Harness) {
	open := func(t *testing.T) journal.Journal {
		t.Helper()
		j := h.Open(t)
		t.Cleanup(func() { j.Close() })
		current.Lock()
		current.h = h
		current.Unlock()
		return j
	}
	ctx := context.Background()
	effectsOf := func(t *testing.T, runID string) int {
		t.Helper()
		n, err := h.CountEffects(ctx, runID)
		if err != nil {
			t.Fatalf("count effects: %v", err)
		}
		return n
	}

	t.Run("create is idempotent", func(t *testing.T) {
		j := open(t)
		r := journal.RunRecord{RunID: "r1", Workflow: "w", Version: "v", Input: []byte(`[1]`), CreatedAt: time.Now(), UpdatedAt: time.Now()}
		if _, created, err := j.CreateRun(ctx, r); err != nil || !created {
			t.Fatalf("first CreateRun: created=%v err=%v", created, err)
		}
		r.Input = []byte(`[2]`)
		got, created, err := j.CreateRun(ctx, r)
		if err != nil || created {
			t.Fatalf("second CreateRun: created=%v err=%v", created, err)
		}
		if string(got.Input) != `[1]` || got.Status != journal.StatusPending {
			t.Fatalf("second CreateRun returned %+v, want the first run, pending", got)
		}
	})

	t.Run("one read per entry and one commit per default step", func(t *testing.T) {
		j := open(t)
		e := resume.NewEngine(j)
		id := newRunID(t)
		// Warm up: the manifest is saved once per engine and version.
		if _, err := e.Start(ctx, newRunID(t), Chain, Plan{}); err != nil {
			t.Fatal(err)
		}
		before := j.Counters()
		res, err := e.Start(ctx, id, Chain, Plan{Loop: 10})
		if err != nil {
			t.Fatal(err)
		}
		after := j.Counters()
		// create (already claimed) + Fetch + Notify(2) + Write + 10 Loop + finish
		if got, want := after.Commits-before.Commits, int64(1+1+2+1+10+1); got != want {
			t.Errorf("commits for a new 14-step run = %d, want %d", got, want)
		}
		if got := after.Reads - before.Reads; got != 0 {
			t.Errorf("reads for a new run = %d, want 0 (its journal is empty)", got)
		}
		var sum int
		if err := res.Decode(&sum); err != nil || sum != 285 {
			t.Fatalf("output = %s (%v), want 285", res.Output, err)
		}
		// A run entered again (here enqueued, then resumed) is claimed and
		// its journal read once.
		queued := newRunID(t)
		if _, err := e.Enqueue(ctx, queued, Chain, Plan{Loop: 10}); err != nil {
			t.Fatal(err)
		}
		before = j.Counters()
		if _, err := e.Resume(ctx, queued); err != nil {
			t.Fatal(err)
		}
		after = j.Counters()
		// claim + Fetch + Notify(2) + Write + 10 Loop + finish
		if got, want := after.Commits-before.Commits, int64(1+1+2+1+10+1); got != want {
			t.Errorf("commits for a resumed 14-step run = %d, want %d", got, want)
		}
		if got := after.Reads - before.Reads; got != 1 {
			t.Errorf("reads for a run entry = %d, want 1 (the journal, read once)", got)
		}
		before = j.Counters()
		if _, err := e.Start(ctx, id, Chain, Plan{Loop: 10}); err != nil {
			t.Fatal(err)
		}
		if got := j.Counters().Commits - before.Commits; got > 1 {
			t.Errorf("starting a finished run committed %d writes, want at most 1 (the no-op create)", got)
		}
		if n := seen.count(id, "Loop"); n != 10 {
			t.Errorf("Loop executed %d times, want 10", n)
		}
	})

	t.Run("journal rows", func(t *testing.T) {
		j := open(t)
		e := resume.NewEngine(j)
		id := newRunID(t)
		if _, err := e.Start(ctx, id, Chain, Plan{Loop: 3}); err != nil {
			t.Fatal(err)
		}
		run, steps, err := j.LoadRun(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if run.Status != journal.StatusSucceeded || run.Version != "chain-v1" || run.Attempts != 1 || run.LeaseOwner != "" {
			t.Errorf("run = %+v", run)
		}
		var keys []string
		for i, s := range steps {
			keys = append(keys, s.StepKey)
			if s.Status != journal.StepSucceeded || s.Attempt != 1 || s.Seq <= 0 || (i > 0 && s.Seq <= steps[i-1].Seq) {
				t.Errorf("step %d = %+v", i, s)
			}
		}
		if got, want := strings.Join(keys, ","), "Fetch,Notify,Write,Loop,Loop#2,Loop#3"; got != want {
			t.Errorf("step keys = %s, want %s", got, want)
		}
		listed, err := j.ListRuns(ctx, journal.RunFilter{})
		if err != nil || len(listed) != 1 || listed[0].LastStep != "Loop#3" {
			t.Errorf("ListRuns = %+v, %v; want the run with LastStep Loop#3", listed, err)
		}
		if string(steps[0].Result) != `"data"` || string(steps[4].Result) != `1` {
			t.Errorf("results = %s, %s", steps[0].Result, steps[4].Result)
		}
	})

	t.Run("start is idempotent and refuses another input", func(t *testing.T) {
		j := open(t)
		e := resume.NewEngine(j)
		id := newRunID(t)
		if _, err := e.Start(ctx, id, Chain, Plan{Loop: 1}); err != nil {
			t.Fatal(err)
		}
		if _, err := e.Start(ctx, id, Chain, Plan{Loop: 1}); err != nil {
			t.Fatal(err)
		}
		if n := seen.count(id, "Fetch"); n != 1 {
			t.Errorf("Fetch ran %d times for two starts of one id, want 1", n)
		}
		if _, err := e.Start(ctx, id, Chain, Plan{Loop: 2}); !errors.Is(err, journal.ErrRunConflict) {
			t.Errorf("start with another input: err = %v, want ErrRunConflict", err)
		} else if strings.Contains(err.Error(), "FailFetch") { // a field of the stored input
			t.Errorf("the conflict error repeats the stored input (inputs hold personal data): %v", err)
		}
	})

	t.Run("retries inside a step, permanent errors not retried", func(t *testing.T) {
		j := open(t)
		e := resume.NewEngine(j)
		id := newRunID(t)
		if _, err := e.Start(ctx, id, Chain, Plan{FailFetch: 2}); err != nil {
			t.Fatalf("a step failing twice with 3 attempts should succeed: %v", err)
		}
		_, steps, _ := j.LoadRun(ctx, id)
		if steps[0].Attempt != 3 || seen.count(id, "Fetch") != 3 {
			t.Errorf("Fetch attempt = %d, executions = %d, want 3 and 3", steps[0].Attempt, seen.count(id, "Fetch"))
		}

		id = newRunID(t)
		_, err := e.Start(ctx, id, Chain, Plan{FailFetch: 5, PermanentFetch: true})
		if !errors.Is(err, resume.ErrRunFailed) {
			t.Fatalf("err = %v, want a failed run", err)
		}
		if n := seen.count(id, "Fetch"); n != 1 {
			t.Errorf("a permanent error was attempted %d times, want 1", n)
		}
		run, steps, _ := j.LoadRun(ctx, id)
		if run.Status != journal.StatusFailed || !strings.Contains(run.Error, "fetch 1") || steps[0].Status != journal.StepFailed {
			t.Errorf("run = %+v, step = %+v", run, steps[0])
		}
	})

	t.Run("retrying a failed run re-executes only the failed step", func(t *testing.T) {
		j := open(t)
		e := resume.NewEngine(j)
		id := newRunID(t)
		// Notify (once, 2 attempts) fails 3 times: the run fails after 2.
		if _, err := e.Start(ctx, id, Chain, Plan{FailNotify: 3}); !errors.Is(err, resume.ErrRunFailed) {
			t.Fatalf("err = %v, want failed", err)
		}
		if n := seen.count(id, "Notify"); n != 2 {
			t.Fatalf("Notify attempts = %d, want 2 (its budget)", n)
		}
		res, err := e.Retry(ctx, id)
		if err != nil {
			t.Fatalf("retry: %v", err)
		}
		if res.Status != journal.StatusSucceeded || seen.count(id, "Fetch") != 1 || seen.count(id, "Notify") != 4 {
			t.Errorf("after retry: status %s, Fetch %d (want 1), Notify %d (want 4: fail, fail | fail, ok)",
				res.Status, seen.count(id, "Fetch"), seen.count(id, "Notify"))
		}
		_, steps, _ := j.LoadRun(ctx, id)
		if steps[1].Attempt != 4 {
			t.Errorf("Notify attempt = %d, want 4: the count carries on", steps[1].Attempt)
		}
		if _, err := e.Retry(ctx, id); !errors.Is(err, journal.ErrNotFailed) {
			t.Errorf("retrying a succeeded run: err = %v, want ErrNotFailed", err)
		}
	})

	t.Run("a crash does not reset the retry budget", func(t *testing.T) {
		j := open(t)
		id := newRunID(t)
		// Fetch (3 attempts) fails twice, then the process dies in its third.
		if !startCrashing(t, j, id, Plan{FailFetch: 10, CrashFetch: 3}, resume.Fault{}) {
			t.Fatal("no crash")
		}
		_, err := resume.NewEngine(j).Resume(ctx, id)
		if !errors.Is(err, resume.ErrRunFailed) {
			t.Fatalf("err = %v, want the run failed", err)
		}
		if n := seen.count(id, "Fetch"); n != 4 {
			t.Errorf("Fetch executed %d times, want 4 (2 failed, 1 died, 1 left in the budget)", n)
		}
		_, steps, _ := j.LoadRun(ctx, id)
		if steps[0].Attempt != 3 || steps[0].Status != journal.StepFailed {
			t.Errorf("Fetch row = %+v, want failed at attempt 3", steps[0])
		}
	})

	t.Run("idempotency key is stable across attempts and resumes", func(t *testing.T) {
		j := open(t)
		id := newRunID(t)
		if !startCrashing(t, j, id, Plan{FailFetch: 1}, resume.Fault{Step: "Fetch", Point: resume.FaultEffect}) {
			t.Fatal("no crash")
		}
		if _, err := resume.NewEngine(j).Resume(ctx, id); err != nil {
			t.Fatal(err)
		}
		keys := seen.keysOf(id, "Fetch")
		if len(keys) != 3 {
			t.Fatalf("Fetch executed %d times, want 3 (fail, ok+crash, ok)", len(keys))
		}
		for _, k := range keys {
			if k != keys[0] || !strings.HasPrefix(k, "rg-") || len(k) != 35 {
				t.Fatalf("keys = %v, want one 35-character key", keys)
			}
		}
	})

	// The fault matrix, in process: every policy at every point.
	for _, tc := range []struct {
		step  string
		point resume.FaultPoint
		// executions of the step after the crash and a resume
		want       int
		wantStatus journal.Status
	}{
		{"Fetch", resume.FaultBefore, 1, journal.StatusSucceeded},
		{"Fetch", resume.FaultEffect, 2, journal.StatusSucceeded}, // at least once
		{"Fetch", resume.FaultAfter, 1, journal.StatusSucceeded},
		{"Notify", resume.FaultBefore, 1, journal.StatusSucceeded},
		{"Notify", resume.FaultEffect, 1, journal.StatusNeedsAttention}, // at most once
		{"Notify", resume.FaultAfter, 1, journal.StatusSucceeded},
		{"Write", resume.FaultBefore, 1, journal.StatusSucceeded},
		{"Write", resume.FaultEffect, 2, journal.StatusSucceeded}, // rolled back, then once
		{"Write", resume.FaultAfter, 1, journal.StatusSucceeded},
	} {
		t.Run(fmt.Sprintf("crash at %s:%s", tc.step, tc.point), func(t *testing.T) {
			j := open(t)
			id := newRunID(t)
			if !startCrashing(t, j, id, Plan{Loop: 2}, resume.Fault{Step: tc.step, Point: tc.point}) {
				t.Fatal("the fault did not strike")
			}
			res, err := resume.NewEngine(j).Resume(ctx, id)
			if res.Status != tc.wantStatus {
				t.Fatalf("status after resume = %s (%v), want %s", res.Status, err, tc.wantStatus)
			}
			if n := seen.count(id, tc.step); n != tc.want {
				t.Errorf("%s executed %d times, want %d", tc.step, n, tc.want)
			}
			for _, s := range []string{"Fetch", "Notify", "Write"} {
				if s != tc.step && tc.wantStatus == journal.StatusSucceeded && seen.count(id, s) != 1 {
					t.Errorf("%s executed %d times, want 1", s, seen.count(id, s))
				}
			}
			if tc.wantStatus == journal.StatusSucceeded {
				if n := effectsOf(t, id); n != 1 {
					t.Errorf("tx effect rows = %d, want exactly 1", n)
				}
			}
		})
	}

	t.Run("once in flight parks the run; done continues without executing", func(t *testing.T) {
		j := open(t)
		id := newRunID(t)
		startCrashing(t, j, id, Plan{}, resume.Fault{Step: "Notify", Point: resume.FaultEffect})
		e := resume.NewEngine(j)
		res, err := e.Resume(ctx, id)
		if !errors.Is(err, resume.ErrNeedsAttention) || res.AttentionStep != "Notify" || !strings.Contains(res.Error, "in flight") {
			t.Fatalf("resume: %+v, %v", res, err)
		}
		// Resuming again still executes nothing.
		if _, err := e.Resume(ctx, id); !errors.Is(err, resume.ErrNeedsAttention) {
			t.Fatalf("second resume: %v", err)
		}
		if err := e.Resolve(ctx, id, "Fetch", journal.Resolution{Done: true}); !errors.Is(err, journal.ErrNotInFlight) {
			t.Errorf("resolving a succeeded step: %v, want ErrNotInFlight", err)
		}
		if err := e.Resolve(ctx, id, "Nope", journal.Resolution{Done: true}); !errors.Is(err, journal.ErrStepNotFound) {
			t.Errorf("resolving an unknown step: %v, want ErrStepNotFound", err)
		}
		if err := e.Resolve(ctx, id, "Notify", journal.Resolution{Done: true}); err != nil {
			t.Fatalf("resolve done: %v", err)
		}
		if err := e.Resolve(ctx, id, "Notify", journal.Resolution{Done: true}); !errors.Is(err, journal.ErrRunBusy) {
			t.Errorf("resolving twice: %v, want ErrRunBusy (the run is pending)", err)
		}
		if res, err := e.Resume(ctx, id); err != nil || res.Status != journal.StatusSucceeded {
			t.Fatalf("resume after done: %+v, %v", res, err)
		}
		if n := seen.count(id, "Notify"); n != 1 {
			t.Errorf("Notify executed %d times, want 1", n)
		}
	})

	t.Run("once in flight resolved redo executes exactly once more", func(t *testing.T) {
		j := open(t)
		id := newRunID(t)
		startCrashing(t, j, id, Plan{}, resume.Fault{Step: "Notify", Point: resume.FaultEffect})
		e := resume.NewEngine(j)
		_, _ = e.Resume(ctx, id)
		if err := e.Resolve(ctx, id, "Notify", journal.Resolution{}); err != nil {
			t.Fatalf("resolve redo: %v", err)
		}
		if res, err := e.Resume(ctx, id); err != nil || res.Status != journal.StatusSucceeded {
			t.Fatalf("resume after redo: %+v, %v", res, err)
		}
		if n := seen.count(id, "Notify"); n != 2 {
			t.Errorf("Notify executed %d times, want 2", n)
		}
	})

	t.Run("resolve is refused while a process runs the run", func(t *testing.T) {
		j := open(t)
		id := newRunID(t)
		startCrashing(t, j, id, Plan{}, resume.Fault{Step: "Notify", Point: resume.FaultEffect})
		// Another process claims it first (and is still alive).
		if _, _, err := j.Claim(ctx, journal.ClaimRequest{RunID: id, Owner: "other", Lease: time.Minute}); err != nil {
			t.Fatal(err)
		}
		if err := resume.NewEngine(j).Resolve(ctx, id, "Notify", journal.Resolution{Done: true}); !errors.Is(err, journal.ErrRunBusy) {
			t.Errorf("resolve during another process's run: %v, want ErrRunBusy", err)
		}
	})

	t.Run("once step returning an error is retried, not parked", func(t *testing.T) {
		j := open(t)
		id := newRunID(t)
		res, err := resume.NewEngine(j).Start(ctx, id, Chain, Plan{FailNotify: 1})
		if err != nil || res.Status != journal.StatusSucceeded {
			t.Fatalf("%+v, %v", res, err)
		}
		if n := seen.count(id, "Notify"); n != 2 {
			t.Errorf("Notify executed %d times, want 2", n)
		}
	})

	t.Run("tx step rollback leaves no rows and no succeeded row", func(t *testing.T) {
		j := open(t)
		id := newRunID(t)
		_, err := resume.NewEngine(j).Start(ctx, id, Chain, Plan{FailWrite: true})
		if !errors.Is(err, resume.ErrRunFailed) {
			t.Fatalf("err = %v, want failed", err)
		}
		if n := effectsOf(t, id); n != 0 {
			t.Errorf("effect rows after rollback = %d, want 0", n)
		}
		_, steps, _ := j.LoadRun(ctx, id)
		if last := steps[len(steps)-1]; last.StepKey != "Write" || last.Status != journal.StepFailed {
			t.Errorf("Write row = %+v, want failed", last)
		}
	})

	t.Run("version pinning executes nothing", func(t *testing.T) {
		j := open(t)
		id := newRunID(t)
		old := journal.RunRecord{RunID: id, Workflow: chainDef.QualifiedName(), Version: "chain-v0",
			Input: []byte(`[{}]`), CreatedAt: time.Now(), UpdatedAt: time.Now()}
		if _, _, err := j.CreateRun(ctx, old); err != nil {
			t.Fatal(err)
		}
		if err := j.SaveManifest(ctx, journal.ManifestRecord{Workflow: chainDef.QualifiedName(), Version: "chain-v0",
			Manifest: "Fetch journaltest.Fetch func(context.Context) (string, error) default\n"}); err != nil {
			t.Fatal(err)
		}
		res, err := resume.NewEngine(j).Resume(ctx, id)
		if !errors.Is(err, resume.ErrNeedsAttention) {
			t.Fatalf("err = %v, want needs attention", err)
		}
		for _, want := range []string{"chain-v0", "chain-v1", "- Fetch journaltest.Fetch func(context.Context) (string, error)", "+ Notify"} {
			if !strings.Contains(res.Error, want) {
				t.Errorf("mismatch error %q does not mention %q", res.Error, want)
			}
		}
		if n := seen.count(id, "Fetch"); n != 0 {
			t.Errorf("Fetch executed %d times under the wrong version", n)
		}
	})

	t.Run("attention kind says why a run waits", func(t *testing.T) {
		j := open(t)
		id := newRunID(t)
		startCrashing(t, j, id, Plan{}, resume.Fault{Step: "Notify", Point: resume.FaultEffect})
		e := resume.NewEngine(j)
		if res, err := e.Resume(ctx, id); !errors.Is(err, resume.ErrNeedsAttention) || res.AttentionKind != journal.AttentionKindStep {
			t.Fatalf("resume: %+v, %v; want needs attention of kind step", res, err)
		}
		if r, _, _ := j.LoadRun(ctx, id); r.AttentionKind != journal.AttentionKindStep || r.AttentionStep != "Notify" {
			t.Fatalf("stored run: kind %q step %q, want step Notify", r.AttentionKind, r.AttentionStep)
		}
		if err := e.AcceptVersion(ctx, id, chainDef.Version); !errors.Is(err, journal.ErrNotVersionStop) {
			t.Errorf("accepting a version for a run parked at a step: %v, want ErrNotVersionStop", err)
		}
		if err := e.Resolve(ctx, id, "Notify", journal.Resolution{Done: true}); err != nil {
			t.Fatal(err)
		}
		if r, _, _ := j.LoadRun(ctx, id); r.AttentionKind != "" || r.Status != journal.StatusPending {
			t.Fatalf("after resolve: status %s kind %q, want pending with no attention", r.Status, r.AttentionKind)
		}
	})

	t.Run("accept version resumes under the new code without repeating journaled steps", func(t *testing.T) {
		j := open(t)
		id := newRunID(t)
		name := chainDef.QualifiedName()
		// A run of version chain-v0 that journaled Fetch and Notify, then
		// stopped: what an old binary leaves behind.
		if err := j.SaveManifest(ctx, journal.ManifestRecord{Workflow: name, Version: "chain-v0",
			Manifest: "Fetch journaltest.Fetch func(context.Context, Plan) (string, error) default\n" +
				"Notify journaltest.Notify func(context.Context, Plan) error once\n"}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * time.Millisecond) // the new manifest is the newer one
		old := journal.RunRecord{RunID: id, Workflow: name, Version: "chain-v0",
			Input: []byte(`[{}]`), CreatedAt: time.Now(), UpdatedAt: time.Now()}
		if _, _, err := j.CreateRun(ctx, old); err != nil {
			t.Fatal(err)
		}
		run, _, err := j.Claim(ctx, journal.ClaimRequest{RunID: id, Owner: "old", Lease: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		lease := journal.Lease{RunID: id, Owner: "old", Epoch: run.Epoch}
		for i, s := range []journal.StepRecord{
			{StepKey: "Fetch", Name: "Fetch", Result: []byte(`"data"`)},
			{StepKey: "Notify", Name: "Notify", Result: []byte(`null`)},
		} {
			s.RunID, s.Status, s.Attempt, s.Seq, s.StartedAt, s.FinishedAt = id, journal.StepSucceeded, 1, int64(i+1), time.Now(), time.Now()
			if err := j.WriteStep(ctx, lease, s); err != nil {
				t.Fatal(err)
			}
		}
		run.Status = journal.StatusPending
		if err := j.FinishRun(ctx, lease, run); err != nil {
			t.Fatal(err)
		}

		e := resume.NewEngine(j)
		if err := e.AcceptVersion(ctx, id, chainDef.Version); !errors.Is(err, journal.ErrNotVersionStop) {
			t.Errorf("accepting a version for a pending run: %v, want ErrNotVersionStop", err)
		}
		if err := e.AcceptVersion(ctx, newRunID(t), chainDef.Version); !errors.Is(err, journal.ErrRunNotFound) {
			t.Errorf("accepting a version for an unknown run: %v, want ErrRunNotFound", err)
		}
		res, err := e.Resume(ctx, id)
		if !errors.Is(err, resume.ErrNeedsAttention) || res.AttentionKind != journal.AttentionKindVersion || res.AttentionStep != "" {
			t.Fatalf("resume under chain-v1: %+v, %v; want needs attention of kind version", res, err)
		}
		stored, _, _ := j.LoadRun(ctx, id)
		if stored.AttentionKind != journal.AttentionKindVersion || stored.Version != "chain-v0" {
			t.Fatalf("stored run: kind %q version %q, want version stop at chain-v0", stored.AttentionKind, stored.Version)
		}
		ms, err := j.ListManifests(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		if len(ms) != 2 || ms[0].Version != chainDef.Version || ms[1].Version != "chain-v0" || ms[0].Manifest != chainDef.Manifest() {
			t.Fatalf("manifests, newest first = %+v, want chain-v1 (the program's) then chain-v0", ms)
		}
		if err := e.Resolve(ctx, id, "Fetch", journal.Resolution{Done: true}); !errors.Is(err, journal.ErrNotInFlight) {
			t.Errorf("resolving a step of a version stop: %v, want ErrNotInFlight", err)
		}
		if err := e.AcceptVersion(ctx, id, chainDef.Version); err != nil {
			t.Fatalf("accept version: %v", err)
		}
		stored, _, _ = j.LoadRun(ctx, id)
		if stored.Status != journal.StatusPending || stored.Version != chainDef.Version || stored.AttentionKind != "" || stored.Error != "" {
			t.Fatalf("after accept: %+v, want pending at %s with no attention", stored, chainDef.Version)
		}
		if err := e.AcceptVersion(ctx, id, chainDef.Version); !errors.Is(err, journal.ErrNotVersionStop) {
			t.Errorf("accepting twice: %v, want ErrNotVersionStop", err)
		}
		res, err = e.Resume(ctx, id)
		if err != nil || res.Status != journal.StatusSucceeded {
			t.Fatalf("resume after accept: %+v, %v", res, err)
		}
		for step, want := range map[string]int{"Fetch": 0, "Notify": 0, "Write": 1} {
			if n := seen.count(id, step); n != want {
				t.Errorf("%s executed %d times after the version change, want %d", step, n, want)
			}
		}
	})

	t.Run("save manifests stores every registered workflow", func(t *testing.T) {
		j := open(t)
		if err := resume.NewEngine(j).SaveManifests(ctx); err != nil {
			t.Fatal(err)
		}
		if m, err := j.Manifest(ctx, chainDef.QualifiedName(), chainDef.Version); err != nil || m != chainDef.Manifest() {
			t.Fatalf("manifest of %s = %q, %v; want %q", chainDef.Version, m, err, chainDef.Manifest())
		}
	})

	t.Run("a lost lease fences writes", func(t *testing.T) {
		j := open(t)
		id := newRunID(t)
		if _, _, err := j.CreateRun(ctx, journal.RunRecord{RunID: id, Workflow: "w", Version: "v", Input: []byte(`[]`), CreatedAt: time.Now(), UpdatedAt: time.Now()}); err != nil {
			t.Fatal(err)
		}
		a, _, err := j.Claim(ctx, journal.ClaimRequest{RunID: id, Owner: "a", Lease: -time.Second}) // already expired
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := j.Claim(ctx, journal.ClaimRequest{RunID: id, Owner: "b", Lease: time.Minute}); err != nil {
			t.Fatalf("claiming an expired lease: %v", err)
		}
		b, _, _ := j.LoadRun(ctx, id)
		if _, _, err := j.Claim(ctx, journal.ClaimRequest{RunID: id, Owner: "c", Lease: time.Minute}); !errors.Is(err, journal.ErrRunBusy) {
			t.Errorf("claiming a live lease: %v, want ErrRunBusy", err)
		}
		stale := journal.Lease{RunID: id, Owner: "b", Epoch: b.Epoch - 1}
		if _, _, err := j.Claim(ctx, journal.ClaimRequest{RunID: id, Owner: "c", Lease: time.Minute, Abandoned: &stale}); !errors.Is(err, journal.ErrRunBusy) {
			t.Errorf("claiming from a dead owner's older epoch: %v, want ErrRunBusy", err)
		}
		dead := journal.Lease{RunID: id, Owner: "b", Epoch: b.Epoch}
		if _, _, err := j.Claim(ctx, journal.ClaimRequest{RunID: id, Owner: "c", Lease: time.Minute, Abandoned: &dead}); err != nil {
			t.Errorf("claiming from a dead owner: %v", err)
		}
		la := journal.Lease{RunID: id, Owner: "a", Epoch: a.Epoch}
		step := journal.StepRecord{RunID: id, StepKey: "S", Name: "S", Status: journal.StepSucceeded, Attempt: 1, Seq: 1, StartedAt: time.Now()}
		if err := j.WriteStep(ctx, la, step); !errors.Is(err, journal.ErrLeaseLost) {
			t.Errorf("write under a lost lease: %v, want ErrLeaseLost", err)
		}
		if err := j.FinishRun(ctx, la, journal.RunRecord{RunID: id, Status: journal.StatusSucceeded}); !errors.Is(err, journal.ErrLeaseLost) {
			t.Errorf("finish under a lost lease: %v, want ErrLeaseLost", err)
		}
		tx, err := j.BeginStep(ctx, la)
		if err != nil {
			t.Fatal(err)
		}
		if err := tx.Commit(ctx, step); !errors.Is(err, journal.ErrLeaseLost) {
			t.Errorf("tx commit under a lost lease: %v, want ErrLeaseLost", err)
		}
		tx.Rollback()
		_, steps, _ := j.LoadRun(ctx, id)
		if len(steps) != 0 {
			t.Errorf("fenced writes left %d rows", len(steps))
		}
	})

	t.Run("cancellation leaves the run resumable", func(t *testing.T) {
		j := open(t)
		id := newRunID(t)
		cctx, cancel := context.WithCancel(ctx)
		defer cancel()
		// Shut down right after Fetch is journaled.
		e := resume.NewEngine(j, resume.WithFault(resume.Fault{Step: "Fetch", Point: resume.FaultAfter}), resume.WithFaultAction(cancel))
		res, err := e.Start(cctx, id, Chain, Plan{})
		if !errors.Is(err, context.Canceled) || res.Status != journal.StatusPending {
			t.Fatalf("a cancelled run: %+v, %v; want pending and context.Canceled", res, err)
		}
		if n := seen.count(id, "Notify"); n != 0 {
			t.Errorf("Notify started after cancellation: %d", n)
		}
		res, err = resume.NewEngine(j).Resume(ctx, id)
		if err != nil || res.Status != journal.StatusSucceeded {
			t.Fatalf("resume after cancellation: %+v, %v", res, err)
		}
		if seen.count(id, "Fetch") != 1 || seen.count(id, "Notify") != 1 {
			t.Errorf("Fetch %d, Notify %d, want 1 and 1", seen.count(id, "Fetch"), seen.count(id, "Notify"))
		}
	})

	t.Run("an operator cancels a running run only when told it is running", func(t *testing.T) {
		j := open(t)
		// The engine asks whether its run was cancelled every third of a
		// lease (at most every second).
		e := resume.NewEngine(j, resume.WithLease(600*time.Millisecond))
		id := newRunID(t)
		type outcome struct {
			res resume.Result
			err error
		}
		done := make(chan outcome, 1)
		go func() {
			res, err := e.Start(ctx, id, Chain, Plan{Loop: 200, SlowLoop: 5 * time.Millisecond})
			done <- outcome{res, err}
		}()
		for deadline := time.Now().Add(30 * time.Second); seen.count(id, "Loop") < 3; time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatal("the run did not reach its loop")
			}
		}
		if err := e.Cancel(ctx, id, journal.CancelOptions{}); !errors.Is(err, journal.ErrRunBusy) {
			t.Fatalf("cancel of a running run without Running: %v, want ErrRunBusy", err)
		}
		if err := e.Cancel(ctx, id, journal.CancelOptions{Running: true}); err != nil {
			t.Fatalf("cancel with Running: %v", err)
		}
		out := <-done
		if !errors.Is(out.err, resume.ErrRunCancelled) || out.res.Status != journal.StatusCancelled {
			t.Errorf("the cancelled run's Start: %s, %v; want cancelled, ErrRunCancelled", out.res.Status, out.err)
		}
		loops := seen.count(id, "Loop")
		if loops >= 200 {
			t.Errorf("the run executed all %d loop steps after it was cancelled", loops)
		}
		r, steps, err := j.LoadRun(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if r.Status != journal.StatusCancelled || r.LeaseOwner != "" {
			t.Errorf("run after cancel: %s, lease %q; want cancelled, no lease", r.Status, r.LeaseOwner)
		}
		// Every step that executed is journaled, the one executing when
		// the cancellation landed too (it finishes what it started), and
		// the next one is journaled not executed: Fetch, Notify and Write
		// come first.
		if n := len(steps); n != loops+4 {
			t.Errorf("%d journal rows for %d loop executions, want %d", n, loops, loops+4)
		}
		refused := 0
		for _, s := range steps {
			switch {
			case s.Status == journal.StepFailed && s.Final && strings.Contains(s.Error, "cancelled") && strings.Contains(s.Error, "not executed"):
				refused++
			case s.Status != journal.StepSucceeded:
				t.Errorf("row %s: %s %q", s.StepKey, s.Status, s.Error)
			}
		}
		if refused != 1 {
			t.Errorf("%d rows of a step not executed because of the cancellation, want 1", refused)
		}
		res, err := resume.NewEngine(j).Resume(ctx, id)
		if !errors.Is(err, resume.ErrRunCancelled) || seen.count(id, "Loop") != loops {
			t.Errorf("resume of a cancelled run: %s, %v, %d more loop steps; want ErrRunCancelled and none", res.Status, err, seen.count(id, "Loop")-loops)
		}
	})

	t.Run("resume all at startup", func(t *testing.T) {
		j := open(t)
		ids := []string{newRunID(t), newRunID(t)}
		for _, id := range ids {
			startCrashing(t, j, id, Plan{}, resume.Fault{Step: "Write", Point: resume.FaultBefore})
		}
		results, err := resume.NewEngine(j).ResumeAll(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(results) != 2 || results[0].Status != journal.StatusSucceeded || results[1].Status != journal.StatusSucceeded {
			t.Fatalf("results = %+v", results)
		}
		for _, id := range ids {
			if seen.count(id, "Fetch") != 1 || effectsOf(t, id) != 1 {
				t.Errorf("run %s: Fetch %d, effects %d, want 1 and 1", id, seen.count(id, "Fetch"), effectsOf(t, id))
			}
		}
	})
	t.Run("claim next takes the oldest claimable run of known workflows", func(t *testing.T) {
		j := open(t)
		e := resume.NewEngine(j)
		var ids []string
		for i := 0; i < 3; i++ {
			id := newRunID(t)
			ids = append(ids, id)
			if _, err := e.Enqueue(ctx, id, Chain, Plan{}); err != nil {
				t.Fatal(err)
			}
			time.Sleep(2 * time.Millisecond) // distinct created_at
		}
		if n := seen.count(ids[0], "Fetch"); n != 0 {
			t.Fatalf("Enqueue executed Fetch %d times", n)
		}
		req := journal.ClaimNextRequest{Owner: "w", Lease: time.Minute, Workflows: []string{chainDef.QualifiedName()}}
		if _, _, err := j.ClaimNext(ctx, journal.ClaimNextRequest{Owner: "w", Lease: req.Lease, Workflows: []string{"other.Flow"}}); !errors.Is(err, journal.ErrNoRunReady) {
			t.Errorf("claim of another workflow: %v, want ErrNoRunReady", err)
		}
		for i, want := range ids {
			r, _, err := j.ClaimNext(ctx, req)
			if err != nil {
				t.Fatalf("claim %d: %v", i, err)
			}
			if r.RunID != want || r.Status != journal.StatusRunning || r.LeaseOwner != "w" || r.Epoch != 1 {
				t.Errorf("claim %d = %s %s %s epoch %d, want %s running w epoch 1", i, r.RunID, r.Status, r.LeaseOwner, r.Epoch, want)
			}
		}
		if _, _, err := j.ClaimNext(ctx, req); !errors.Is(err, journal.ErrNoRunReady) {
			t.Errorf("claim with every run leased: %v, want ErrNoRunReady", err)
		}
	})

	t.Run("100 goroutines starting one run id make one run", func(t *testing.T) {
		j := open(t)
		id := newRunID(t)
		var wg sync.WaitGroup
		errs := make(chan error, 100)
		for i := 0; i < 100; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, err := resume.NewEngine(j).Start(ctx, id, Chain, Plan{Loop: 3})
				if err != nil && !errors.Is(err, journal.ErrRunBusy) {
					errs <- err
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Errorf("start: %v", err)
		}
		runs, err := j.ListRuns(ctx, journal.RunFilter{})
		if err != nil {
			t.Fatal(err)
		}
		if len(runs) != 1 || runs[0].Status != journal.StatusSucceeded {
			t.Fatalf("runs = %+v, want one succeeded run", runs)
		}
		if seen.count(id, "Fetch") != 1 || seen.count(id, "Loop") != 3 || effectsOf(t, id) != 1 {
			t.Errorf("Fetch %d, Loop %d, effects %d; want 1, 3, 1", seen.count(id, "Fetch"), seen.count(id, "Loop"), effectsOf(t, id))
		}
	})

	t.Run("workers execute enqueued runs within their concurrency", func(t *testing.T) {
		j := open(t)
		e := resume.NewEngine(j)
		var ids []string
		for i := 0; i < 12; i++ {
			id := newRunID(t)
			ids = append(ids, id)
			if _, err := e.Enqueue(ctx, id, Chain, Plan{Loop: 2, SlowLoop: 5 * time.Millisecond}); err != nil {
				t.Fatal(err)
			}
		}
		loops.most.Store(0)
		stop := startWorker(ctx, e, resume.WorkerOptions{Concurrency: 3, PollInterval: 5 * time.Millisecond})
		waitFor(t, j, len(ids), journal.StatusSucceeded)
		if err := stop(); err != nil {
			t.Fatalf("work: %v", err)
		}
		if most := loops.most.Load(); most > 3 {
			t.Errorf("%d runs executed at once, over the concurrency of 3", most)
		}
		for _, id := range ids {
			if seen.count(id, "Fetch") != 1 || seen.count(id, "Loop") != 2 || effectsOf(t, id) != 1 {
				t.Errorf("run %s: Fetch %d, Loop %d, effects %d; want 1, 2, 1", id, seen.count(id, "Fetch"), seen.count(id, "Loop"), effectsOf(t, id))
			}
		}
	})

	t.Run("a run started in-process cannot be claimed by a worker before its creator", func(t *testing.T) {
		// A worker of another process looks for work at the worst moment:
		// right after Start created the run, before Start claims it.
		race := &claimAfterCreate{Journal: open(t)}
		e := resume.NewEngine(race)
		id := newRunID(t)
		res, err := e.Start(ctx, id, Chain, Plan{Loop: 1})
		if err != nil || res.Status != journal.StatusSucceeded {
			t.Fatalf("start: %v, %v; want succeeded in this process", res.Status, err)
		}
		if !race.tried {
			t.Fatal("the worker never looked for work")
		}
		if !errors.Is(race.claimErr, journal.ErrNoRunReady) {
			t.Errorf("a worker claimed the run between its creation and Start's claim: %v", race.claimErr)
		}
		// Enqueue still leaves the run to workers.
		id = newRunID(t)
		if _, err := e.Enqueue(ctx, id, Chain, Plan{Loop: 1}); err != nil {
			t.Fatal(err)
		}
		if race.claimErr != nil {
			t.Errorf("a worker could not claim an enqueued run: %v", race.claimErr)
		}
	})

	t.Run("a worker takes over at once the runs of a dead worker", func(t *testing.T) {
		if h.OpenAgain == nil {
			t.Skip("the harness has no OpenAgain")
		}
		j := open(t)
		e := resume.NewEngine(j)
		id := newRunID(t)
		if _, err := e.Enqueue(ctx, id, Chain, Plan{Loop: 1}); err != nil {
			t.Fatal(err)
		}
		// A worker claimed it for an hour, then died.
		deadOwner(t, h, j, id)
		stop := startWorker(ctx, e, resume.WorkerOptions{PollInterval: 5 * time.Millisecond})
		defer func() { // also when waitFor fails: no worker outlives the test
			if err := stop(); err != nil {
				t.Errorf("work: %v", err)
			}
		}()
		waitFor(t, j, 1, journal.StatusSucceeded) // well before the hour
		if seen.count(id, "Fetch") != 1 || effectsOf(t, id) != 1 {
			t.Errorf("run %s: Fetch %d, effects %d; want 1 and 1", id, seen.count(id, "Fetch"), effectsOf(t, id))
		}
	})

	t.Run("a worker stopped while it starts drains cleanly and claims nothing", func(t *testing.T) {
		// A SIGTERM can land before the worker has stored its manifests:
		// that is a clean stop, not a failure.
		j := open(t)
		e := resume.NewEngine(j)
		id := newRunID(t)
		if _, err := e.Enqueue(ctx, id, Chain, Plan{Loop: 1}); err != nil {
			t.Fatal(err)
		}
		stopped, stop := context.WithCancel(ctx)
		stop()
		if err := resume.NewEngine(j).Work(stopped, resume.WorkerOptions{PollInterval: 5 * time.Millisecond}); err != nil {
			t.Fatalf("work stopped before it started: %v, want nil", err)
		}
		r, _, err := j.LoadRun(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if r.Status != journal.StatusPending || r.LeaseOwner != "" || seen.count(id, "Fetch") != 0 {
			t.Errorf("run %s: %s, lease %q, Fetch %d; want pending, unleased, never executed", id, r.Status, r.LeaseOwner, seen.count(id, "Fetch"))
		}
	})

	t.Run("a draining worker releases its runs between steps", func(t *testing.T) {
		j := open(t)
		e := resume.NewEngine(j)
		ids := []string{newRunID(t), newRunID(t)}
		for _, id := range ids {
			if _, err := e.Enqueue(ctx, id, Chain, Plan{Loop: 30, SlowLoop: 10 * time.Millisecond}); err != nil {
				t.Fatal(err)
			}
		}
		stop := startWorker(ctx, e, resume.WorkerOptions{Concurrency: 2, PollInterval: 5 * time.Millisecond, ShutdownGrace: 5 * time.Second})
		time.Sleep(80 * time.Millisecond) // mid-loop
		t0 := time.Now()
		if err := stop(); err != nil {
			t.Fatalf("work: %v", err)
		}
		// Not a speed target: a drain that waited out the 5s grace instead
		// of stopping at the next step is what this catches, with room for
		// a loaded machine.
		if d := time.Since(t0); d > 3*time.Second {
			t.Errorf("draining took %v: runs should stop at their next step, not wait out the grace", d)
		}
		for _, id := range ids {
			r, _, err := j.LoadRun(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			if r.Status != journal.StatusPending || r.LeaseOwner != "" {
				t.Errorf("run %s after drain: %s, lease %q; want pending, released", id, r.Status, r.LeaseOwner)
			}
		}
		// Another worker finishes them; no journaled step runs again.
		stop = startWorker(ctx, resume.NewEngine(j), resume.WorkerOptions{Concurrency: 2, PollInterval: 5 * time.Millisecond})
		waitFor(t, j, len(ids), journal.StatusSucceeded)
		stop()
		for _, id := range ids {
			if seen.count(id, "Fetch") != 1 || seen.count(id, "Loop") != 30 {
				t.Errorf("run %s: Fetch %d, Loop %d; want 1 and 30", id, seen.count(id, "Fetch"), seen.count(id, "Loop"))
			}
		}
	})

	runReplay(t, open)
	runLiveness(t, h, open)
	runChildren(t, open)
	runCodec(t, open, effectsOf)
	runFaults(t, open, effectsOf)
	runSchedules(t, h, open)
	runClocks(t, open)
	runLeases(t, open)
	runDeploys(t, h, open)
	t.Run("corrupt rows", func(t *testing.T) { runCorrupt(t, h) })
	t.Run("sealed journal", func(t *testing.T) { runSealed(t, h) })
	t.Run("operators' actions", func(t *testing.T) { runAudit(t, h) })
	t.Run("resolutions are checked", func(t *testing.T) { runResolveChecked(t, h) })
	t.Run("waiting", func(t *testing.T) { runWait(t, h) })
	t.Run("run listing", func(t *testing.T) { runListing(t, h) })
	t.Run("limits", func(t *testing.T) { runLimits(t, open) })
	t.Run("cancellation and deadlines", func(t *testing.T) { runCancel(t, open) })
	runKeyedStarts(t, h, open)
	t.Run("fan-out", func(t *testing.T) { runFanOut(t, open) })
	runQueues(t, h, open)
	t.Run("continue-as-new", func(t *testing.T) { runContinue(t, h, open) })
	t.Run("retention", func(t *testing.T) { runPurge(t, h) })
	t.Run("batched claims", func(t *testing.T) { runClaimBatch(t, h, open) })
	t.Run("fork", func(t *testing.T) { runFork(t, h) })
}

// startWorker runs e.Work with opts in the background; stop cancels it and
// returns what Work returned.
func startWorker(ctx context.Context, e *resume.Engine, opts resume.WorkerOptions) (stop func() error) {
	wctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- e.Work(wctx, opts) }()
	return func() error {
		cancel()
		return <-done
	}
}

// claimAfterCreate is a journal on which another worker tries to claim
// work right after each run is created.
type claimAfterCreate struct {
	journal.Journal
	tried    bool
	claimErr error
}

func (c *claimAfterCreate) CreateRun(ctx context.Context, r journal.RunRecord) (journal.RunRecord, bool, error) {
	stored, created, err := c.Journal.CreateRun(ctx, r)
	if err == nil && created {
		c.tried = true
		_, _, c.claimErr = c.Journal.ClaimNext(ctx, journal.ClaimNextRequest{
			Owner: "another-worker", Lease: time.Minute, Workflows: []string{stored.Workflow},
		})
	}
	return stored, created, err
}

// waitFor waits until n runs have status s, for up to 30 seconds.
func waitFor(t *testing.T, j journal.Journal, n int, s journal.Status) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		runs, err := j.ListRuns(context.Background(), journal.RunFilter{Statuses: []journal.Status{s}})
		if err != nil {
			t.Fatal(err)
		}
		if len(runs) >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 30s, %d of %d runs are %s", len(runs), n, s)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
