package journaltest

import (
	"context"
	"errors"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/resumegen/resumegen/runtime/journal"
	"github.com/resumegen/resumegen/runtime/resume"
)

// keysBySeq lists a run's journal keys in the order they were written.
func keysBySeq(t *testing.T, j journal.Journal, runID string) ([]string, map[string]journal.StepRecord) {
	t.Helper()
	_, steps, err := j.LoadRun(context.Background(), runID)
	if err != nil {
		t.Fatal(err)
	}
	sort.Slice(steps, func(a, b int) bool { return steps[a].Seq < steps[b].Seq })
	keys := make([]string, len(steps))
	byKey := map[string]journal.StepRecord{}
	for i, s := range steps {
		keys[i] = s.StepKey
		byKey[s.StepKey] = s
	}
	return keys, byKey
}

// cancelSeenLate is a journal on which run runID's cancellation cannot be
// seen (CancelRequested) before run after is cancelled.
type cancelSeenLate struct {
	journal.Journal
	runID, after string
}

// Unwrap returns the journal underneath, for its liveness signal.
func (j *cancelSeenLate) Unwrap() journal.Journal { return j.Journal }

func (j *cancelSeenLate) CancelRequested(ctx context.Context, runID string) (time.Time, error) {
	if runID == j.runID {
		if r, _, err := j.Journal.LoadRun(ctx, j.after); err != nil || r.Status != journal.StatusCancelled {
			return time.Time{}, err
		}
	}
	return j.Journal.CancelRequested(ctx, runID)
}

// resumeDying resumes run runID on an engine that "dies" at f (see
// startDying), and reports whether it did.
func resumeDying(j journal.Journal, runID string, f resume.Fault) (crashed bool) {
	e := resume.NewEngine(j, resume.WithLease(150*time.Millisecond), resume.WithOwner("crasher"),
		resume.WithFault(f), resume.WithFaultAction(func() { panic(crash{f}) }), resume.WithCrashPanics(isCrash))
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(crash); !ok {
				panic(r)
			}
			crashed = true
			if l, ok := j.(journal.Liveness); ok {
				if err := l.Release(context.Background(), "crasher"); err != nil {
					panic(err)
				}
			}
			time.Sleep(170 * time.Millisecond)
		}
	}()
	_, _ = e.Resume(context.Background(), runID)
	return false
}

// tripEffects are the executions of Trip's steps in run id, and of
// TripParent's in its parent, if any.
func tripEffects(id string) map[string]int {
	out := map[string]int{}
	for _, s := range []string{"Reserve:flight", "Reserve:hotel", "Unreserve:hotel", "Unreserve:flight", "Pay", "Slow", "After", "Release"} {
		if n := seen.count(id, s); n > 0 {
			out[s] = n
		}
	}
	return out
}

