package journaltest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/resumegen/resumegen/runtime/journal"
	"github.com/resumegen/resumegen/runtime/resume"
)

// runKeyedStarts proves debounce and singleton starts (issue 22 §2): the
// key's runs coalesce as documented, from one process or several at once,
// a claimed run's input is never replaced, sealed inputs are sealed for
// the run they belong to, and bad keys are refused.
func runKeyedStarts(t *testing.T, h Harness, open func(t *testing.T) journal.Journal) {
	ctx := context.Background()
	second := func(t *testing.T, j journal.Journal) journal.Journal {
		if h.OpenAgain == nil {
			return j
		}
		j2 := h.OpenAgain(t)
		t.Cleanup(func() { j2.Close() })
		return j2
	}
	in := func(s string) TockIn { return TockIn{Schedule: s, Tick: time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)} }
	output := func(tag string) string { return fmt.Sprintf("%q", tag+"@2026-12-02T00:00:00Z") }
	key := func(what string) string { return fmt.Sprintf("%s-%d", what, scheduleSeq.Add(1)) }

	t.Run("keyed starts: a singleton start is dropped while the key's run is unfinished, and starts the next once it finished", func(t *testing.T) {
		j := open(t)
		e := resume.NewEngine(j)
		k := key("single")
		first, outcome, err := e.Singleton(ctx, k, Tock, in("one"))
		if err != nil || outcome != resume.StartCreated || first.RunID != k+"#1" || first.Status != journal.StatusPending {
			t.Fatalf("first singleton start: %+v, %s, %v; want %s#1 created, pending", first, outcome, err, k)
		}
		again, outcome, err := resume.NewEngine(second(t, j)).Singleton(ctx, k, Tock, in("two"))
		if err != nil || outcome != resume.StartDropped || again.RunID != first.RunID {
			t.Fatalf("singleton start while %s is pending: %+v, %s, %v; want it dropped, returning %s", first.RunID, again, outcome, err, first.RunID)
		}
		res, err := e.Resume(ctx, first.RunID)
		if err != nil || res.Status != journal.StatusSucceeded || string(res.Output) != output("one") {
			t.Fatalf("run %s: %+v, %v; want it succeeded with the first input's output %s", first.RunID, res, err, output("one"))
		}
		next, outcome, err := e.Singleton(ctx, k, Tock, in("three"))
		if err != nil || outcome != resume.StartCreated || next.RunID != k+"#2" {
			t.Fatalf("singleton start after %s finished: %+v, %s, %v; want %s#2 created", first.RunID, next, outcome, err, k)
		}
		if r, _, err := j.LoadRun(ctx, k+"#2"); err != nil || !strings.Contains(string(r.Input), "three") {
			t.Fatalf("run %s#2: input %s, %v; want the third start's", k, r.Input, err)
		}
	})

	t.Run("keyed starts: a debounce replaces the unstarted run's input and moves its start; the last input runs once", func(t *testing.T) {
		j := open(t)
		e := resume.NewEngine(j)
		k := key("debounce")
		first, outcome, err := e.Debounce(ctx, k, time.Hour, Tock, in(k+"-one"))
		if err != nil || outcome != resume.StartCreated || first.RunID != k+"#1" || first.Status != journal.StatusWaiting {
			t.Fatalf("first debounce: %+v, %s, %v; want %s#1 created, waiting", first, outcome, err, k)
		}
		r1, _, err := j.LoadRun(ctx, first.RunID)
		if err != nil || r1.WaitKind != journal.WaitStart || r1.WakeAt.Before(time.Now().Add(50*time.Minute)) {
			t.Fatalf("run %s: wait %q until %s, %v; want it waiting to start in an hour", first.RunID, r1.WaitKind, r1.WakeAt, err)
		}
		for _, tag := range []string{"two", "three"} {
			got, outcome, err := resume.NewEngine(second(t, j)).Debounce(ctx, k, 100*time.Millisecond, Tock, in(k+"-"+tag))
			if err != nil || outcome != resume.StartReplaced || got.RunID != first.RunID {
				t.Fatalf("debounce %q: %+v, %s, %v; want %s's input replaced", tag, got, outcome, err, first.RunID)
			}
		}
		r2, _, err := j.LoadRun(ctx, first.RunID)
		if err != nil || !strings.Contains(string(r2.Input), "three") || !r2.WakeAt.Before(r1.WakeAt) {
			t.Fatalf("run %s after two debounces: input %s, start %s (was %s), %v; want the last input and the start moved to 100 ms from then",
				first.RunID, r2.Input, r2.WakeAt, r1.WakeAt, err)
		}
		stop := startWorker(ctx, resume.NewEngine(j), resume.WorkerOptions{PollInterval: 5 * time.Millisecond})
		waitFor(t, j, 1, journal.StatusSucceeded)
		if err := stop(); err != nil {
			t.Fatal(err)
		}
		r3, _, err := j.LoadRun(ctx, first.RunID)
		if err != nil || r3.Status != journal.StatusSucceeded || string(r3.Output) != output(k+"-three") {
			t.Fatalf("run %s: %s %s, %v; want succeeded with the last input's output %s", first.RunID, r3.Status, r3.Output, err, output(k+"-three"))
		}
		tocks.Lock()
		n1, n3 := tocks.n[in(k+"-one").Schedule+"@2026-12-02T00:00:00Z"], tocks.n[in(k+"-three").Schedule+"@2026-12-02T00:00:00Z"]
		tocks.Unlock()
		if n1 != 0 || n3 != 1 {
			t.Errorf("executions: first input %d, last input %d; want 0 and 1", n1, n3)
		}
	})

	t.Run("keyed starts: starts of one key from two processes at once create one run", func(t *testing.T) {
		j := open(t)
		engines := []*resume.Engine{resume.NewEngine(j), resume.NewEngine(second(t, j))}
		for _, mode := range []string{"singleton", "debounce"} {
			k := key("race-" + mode)
			// Round 1 creates the key's row; round 2 finds it, its run
			// finished (singleton) or claimed (debounce).
			for round := int64(1); round <= 2; round++ {
				want := journal.KeyedRunID(k, round)
				raceKey(t, engines, mode, k, want, in)
				if mode == "singleton" {
					if res, err := engines[0].Resume(ctx, want); err != nil || res.Status != journal.StatusSucceeded {
						t.Fatalf("run %s: %+v, %v", want, res, err)
					}
				} else if _, _, err := j.Claim(ctx, journal.ClaimRequest{RunID: want, Owner: "claimer", Lease: time.Minute}); err != nil {
					t.Fatalf("claim %s: %v", want, err)
				}
			}
			runs, err := j.ListRuns(ctx, journal.RunFilter{})
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for _, r := range runs {
				if strings.HasPrefix(r.RunID, k+"#") {
					n++
				}
			}
			if n != 2 {
				t.Errorf("%s: %d runs of key %s stored after two rounds, want 2", mode, n, k)
			}
		}
	})

	t.Run("keyed starts: a debounce after a worker claimed the run starts the key's next run, and leaves the claimed run's input", func(t *testing.T) {
		j := open(t)
		e := resume.NewEngine(j)
		k := key("claimed")
		first, _, err := e.Debounce(ctx, k, time.Hour, Tock, in("one"))
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := j.Claim(ctx, journal.ClaimRequest{RunID: first.RunID, Owner: "claimer", Lease: time.Minute}); err != nil {
			t.Fatalf("claim %s: %v", first.RunID, err)
		}
		next, outcome, err := e.Debounce(ctx, k, time.Hour, Tock, in("two"))
		if err != nil || outcome != resume.StartCreated || next.RunID != k+"#2" {
			t.Fatalf("debounce after the claim: %+v, %s, %v; want %s#2 created", next, outcome, err, k)
		}
		if r, _, err := j.LoadRun(ctx, first.RunID); err != nil || !strings.Contains(string(r.Input), "one") {
			t.Fatalf("claimed run %s: input %s, %v; want it unchanged", first.RunID, r.Input, err)
		}
	})

	t.Run("keyed starts: a sealed journal seals the replaced input for the run it belongs to", func(t *testing.T) {
		j := open(t)
		k1 := keyring(t, "k1")
		e := resume.NewEngine(j, resume.WithCodec(k1))
		k := key("sealed")
		first, _, err := e.Debounce(ctx, k, time.Hour, Tock, in("secret-one"))
		if err != nil {
			t.Fatal(err)
		}
		if _, outcome, err := e.Debounce(ctx, k, 10*time.Millisecond, Tock, in("secret-two")); err != nil || outcome != resume.StartReplaced {
			t.Fatalf("second debounce: %s, %v", outcome, err)
		}
		raw, _, err := j.LoadRun(ctx, first.RunID)
		if err != nil || !journal.IsSealed(raw.Input) || strings.Contains(string(raw.Input), "secret") {
			t.Fatalf("run %s as stored: input %s, %v; want it sealed", first.RunID, raw.Input, err)
		}
		time.Sleep(20 * time.Millisecond)
		res, err := e.Resume(ctx, first.RunID)
		if err != nil || string(res.Output) != output("secret-two") {
			t.Fatalf("run %s: %+v, %v; want succeeded with the replaced input's output %s", first.RunID, res, err, output("secret-two"))
		}
		var decoded string
		if err := json.Unmarshal(res.Output, &decoded); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("keyed starts: bad keys are refused, naming the key; a run started by id under a keyed run's name is a conflict", func(t *testing.T) {
		j := open(t)
		e := resume.NewEngine(j)
		long := strings.Repeat("k", journal.MaxRunIDBytes)
		if _, _, err := e.Singleton(ctx, long, Tock, in("x")); err == nil || !errors.Is(err, journal.ErrLimit) || !strings.Contains(err.Error(), `key "kkk`) {
			t.Errorf("a key of %d bytes: %v; want a limit error naming the key", len(long), err)
		}
		if _, _, err := e.Singleton(ctx, "", Tock, in("x")); err == nil || !strings.Contains(err.Error(), "empty start key") {
			t.Errorf("an empty key: %v; want it refused", err)
		}
		if _, _, err := e.Debounce(ctx, "k", 0, Tock, in("x")); err == nil || !strings.Contains(err.Error(), "positive delay") {
			t.Errorf("a debounce of no delay: %v; want it refused", err)
		}
		if _, _, err := e.Singleton(ctx, "bad\x00key", Tock, in("x")); err == nil || !errors.Is(err, journal.ErrLimit) {
			t.Errorf("a key with a NUL byte: %v; want it refused", err)
		}
		k := key("taken")
		if _, err := e.Enqueue(ctx, k+"#1", Tock, in("by id")); err != nil {
			t.Fatal(err)
		}
		if _, _, err := e.Singleton(ctx, k, Tock, in("by key")); !errors.Is(err, journal.ErrRunConflict) {
			t.Errorf("a keyed start whose next run's id is taken: %v; want ErrRunConflict", err)
		}
		if r, _, err := j.LoadRun(ctx, k+"#1"); err != nil || !strings.Contains(string(r.Input), "by id") {
			t.Errorf("run %s#1: input %s, %v; want it untouched", k, r.Input, err)
		}
	})
}

// raceKey starts key k 16 times at once, alternately from each engine, in
// mode, and fails unless exactly one start created run want and every
// other one coalesced into it.
func raceKey(t *testing.T, engines []*resume.Engine, mode, k, want string, in func(string) TockIn) {
	t.Helper()
	ctx := context.Background()
	const starts = 16
	var wg sync.WaitGroup
	var mu sync.Mutex
	outcomes := map[resume.StartOutcome]int{}
	ids := map[string]bool{}
	var errs []error
	for i := range starts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			e := engines[i%len(engines)]
			var res resume.Result
			var outcome resume.StartOutcome
			var err error
			if mode == "singleton" {
				res, outcome, err = e.Singleton(ctx, k, Tock, in(fmt.Sprint(i)))
			} else {
				res, outcome, err = e.Debounce(ctx, k, time.Hour, Tock, in(fmt.Sprint(i)))
			}
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err)
				return
			}
			outcomes[outcome]++
			ids[res.RunID] = true
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatalf("%s starts: %v", mode, err)
	}
	follower := resume.StartDropped
	if mode == "debounce" {
		follower = resume.StartReplaced
	}
	if outcomes[resume.StartCreated] != 1 || outcomes[follower] != starts-1 || len(ids) != 1 || !ids[want] {
		t.Errorf("%d %s starts of one key from two processes: outcomes %v, runs %v; want one created and the rest %s, all %s",
			starts, mode, outcomes, ids, follower, want)
	}
}
