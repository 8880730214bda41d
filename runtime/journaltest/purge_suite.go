package journaltest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/resumegen/resumegen/runtime/journal"
	"github.com/resumegen/resumegen/runtime/resume"
)

// purgeable is every status a purge may name.
var purgeable = []journal.Status{journal.StatusSucceeded, journal.StatusFailed, journal.StatusCancelled, journal.StatusNeedsAttention}

// runPurge proves a journal's retention (journal.Purger): it deletes
// finished runs older than asked, of the statuses and workflows asked,
// in batches, with their child runs; never a run that executes, a child
// alone, a run whose parent or tree is unfinished, a failed run holding a
// kept signal, nor a schedule's run the schedule may still need; beside
// running workers it deletes only what finished, and they lose nothing;
// an engine's policies (resume.WithRetention) purge per workflow, at once
// (Engine.Purge) and periodically (Engine.Work).
func runPurge(t *testing.T, h Harness) {
	ctx := context.Background()
	if h.Exec == nil {
		t.Fatal("the purge suite needs Harness.Exec (it sets run statuses by hand)")
	}
	open := func(t *testing.T) (journal.Journal, journal.Purger) {
		t.Helper()
		j := h.open(t)
		p, ok := journal.Find[journal.Purger](j)
		if !ok {
			t.Fatal("the journal cannot purge runs (journal.Purger)")
		}
		return j, p
	}
	purge := func(t *testing.T, p journal.Purger, req journal.PurgeRequest) journal.PurgeResult {
		t.Helper()
		res, err := p.Purge(ctx, req)
		if err != nil {
			t.Fatalf("purge %+v: %v", req, err)
		}
		return res
	}
	exists := func(t *testing.T, j journal.Journal, id string) bool {
		t.Helper()
		_, _, err := j.LoadRun(ctx, id)
		if errors.Is(err, journal.ErrRunNotFound) {
			return false
		}
		if err != nil {
			t.Fatalf("load run %s: %v", id, err)
		}
		return true
	}
	exec := func(t *testing.T, query string) {
		t.Helper()
		if err := h.Exec(ctx, query); err != nil {
			t.Fatalf("%s: %v", query, err)
		}
	}
	setStatus := func(t *testing.T, id string, s journal.Status) {
		t.Helper()
		exec(t, fmt.Sprintf(`UPDATE resume_runs SET status = '%s' WHERE run_id = %s`, s, quoteSQL(id)))
	}
	only := func(s ...journal.Status) journal.PurgeRequest { return journal.PurgeRequest{Statuses: s} }

	t.Run("age, status, workflow and batches", func(t *testing.T) {
		j, p := open(t)
		e := resume.NewEngine(j)
		succeeded, failed, cancelled, pending, waiting := newRunID(t), newRunID(t), newRunID(t), newRunID(t), newRunID(t)
		res, err := e.Start(ctx, succeeded, Chain, Plan{Loop: 2})
		if err != nil {
			t.Fatal(err)
		}
		chain := res.Workflow
		if r, _ := e.Start(ctx, failed, Chain, Plan{FailFetch: 9, PermanentFetch: true}); r.Status != journal.StatusFailed {
			t.Fatalf("run %s: %s, want failed", failed, r.Status)
		}
		if _, err := e.Enqueue(ctx, cancelled, Chain, Plan{}); err != nil {
			t.Fatal(err)
		}
		if err := j.Cancel(ctx, cancelled, journal.CancelOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := e.Enqueue(ctx, pending, Chain, Plan{}); err != nil {
			t.Fatal(err)
		}
		if _, err := e.Start(ctx, waiting, ApproveFlow, Gate{}); !errors.Is(err, resume.ErrRunWaiting) {
			t.Fatalf("run %s: %v, want waiting", waiting, err)
		}

		for _, bad := range []journal.PurgeRequest{{}, only(journal.StatusPending), only(journal.StatusRunning), only(journal.StatusWaiting),
			{Statuses: purgeable, OlderThan: -time.Second}} {
			if _, err := p.Purge(ctx, bad); err == nil {
				t.Errorf("purge %+v: no error; want it refused", bad)
			}
		}
		if got := purge(t, p, journal.PurgeRequest{Statuses: purgeable, OlderThan: time.Hour}); got.Runs != 0 {
			t.Errorf("purge of runs older than an hour deleted %+v; every run is younger", got)
		}
		dry := purge(t, p, journal.PurgeRequest{Statuses: purgeable, DryRun: true})
		if dry.Runs != 3 || dry.Children != 0 {
			t.Errorf("dry run counted %+v; want 3 runs (succeeded, failed, cancelled)", dry)
		}
		if !exists(t, j, succeeded) {
			t.Fatal("a dry run deleted a run")
		}
		if got := purge(t, p, journal.PurgeRequest{Statuses: purgeable, Workflow: "example.com/none.Other"}); got.Runs != 0 {
			t.Errorf("purge of another workflow deleted %+v", got)
		}
		if got := purge(t, p, journal.PurgeRequest{Statuses: purgeable, Except: []string{chain}}); got.Runs != 0 {
			t.Errorf("purge except %s deleted %+v", chain, got)
		}
		got := purge(t, p, journal.PurgeRequest{Statuses: []journal.Status{journal.StatusSucceeded}, Workflow: chain})
		if got.Runs != 1 || got.Steps != 5 || exists(t, j, succeeded) { // Fetch, Notify, Write, Loop, Loop#2
			t.Errorf("purge of succeeded runs: %+v, run still there: %v; want 1 run, 5 steps, gone", got, exists(t, j, succeeded))
		}
		if got := purge(t, p, journal.PurgeRequest{Statuses: purgeable}); got.Runs != 2 || exists(t, j, failed) || exists(t, j, cancelled) {
			t.Errorf("purge of every purgeable status: %+v; want the failed and the cancelled run", got)
		}
		for _, id := range []string{pending, waiting} {
			if !exists(t, j, id) {
				t.Errorf("run %s, unfinished, was purged", id)
			}
		}
		// A purged id is free: starting it again executes a new run.
		if _, err := e.Start(ctx, succeeded, Chain, Plan{Loop: 2}); err != nil || seen.count(succeeded, "Fetch") != 2 {
			t.Errorf("start of a purged id: %v, Fetch executed %d times; want a new run (2)", err, seen.count(succeeded, "Fetch"))
		}

		// Batches: at most Limit top-level runs per call, oldest first.
		var ids []string
		for i := 0; i < 5; i++ {
			id := newRunID(t)
			ids = append(ids, id)
			if _, err := e.Start(ctx, id, Chain, Plan{}); err != nil {
				t.Fatal(err)
			}
		}
		var counts []int
		for i := 0; i < 5; i++ {
			n := purge(t, p, journal.PurgeRequest{Statuses: []journal.Status{journal.StatusSucceeded}, Limit: 2}).Runs
			counts = append(counts, n)
			if n == 0 {
				break
			}
			if i == 0 && (exists(t, j, succeeded) || exists(t, j, ids[0]) || !exists(t, j, ids[4])) {
				t.Errorf("the first batch did not take the oldest runs first")
			}
		}
		if fmt.Sprint(counts) != "[2 2 2 0]" { // the restarted run and the five
			t.Errorf("batches of 2 deleted %v runs; want [2 2 2 0]", counts)
		}
	})

	t.Run("children go with their parent and never alone", func(t *testing.T) {
		j, p := open(t)
		e := resume.NewEngine(j)
		parent := newRunID(t)
		if res, err := e.Start(ctx, parent, Parent, KidPlan{}); err != nil || res.Status != journal.StatusSucceeded {
			t.Fatalf("parent: %v %v", res.Status, err)
		}
		child := resume.ChildRunID(parent, "Kid")
		if !exists(t, j, child) {
			t.Fatalf("no child run %s", child)
		}
		// A parent that still executes keeps its finished child.
		setStatus(t, parent, journal.StatusWaiting)
		if got := purge(t, p, only(purgeable...)); got.Runs != 0 || got.Children != 0 || !exists(t, j, child) {
			t.Errorf("with its parent waiting, purge deleted %+v; want nothing (the child goes with its parent)", got)
		}
		// A finished parent whose child still executes is kept.
		setStatus(t, parent, journal.StatusSucceeded)
		setStatus(t, child, journal.StatusRunning)
		if got := purge(t, p, only(purgeable...)); got.Runs != 0 || !exists(t, j, parent) {
			t.Errorf("with its child running, purge deleted %+v; want nothing", got)
		}
		if got := purge(t, p, journal.PurgeRequest{Statuses: purgeable, DryRun: true}); got.Runs != 0 {
			t.Errorf("dry run with the child running counted %+v; want nothing", got)
		}
		setStatus(t, child, journal.StatusSucceeded)
		if got := purge(t, p, journal.PurgeRequest{Statuses: purgeable, DryRun: true}); got.Runs != 1 || got.Children != 1 {
			t.Errorf("dry run counted %+v; want 1 run and 1 child", got)
		}
		got := purge(t, p, only(purgeable...))
		if got.Runs != 1 || got.Children != 1 || exists(t, j, parent) || exists(t, j, child) {
			t.Errorf("purge deleted %+v (parent left: %v, child left: %v); want the parent with its child", got, exists(t, j, parent), exists(t, j, child))
		}
		// A run whose id extends another's without being its child is its
		// own: purging the first leaves it.
		a, b := newRunID(t), ""
		b = a + "/not-a-child"
		for _, id := range []string{a, b} {
			if _, err := e.Start(ctx, id, Chain, Plan{}); err != nil {
				t.Fatal(err)
			}
		}
		setStatus(t, b, journal.StatusNeedsAttention)
		if got := purge(t, p, only(journal.StatusSucceeded)); got.Runs != 1 || got.Children != 0 || exists(t, j, a) || !exists(t, j, b) {
			t.Errorf("purge deleted %+v; want %s alone, not %s", got, a, b)
		}
	})

	t.Run("kept signals and schedules keep what they need", func(t *testing.T) {
		j, p := open(t)
		e := resume.NewEngine(j)
		w := newRunID(t)
		if _, err := e.Start(ctx, w, ApproveFlow, Gate{}); !errors.Is(err, resume.ErrRunWaiting) {
			t.Fatalf("run %s: %v, want waiting", w, err)
		}
		if _, err := j.Signal(ctx, journal.SignalRecord{RunID: w, Name: "later", Payload: json.RawMessage(`1`)}); err != nil {
			t.Fatal(err)
		}
		// Failed or parked, a retry or resolution executes it again: its
		// kept signal is for that.
		for _, s := range []journal.Status{journal.StatusFailed, journal.StatusNeedsAttention} {
			setStatus(t, w, s)
			if got := purge(t, p, only(purgeable...)); got.Runs != 0 {
				t.Errorf("%s with a kept signal: purge deleted %+v; want it kept", s, got)
			}
		}
		setStatus(t, w, journal.StatusSucceeded)
		if got := purge(t, p, only(purgeable...)); got.Runs != 1 || got.Signals != 1 || exists(t, j, w) {
			t.Errorf("succeeded with a kept signal (nothing awaits it any more): purge deleted %+v; want the run and its signal", got)
		}

		tick := time.Now().UTC().Truncate(time.Minute).Add(-time.Hour)
		name := "purge-ticks"
		now := time.Now()
		if _, _, err := j.CreateSchedule(ctx, journal.ScheduleRecord{Name: name, Workflow: "w", Spec: "every 1m0s", Missed: "skip",
			LastTick: tick, NextTick: tick.Add(time.Minute), CreatedAt: now, UpdatedAt: now}); err != nil {
			t.Fatal(err)
		}
		if _, _, err := j.CreateSchedule(ctx, journal.ScheduleRecord{Name: "purge-fresh", Workflow: "w", Spec: "every 1m0s", Missed: "skip",
			NextTick: tick, CreatedAt: now, UpdatedAt: now}); err != nil {
			t.Fatal(err)
		}
		id := func(name string, d time.Duration) string { return name + "@" + tick.Add(d).Format(time.RFC3339) }
		before, last, after, fresh := id(name, -time.Minute), id(name, 0), id(name, time.Minute), id("purge-fresh", 0)
		other := id("purge-tick", -time.Minute) // a prefix of the schedule's name: no tick of it
		for _, r := range []string{before, last, after, fresh, other} {
			if _, err := e.Start(ctx, r, Chain, Plan{}); err != nil {
				t.Fatal(err)
			}
		}
		got := purge(t, p, only(journal.StatusSucceeded))
		if got.Runs != 2 || exists(t, j, before) || exists(t, j, other) {
			t.Errorf("purge deleted %+v; want the tick before the last one started (%s) and %s", got, before, other)
		}
		for _, r := range []string{last, after, fresh} {
			if !exists(t, j, r) {
				t.Errorf("run %s, of the schedule's last tick or later (or of a schedule with none yet), was purged", r)
			}
		}
	})

	t.Run("purge beside running workers", func(t *testing.T) {
		j, p := open(t)
		e := resume.NewEngine(j)
		const n, loops = 40, 5
		var ids []string
		for i := 0; i < n; i++ {
			id := newRunID(t)
			ids = append(ids, id)
			if _, err := e.Enqueue(ctx, id, Chain, Plan{Loop: loops}); err != nil {
				t.Fatal(err)
			}
		}
		stop := startWorker(ctx, e, resume.WorkerOptions{Concurrency: 4, PollInterval: 5 * time.Millisecond})
		var purged atomic.Int64
		var purgeErr error
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			deadline := time.Now().Add(60 * time.Second)
			for purged.Load() < n && time.Now().Before(deadline) {
				res, err := p.Purge(ctx, journal.PurgeRequest{Statuses: purgeable, Limit: 3})
				if err != nil {
					purgeErr = err
					return
				}
				purged.Add(int64(res.Runs))
				time.Sleep(time.Millisecond)
			}
		}()
		wg.Wait()
		if err := stop(); err != nil {
			t.Fatalf("work: %v", err)
		}
		if purgeErr != nil {
			t.Fatalf("purge beside the workers: %v", purgeErr)
		}
		if purged.Load() != n {
			t.Fatalf("purged %d of %d runs within a minute", purged.Load(), n)
		}
		for _, id := range ids {
			if seen.count(id, "Fetch") != 1 || seen.count(id, "Loop") != loops || effectsOfHarness(t, h, id) != 1 {
				t.Errorf("run %s: Fetch %d, Loop %d, effects %d; want 1, %d, 1: the purge took a run that executed",
					id, seen.count(id, "Fetch"), seen.count(id, "Loop"), effectsOfHarness(t, h, id), loops)
			}
			if exists(t, j, id) {
				t.Errorf("run %s is still there", id)
			}
		}
	})

	t.Run("engine retention policies", func(t *testing.T) {
		j, _ := open(t)
		e := resume.NewEngine(j, resume.WithRetention(time.Hour,
			resume.Retention{Workflow: Chain, Succeeded: time.Millisecond},
			resume.Retention{Succeeded: time.Millisecond, Failed: time.Millisecond}))
		ok, bad, parent := newRunID(t), newRunID(t), newRunID(t)
		if _, err := e.Start(ctx, ok, Chain, Plan{}); err != nil {
			t.Fatal(err)
		}
		if r, _ := e.Start(ctx, bad, Chain, Plan{FailFetch: 9, PermanentFetch: true}); r.Status != journal.StatusFailed {
			t.Fatalf("run %s: %s, want failed", bad, r.Status)
		}
		if _, err := e.Start(ctx, parent, Parent, KidPlan{}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond) // the policies' millisecond passes
		got, err := e.Purge(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if got.Runs != 2 || got.Children != 1 || exists(t, j, ok) || exists(t, j, parent) || !exists(t, j, bad) {
			t.Errorf("purge by policy deleted %+v; want %s (Chain's policy) and %s with its child (the default policy), not the failed Chain run (kept for ever by Chain's own policy)", got, ok, parent)
		}
		for _, policies := range [][]resume.Retention{{{}, {}}, {{Workflow: Chain}, {Workflow: Chain}}, {{Failed: -time.Second}}, {{Workflow: 7}}} {
			if _, err := resume.NewEngine(j, resume.WithRetention(0, policies...)).Purge(ctx); err == nil {
				t.Errorf("policies %+v: no error", policies)
			}
		}

		// A worker purges by itself, every interval.
		w := resume.NewEngine(j, resume.WithRetention(20*time.Millisecond, resume.Retention{Workflow: Chain, Succeeded: time.Millisecond}))
		var ids []string
		for i := 0; i < 3; i++ {
			id := newRunID(t)
			ids = append(ids, id)
			if _, err := w.Enqueue(ctx, id, Chain, Plan{}); err != nil {
				t.Fatal(err)
			}
		}
		stop := startWorker(ctx, w, resume.WorkerOptions{PollInterval: 5 * time.Millisecond})
		deadline := time.Now().Add(30 * time.Second)
		for left := len(ids); left > 0; {
			left = 0
			for _, id := range ids {
				if exists(t, j, id) {
					left++
				}
			}
			if time.Now().After(deadline) {
				t.Fatalf("after 30s, %d of %d runs the worker executed are not purged", left, len(ids))
			}
			time.Sleep(10 * time.Millisecond)
		}
		if err := stop(); err != nil {
			t.Fatalf("work: %v", err)
		}
		for _, id := range ids {
			if seen.count(id, "Fetch") != 1 {
				t.Errorf("run %s: Fetch executed %d times; want once, before its purge", id, seen.count(id, "Fetch"))
			}
		}
		if !exists(t, j, bad) {
			t.Errorf("the worker's policy purged the failed run %s", bad)
		}
	})
}

// effectsOfHarness counts runID's rows in h's effects table.
func effectsOfHarness(t *testing.T, h Harness, runID string) int {
	t.Helper()
	n, err := h.CountEffects(context.Background(), runID)
	if err != nil {
		t.Fatalf("count effects: %v", err)
	}
	return n
}