func sameCounts(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// wantUnwound checks that run id of Trip unwound: both reservations
// undone, last first, after the step whose refusal (a final failed row
// matching want, ErrRunCancelled or ErrDeadline) the body returned;
// nothing else executed.
func wantUnwound(t *testing.T, j journal.Journal, id, refused string) {
	t.Helper()
	want := map[string]int{"Reserve:flight": 1, "Reserve:hotel": 1, "Unreserve:hotel": 1, "Unreserve:flight": 1}
	if got := tripEffects(id); got["Pay"] != 0 || got["Unreserve:hotel"] != 1 || got["Unreserve:flight"] != 1 ||
		got["Reserve:flight"] != 1 || got["Reserve:hotel"] != 1 {
		t.Errorf("run %s executed %v, want %v (and Slow, when it waited in it)", id, got, want)
	}
	keys, rows := keysBySeq(t, j, id)
	tail := strings.Join(keys[max(0, len(keys)-3):], " ")
	if wantTail := refused + " Unreserve[hotel] Unreserve[flight]"; tail != wantTail {
		t.Errorf("run %s journaled %v, want it to end with %s", id, keys, wantTail)
	}
	if r := rows[refused]; r.Status != journal.StepFailed || !r.Final || !strings.Contains(r.Error, "not executed") {
		t.Errorf("row %s: %s final=%v %q, want a final failed row of a step not executed", refused, r.Status, r.Final, r.Error)
	}
	if r, ok := rows["Pay"]; ok && r.Status == journal.StepSucceeded {
		t.Errorf("run %s journaled Pay executed", id)
	}
}

// runCancel proves cancellation and deadlines (issue 19): a cancelled or
// expired run, running, pending, waiting or sleeping, unwinds its body so
// that its deferred compensations execute, and nothing else; a kill at
// every point of the unwinding resumes it correctly; cancellation reaches
// child runs, which take no signals, and a cancelled child fails its
// waiting parent with an error the parent's body tests.
func runCancel(t *testing.T, open func(*testing.T) journal.Journal) {
	ctx := context.Background()

	t.Run("a waiting or sleeping run that is cancelled unwinds: its deferred steps execute, nothing else", func(t *testing.T) {
		for _, c := range []struct {
			plan    TripPlan
			refused string
		}{{TripPlan{Wait: "await"}, "go"}, {TripPlan{Wait: "sleep", Sleep: time.Hour}, "resume.Sleep"}} {
			j := open(t)
			e := resume.NewEngine(j)
			id := newRunID(t)
			if res, err := e.Start(ctx, id, Trip, c.plan); res.Status != journal.StatusWaiting {
				t.Fatalf("%s: %s, %v; want waiting", c.plan.Wait, res.Status, err)
			}
			if err := e.Cancel(ctx, id, journal.CancelOptions{}); err != nil {
				t.Fatalf("cancel: %v", err)
			}
			r, _, _ := j.LoadRun(ctx, id)
			if r.Status != journal.StatusPending || r.CancelRequested.IsZero() {
				t.Fatalf("after cancel: %s, asked at %v; want pending, asked to stop, for a worker to unwind", r.Status, r.CancelRequested)
			}
			if err := e.Cancel(ctx, id, journal.CancelOptions{}); err != nil {
				t.Errorf("a second cancel: %v, want nil (asked already)", err)
			}
			if err := e.Signal(ctx, id, "go", true); !errors.Is(err, journal.ErrRunFinished) {
				t.Errorf("signal to a run asked to stop: %v, want ErrRunFinished", err)
			}
			stop := startWorker(ctx, resume.NewEngine(j), resume.WorkerOptions{PollInterval: 20 * time.Millisecond})
			res, err := e.Wait(ctx, id)
			stop()
			if res.Status != journal.StatusCancelled || !errors.Is(err, resume.ErrRunCancelled) {
				t.Fatalf("%s: %s, %v; want cancelled", c.plan.Wait, res.Status, err)
			}
			wantUnwound(t, j, id, c.refused)
			if res, err := resume.NewEngine(j).Resume(ctx, id); !errors.Is(err, resume.ErrRunCancelled) || res.Status != journal.StatusCancelled {
				t.Errorf("resume of the cancelled run: %s, %v", res.Status, err)
			}
			if n := seen.count(id, "Unreserve:hotel"); n != 1 {
				t.Errorf("Unreserve[hotel] executed %d times after a resume of the cancelled run", n)
			}
		}
	})

	t.Run("a pending or abandoned run that is cancelled unwinds", func(t *testing.T) {
		j := open(t)
		// A run whose process died before Pay: running, its lease lapsed.
		dead := newRunID(t)
		if !startDying(j, dead, Trip, TripPlan{}, resume.Fault{Step: "Pay", Point: resume.FaultBefore}) {
			t.Fatal("the run did not crash")
		}
		// A run released by its worker before Pay: pending, with steps.
		released := newRunID(t)
		if !startDying(j, released, Trip, TripPlan{}, resume.Fault{Step: "Pay", Point: resume.FaultBefore}) {
			t.Fatal("the run did not crash")
		}
		r, _, err := j.Claim(ctx, journal.ClaimRequest{RunID: released, Owner: "releaser", Lease: time.Minute, TakeOverDead: true})
		if err != nil {
			t.Fatal(err)
		}
		if err := j.FinishRun(ctx, journal.Lease{RunID: released, Owner: "releaser", Epoch: r.Epoch}, journal.RunRecord{RunID: released, Status: journal.StatusPending, UpdatedAt: time.Now()}); err != nil {
			t.Fatal(err)
		}
		for _, id := range []string{dead, released} {
			if err := resume.NewEngine(j).Cancel(ctx, id, journal.CancelOptions{}); err != nil {
				t.Fatalf("cancel: %v", err)
			}
			res, err := resume.NewEngine(j).Resume(ctx, id)
			if res.Status != journal.StatusCancelled || !errors.Is(err, resume.ErrRunCancelled) {
				t.Fatalf("%s: %s, %v; want cancelled", id, res.Status, err)
			}
			wantUnwound(t, j, id, "Pay")
		}
		// A run that executed nothing has nothing to unwind: it is
		// cancelled at once.
		fresh := newRunID(t)
		if _, err := resume.NewEngine(j).Enqueue(ctx, fresh, Trip, TripPlan{}); err != nil {
			t.Fatal(err)
		}
		if err := resume.NewEngine(j).Cancel(ctx, fresh, journal.CancelOptions{}); err != nil {
			t.Fatal(err)
		}
		if r, _, _ := j.LoadRun(ctx, fresh); r.Status != journal.StatusCancelled {
			t.Errorf("a pending run that executed nothing, cancelled: %s, want cancelled at once", r.Status)
		}
		if err := resume.NewEngine(j).Cancel(ctx, fresh, journal.CancelOptions{}); !errors.Is(err, journal.ErrRunBusy) {
			t.Errorf("cancel of a cancelled run: %v, want ErrRunBusy", err)
		}
	})

	t.Run("a running run cancelled while a step executes: the step's context ends, and the run unwinds in its process", func(t *testing.T) {
		j := open(t)
		e := resume.NewEngine(j, resume.WithLease(600*time.Millisecond))
		id := newRunID(t)
		type outcome struct {
			res resume.Result
			err error
		}
		done := make(chan outcome, 1)
		go func() {
			res, err := e.Start(ctx, id, Trip, TripPlan{Wait: "slow"})
			done <- outcome{res, err}
		}()
		for deadline := time.Now().Add(30 * time.Second); seen.count(id, "Slow") == 0; time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatal("the run did not reach Slow")
			}
		}
		asked := time.Now()
		if err := e.Cancel(ctx, id, journal.CancelOptions{Running: true}); err != nil {
			t.Fatal(err)
		}
		out := <-done
		if out.res.Status != journal.StatusCancelled || !errors.Is(out.err, resume.ErrRunCancelled) {
			t.Fatalf("Start of the cancelled run: %s, %v", out.res.Status, out.err)
		}
		if took := time.Since(asked); took > 10*time.Second {
			t.Errorf("the cancellation took %v to reach the running step", took)
		}
		wantUnwound(t, j, id, "Slow")
		_, rows := keysBySeq(t, j, id)
		if h := rows["Slow"].History; len(h) != 1 || !strings.Contains(h[0].Error, "cancelled") {
			t.Errorf("Slow's history %+v, want its one attempt, ended by the cancellation", h)
		}
		if n := seen.count(id, "Slow"); n != 1 {
			t.Errorf("Slow executed %d times", n)
		}
	})

	t.Run("compensations run with a context the stop does not cancel, bounded by the unwind timeout", func(t *testing.T) {
		j := open(t)
		e := resume.NewEngine(j, resume.WithUnwindTimeout(3*time.Second))
		id := newRunID(t)
		e.Start(ctx, id, Trip, TripPlan{Wait: "await"})
		if err := e.Cancel(ctx, id, journal.CancelOptions{}); err != nil {
			t.Fatal(err)
		}
		began := time.Now()
		if res, _ := e.Resume(ctx, id); res.Status != journal.StatusCancelled {
			t.Fatalf("%s, want cancelled", res.Status)
		}
		for _, leg := range []string{"hotel", "flight"} {
			u, ok := unwoundOf(id, leg)
			switch {
			case !ok:
				t.Errorf("Unreserve %s did not run", leg)
			case u.err != nil:
				t.Errorf("Unreserve %s ran with a context already done: %v", leg, u.err)
			case !u.hasDeadline || u.deadline.Before(began) || u.deadline.After(began.Add(3*time.Second+time.Second)):
				t.Errorf("Unreserve %s's context ends at %v (set: %v), want within the 3s unwind timeout from %v", leg, u.deadline, u.hasDeadline, began)
			}
		}
	})

	t.Run("a kill at every point of the unwinding resumes it correctly", func(t *testing.T) {
		for _, f := range []resume.Fault{
			{Step: "go", Point: resume.FaultBefore}, {Step: "go", Point: resume.FaultAfter},
			{Step: "Unreserve[hotel]", Point: resume.FaultBefore}, {Step: "Unreserve[hotel]", Point: resume.FaultEffect}, {Step: "Unreserve[hotel]", Point: resume.FaultAfter},
			{Step: "Unreserve[flight]", Point: resume.FaultBefore}, {Step: "Unreserve[flight]", Point: resume.FaultEffect}, {Step: "Unreserve[flight]", Point: resume.FaultAfter},
		} {
			j := open(t)
			id := newRunID(t)
			resume.NewEngine(j).Start(ctx, id, Trip, TripPlan{Wait: "await"})
			if err := resume.NewEngine(j).Cancel(ctx, id, journal.CancelOptions{}); err != nil {
				t.Fatal(err)
			}
			if !resumeDying(j, id, f) {
				t.Fatalf("%s:%s: the engine did not die", f.Step, f.Point)
			}
			res, err := resume.NewEngine(j).Resume(ctx, id)
			if res.Status != journal.StatusCancelled || !errors.Is(err, resume.ErrRunCancelled) {
				t.Fatalf("%s:%s: resumed: %s, %v; want cancelled", f.Step, f.Point, res.Status, err)
			}
			want := map[string]int{"Reserve:flight": 1, "Reserve:hotel": 1, "Unreserve:hotel": 1, "Unreserve:flight": 1}
			if f.Point == resume.FaultEffect {
				// A default step killed after its effect runs again: at
				// least once.
				want[strings.TrimSuffix(strings.Replace(f.Step, "[", ":", 1), "]")] = 2
			}
			if got := tripEffects(id); !sameCounts(got, want) {
				t.Errorf("%s:%s: executed %v, want %v", f.Step, f.Point, got, want)
			}
			keys, _ := keysBySeq(t, j, id)
			if got := strings.Join(keys, " "); got != "Reserve[flight] Reserve[hotel] go Unreserve[hotel] Unreserve[flight]" {
				t.Errorf("%s:%s: journal %s", f.Step, f.Point, got)
			}
		}
	})

	t.Run("a cancelled child fails its waiting parent with an error the parent's body tests", func(t *testing.T) {
		j := open(t)
		e := resume.NewEngine(j)
		id := newRunID(t)
		child := resume.ChildRunID(id, "Trip")
		if res, err := e.Start(ctx, id, TripParent, TripPlan{Wait: "await"}); res.Status != journal.StatusWaiting {
			t.Fatalf("TripParent: %s, %v", res.Status, err)
		}
		if err := e.Cancel(ctx, child, journal.CancelOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := e.Signal(ctx, child, "go", true); !errors.Is(err, journal.ErrRunFinished) {
			t.Errorf("signal to the cancelled child: %v, want ErrRunFinished", err)
		}
		if p, _, _ := j.LoadRun(ctx, id); p.Status != journal.StatusPending {
			t.Fatalf("the parent after its child's cancellation: %s, want pending (woken)", p.Status)
		}
		stop := startWorker(ctx, resume.NewEngine(j), resume.WorkerOptions{PollInterval: 20 * time.Millisecond})
		res, err := e.Wait(ctx, id)
		stop()
		var out string
		if err != nil || res.Decode(&out) != nil || out != "child cancelled" {
			t.Fatalf("the parent: %s %s, %v; want it to succeed, its body having tested ErrRunCancelled", res.Status, res.Output, err)
		}
		if c, _, _ := j.LoadRun(ctx, child); c.Status != journal.StatusCancelled {
			t.Errorf("the child: %s, want cancelled", c.Status)
		}
		wantUnwound(t, j, child, "go")
		if n := seen.count(id, "After"); n != 1 {
			t.Errorf("the parent's After executed %d times, want 1: its body continues", n)
		}
		// The child's outcome is journaled with its identity: a resumed
		// parent replays it and takes the same branch.
		_, rows := keysBySeq(t, j, id)
		if r := rows["Trip"]; r.Status != journal.StepFailed || !r.Final {
			t.Fatalf("the parent's Trip row: %+v, want final failed", r)
		}
		again := newRunID(t)
		resume.NewEngine(j).Start(ctx, again, TripParent, TripPlan{Wait: "await"})
		if err := e.Cancel(ctx, resume.ChildRunID(again, "Trip"), journal.CancelOptions{}); err != nil {
			t.Fatal(err)
		}
		if !resumeDying(j, again, resume.Fault{Step: "After", Point: resume.FaultBefore}) {
			t.Fatal("the parent did not crash before After")
		}
		res, err = resume.NewEngine(j).Resume(ctx, again)
		if err != nil || res.Decode(&out) != nil || out != "child cancelled" {
			t.Errorf("the parent resumed after its child's cancellation was journaled: %s %s, %v", res.Status, res.Output, err)
		}
	})

	t.Run("cancelling a parent reaches its child, which takes no signal and unwinds first", func(t *testing.T) {
		j := open(t)
		e := resume.NewEngine(j)
		id := newRunID(t)
		child := resume.ChildRunID(id, "Trip")
		e.Start(ctx, id, TripParent, TripPlan{Wait: "await"})
		if err := e.Cancel(ctx, id, journal.CancelOptions{}); err != nil {
			t.Fatal(err)
		}
		if c, _, _ := j.LoadRun(ctx, child); c.CancelRequested.IsZero() {
			t.Errorf("the child of a cancelled parent is not asked to stop: %s", c.Status)
		}
		if err := e.Signal(ctx, child, "go", true); !errors.Is(err, journal.ErrRunFinished) {
			t.Errorf("signal to the child of a cancelled parent: %v, want ErrRunFinished", err)
		}
		res, err := resume.NewEngine(j).Resume(ctx, id)
		if res.Status != journal.StatusCancelled || !errors.Is(err, resume.ErrRunCancelled) {
			t.Fatalf("the parent: %s, %v; want cancelled", res.Status, err)
		}
		if c, _, _ := j.LoadRun(ctx, child); c.Status != journal.StatusCancelled {
			t.Errorf("the child: %s, want cancelled", c.Status)
		}
		wantUnwound(t, j, child, "go")
		if seen.count(id, "After") != 0 || seen.count(id, "Release") != 1 {
			t.Errorf("the parent executed After %d times and Release %d times, want 0 and 1", seen.count(id, "After"), seen.count(id, "Release"))
		}
		keys, _ := keysBySeq(t, j, id)
		if got := strings.Join(keys, " "); got != "Trip After Release" {
			t.Errorf("the parent's journal: %s, want Trip After Release (After not executed)", got)
		}
	})

	t.Run("a kill at every point of a parent's and its child's unwinding resumes them correctly", func(t *testing.T) {
		for _, f := range []resume.Fault{
			{Step: "go", Point: resume.FaultAfter},
			{Step: "Unreserve[hotel]", Point: resume.FaultEffect}, {Step: "Unreserve[flight]", Point: resume.FaultAfter},
			{Step: "Trip", Point: resume.FaultBefore},
			{Step: "After", Point: resume.FaultBefore}, {Step: "After", Point: resume.FaultAfter},
			{Step: "Release", Point: resume.FaultBefore}, {Step: "Release", Point: resume.FaultEffect}, {Step: "Release", Point: resume.FaultAfter},
		} {
			j := open(t)
			id := newRunID(t)
			child := resume.ChildRunID(id, "Trip")
			resume.NewEngine(j).Start(ctx, id, TripParent, TripPlan{Wait: "await"})
			if err := resume.NewEngine(j).Cancel(ctx, id, journal.CancelOptions{}); err != nil {
				t.Fatal(err)
			}
			if !resumeDying(j, id, f) {
				t.Fatalf("%s:%s: the engine did not die", f.Step, f.Point)
			}
			res, err := resume.NewEngine(j).Resume(ctx, id)
			if res.Status != journal.StatusCancelled || !errors.Is(err, resume.ErrRunCancelled) {
				t.Fatalf("%s:%s: resumed: %s, %v; want cancelled", f.Step, f.Point, res.Status, err)
			}
			wantRelease := 1
			if f.Step == "Release" && f.Point == resume.FaultEffect {
				wantRelease = 2
			}
			if seen.count(id, "After") != 0 || seen.count(id, "Release") != wantRelease {
				t.Errorf("%s:%s: After %d, Release %d; want 0 and %d", f.Step, f.Point, seen.count(id, "After"), seen.count(id, "Release"), wantRelease)
			}
			undone := map[string]int{"Reserve:flight": 1, "Reserve:hotel": 1, "Unreserve:hotel": 1, "Unreserve:flight": 1}
			if f.Step == "Unreserve[hotel]" {
				undone["Unreserve:hotel"] = 2
			}
			if got := tripEffects(child); !sameCounts(got, undone) {
				t.Errorf("%s:%s: the child executed %v, want %v", f.Step, f.Point, got, undone)
			}
			if c, _, _ := j.LoadRun(ctx, child); c.Status != journal.StatusCancelled {
				t.Errorf("%s:%s: the child: %s", f.Step, f.Point, c.Status)
			}
		}
	})

	t.Run("a run past its deadline unwinds and fails with ErrDeadline; a child's deadline is its parent's", func(t *testing.T) {
		j := open(t)
		e := resume.NewEngine(j)
		// Sleeping past the deadline: the run wakes at its deadline.
		id := newRunID(t)
		tctx := resume.WithRunTimeout(ctx, 300*time.Millisecond)
		if res, err := e.Start(tctx, id, Trip, TripPlan{Wait: "sleep", Sleep: time.Hour}); res.Status != journal.StatusWaiting {
			t.Fatalf("%s, %v", res.Status, err)
		}
		r, _, _ := j.LoadRun(ctx, id)
		if d := r.Deadline.Sub(r.CreatedAt); d < 250*time.Millisecond || d > 2*time.Second || !r.WakeAt.Equal(r.Deadline) {
			t.Errorf("deadline %v after creation, wake-up %v; want 300ms, and a wake-up at the deadline", d, r.WakeAt)
		}
		stop := startWorker(ctx, resume.NewEngine(j), resume.WorkerOptions{PollInterval: 20 * time.Millisecond})
		res, err := e.Wait(ctx, id)
		if res.Status != journal.StatusFailed || !strings.Contains(res.Error, "deadline") {
			t.Fatalf("past its deadline: %s %q, %v; want failed", res.Status, res.Error, err)
		}
		wantUnwound(t, j, id, "resume.Sleep")
		// Running past it: the step's context ends at the deadline.
		slow := newRunID(t)
		res, _ = e.Start(tctx, slow, Trip, TripPlan{Wait: "slow"})
		if res.Status != journal.StatusFailed || !strings.Contains(res.Error, "deadline") {
			t.Fatalf("running past its deadline: %s %q; want failed", res.Status, res.Error)
		}
		wantUnwound(t, j, slow, "Slow")
		// A body that swallows the stop still fails.
		swallow := newRunID(t)
		res, _ = e.Start(resume.WithRunTimeout(ctx, 200*time.Millisecond), swallow, Trip, TripPlan{Wait: "sleep", Sleep: time.Hour, Swallow: true})
		if res.Status != journal.StatusWaiting {
			t.Fatalf("swallow: %s", res.Status)
		}
		if res, _ := e.Wait(ctx, swallow); res.Status != journal.StatusFailed {
			t.Errorf("a body that swallowed the stop: %s, want failed", res.Status)
		}
		// A child without a timeout of its own ends with its parent's
		// deadline, and the parent's body tests ErrDeadline.
		parent := newRunID(t)
		e.Start(tctx, parent, TripParent, TripPlan{Wait: "sleep", Sleep: time.Hour})
		p, _, _ := j.LoadRun(ctx, parent)
		c, _, _ := j.LoadRun(ctx, resume.ChildRunID(parent, "Trip"))
		if p.Deadline.IsZero() || !c.Deadline.Equal(p.Deadline) {
			t.Errorf("the child's deadline %v, the parent's %v: want the parent's", c.Deadline, p.Deadline)
		}
		res, err = e.Wait(ctx, parent)
		stop()
		if res.Status != journal.StatusFailed || !errors.Is(err, resume.ErrRunFailed) {
			t.Errorf("the parent past its deadline: %s %q, want failed (its own After refused)", res.Status, res.Error)
		}
		if seen.count(parent, "After") != 0 || seen.count(parent, "Release") != 1 {
			t.Errorf("the parent executed After %d, Release %d times; want 0, 1", seen.count(parent, "After"), seen.count(parent, "Release"))
		}
		wantUnwound(t, j, resume.ChildRunID(parent, "Trip"), "resume.Sleep")
	})

	t.Run("a run stopped by its deadline stops again on an engine whose clock says it is not past it", func(t *testing.T) {
		for _, c := range []struct {
			plan  TripPlan
			crash resume.Fault
		}{
			{TripPlan{Wait: "sleep", Sleep: time.Hour}, resume.Fault{Step: "Unreserve[hotel]", Point: resume.FaultBefore}},
			// A body that swallows the stop and would go on.
			{TripPlan{Wait: "sleep", Sleep: time.Hour, Swallow: true}, resume.Fault{Step: "resume.Sleep", Point: resume.FaultAfter}},
		} {
			j := open(t)
			id := newRunID(t)
			resume.NewEngine(j).Start(resume.WithRunTimeout(ctx, 200*time.Millisecond), id, Trip, c.plan)
			time.Sleep(300 * time.Millisecond)
			if !resumeDying(j, id, c.crash) {
				t.Fatalf("%s: the unwinding did not crash", c.crash.Step)
			}
			// An hour slow: by its clock the deadline is an hour away, and
			// the sleep's wake-up too.
			slow := resume.NewEngine(j, resume.WithClock(skewedClock{-time.Hour}))
			res, err := slow.Resume(ctx, id)
			if res.Status != journal.StatusFailed || !strings.Contains(res.Error, "deadline") {
				t.Fatalf("%s: resumed on a slow clock: %s %q, %v; want failed past its deadline", c.crash.Step, res.Status, res.Error, err)
			}
			if !c.plan.Swallow {
				wantUnwound(t, j, id, "resume.Sleep")
			}
			if n := seen.count(id, "Pay"); n != 0 {
				t.Errorf("%s: Pay executed %d times", c.crash.Step, n)
			}
		}
	})

	t.Run("cancelling a parent while its child runs stops both in their process", func(t *testing.T) {
		id := newRunID(t)
		child := resume.ChildRunID(id, "Trip")
		// The parent's own look at its cancellation comes only once its
		// child is cancelled: its body must not go on meanwhile.
		j := &cancelSeenLate{Journal: open(t), runID: id, after: child}
		e := resume.NewEngine(j, resume.WithLease(600*time.Millisecond))
		done := make(chan resume.Result, 1)
		go func() {
			res, _ := e.Start(ctx, id, TripParent, TripPlan{Wait: "slow"})
			done <- res
		}()
		for deadline := time.Now().Add(30 * time.Second); seen.count(child, "Slow") == 0; time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatal("the child did not reach Slow")
			}
		}
		if err := e.Cancel(ctx, id, journal.CancelOptions{Running: true}); err != nil {
			t.Fatal(err)
		}
		res := <-done
		if res.Status != journal.StatusCancelled {
			t.Fatalf("the parent: %s %q, want cancelled", res.Status, res.Error)
		}
		if c, _, _ := j.LoadRun(ctx, child); c.Status != journal.StatusCancelled {
			t.Errorf("the child: %s, want cancelled", c.Status)
		}
		wantUnwound(t, j, child, "Slow")
		if seen.count(id, "After") != 0 || seen.count(id, "Release") != 1 {
			t.Errorf("the parent executed After %d times and Release %d times, want 0 and 1", seen.count(id, "After"), seen.count(id, "Release"))
		}
	})

	t.Run("a workflow's timeout is journaled as a deadline from the run's creation", func(t *testing.T) {
		j := open(t)
		id := newRunID(t)
		tripDef.Timeout = time.Hour
		defer func() { tripDef.Timeout = 0 }()
		resume.NewEngine(j).Start(ctx, id, Trip, TripPlan{Wait: "await"})
		r, _, _ := j.LoadRun(ctx, id)
		if d := r.Deadline.Sub(r.CreatedAt); d < time.Hour-time.Second || d > time.Hour+time.Second {
			t.Errorf("deadline %v after creation, want an hour", d)
		}
		if r.WakeAt.IsZero() || !r.WakeAt.Equal(r.Deadline) {
			t.Errorf("an await without a timeout in a run with a deadline wakes at %v, want the deadline %v", r.WakeAt, r.Deadline)
		}
	})
}
