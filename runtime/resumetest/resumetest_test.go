package resumetest_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/resumegen/resumegen/runtime/resume"
	"github.com/resumegen/resumegen/runtime/resumetest"
	"github.com/resumegen/resumegen/runtime/resumetest/internal/fixture"
)

// fakeT records what the harness reports instead of failing the test, to
// prove that a test fails when it must. It embeds the real test as a
// testing.TB only (no Run method): the harness runs its cases inline.
type fakeT struct {
	testing.TB
	mu    sync.Mutex
	errs  []string
	logs  []string
	fatal bool
}

func (f *fakeT) Helper() {}

func (f *fakeT) Errorf(format string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.errs = append(f.errs, fmt.Sprintf(format, args...))
}

func (f *fakeT) Error(args ...any) { f.Errorf("%s", fmt.Sprint(args...)) }

func (f *fakeT) Fatalf(format string, args ...any) {
	f.Errorf(format, args...)
	f.mu.Lock()
	f.fatal = true
	f.mu.Unlock()
	runtime.Goexit()
}

func (f *fakeT) Fatal(args ...any) { f.Fatalf("%s", fmt.Sprint(args...)) }

func (f *fakeT) Logf(format string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.logs = append(f.logs, fmt.Sprintf(format, args...))
}

func (f *fakeT) Failed() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.errs) > 0
}

// observe runs body with a fake test on its own goroutine (Fatal ends it)
// and returns what was reported.
func observe(t *testing.T, body func(f *fakeT)) *fakeT {
	f := &fakeT{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		body(f)
	}()
	<-done
	return f
}

func world(testing.TB) context.Context { return fixture.WithWorld(context.Background()) }

func TestCrashEverywherePassesACorrectWorkflow(t *testing.T) {
	rep := resumetest.New(t, resumetest.WithContext(world)).CrashEverywhere(fixture.Pipeline, 4)
	var names, parked []string
	for _, c := range rep.Cases {
		names = append(names, c.Name)
		if c.Parked {
			parked = append(parked, c.Name)
		}
	}
	// Every step execution, the child run's included, at every point.
	want := "Fetch:before Fetch:effect Fetch:after Charge:before Charge:effect Charge:after Store:before Store:effect Store:after " +
		"Notify:before Notify:effect Notify:after Notify#2:before Notify#2:effect Notify#2:after " +
		"Double:before Double:effect Double:after Ship:before Ship:effect Ship:after Child:before Child:effect Child:after"
	if got := strings.Join(names, " "); got != want {
		t.Errorf("cases:\n%s\nwant:\n%s", got, want)
	}
	if strings.Join(parked, " ") != "Charge:effect Ship:effect" {
		t.Errorf("parked cases %v, want the once steps crashed at effect only, the child run's too", parked)
	}
}

func TestCrashEverywhereFailsABodyThatTakesAnotherPath(t *testing.T) {
	f := observe(t, func(f *fakeT) {
		resumetest.New(f, resumetest.WithContext(world)).CrashEverywhere(fixture.Drifting, 1)
	})
	// Resumed, the body skips Notify. Crashed before Notify, that loses
	// the notification; crashed later, Notify's journal row hides it, but
	// the body still took another path: every case reports it.
	all := strings.Join(f.errs, "\n")
	for _, p := range []string{"Notify:before", "Notify:effect", "Notify:after", "Fetch:before", "Fetch:effect", "Fetch:after"} {
		want := "crash at " + p + ": the resumed body took another path: after its start it reached step Fetch, the uninterrupted run step Notify"
		if !strings.Contains(all, want) {
			t.Errorf("CrashEverywhere on a drifting workflow did not report %q", want)
		}
	}
	lost := "crash at Notify:before: step Notify executed 0 times, the uninterrupted run once (a default step crashed at before executes as often)"
	if len(f.errs) != 7 || !strings.Contains(all, lost) || f.fatal {
		t.Errorf("reported (fatal %v):\n%s\nwant the 6 drifts and %q", f.fatal, all, lost)
	}
}

func TestCrashEverywhereFailsAnOutputThatDependsOnTheProcess(t *testing.T) {
	f := observe(t, func(f *fakeT) {
		resumetest.New(f, resumetest.WithContext(world)).CrashEverywhere(fixture.Counting, 1)
	})
	all := strings.Join(f.errs, "\n")
	want := "crash at Fetch:after: the resumed run's outcome differs:\n\tgot:  succeeded output 12\n\twant: succeeded output 11"
	if !strings.Contains(all, want) {
		t.Errorf("want %q; reported:\n%s", want, all)
	}
	if n := strings.Count(all, "outcome differs"); n != 3 {
		t.Errorf("%d cases reported a different outcome, want 3 (Fetch at each point):\n%s", n, all)
	}
}

func TestReplaceRunsTheDoubleUnderTheStepsPolicy(t *testing.T) {
	answer := func(ctx context.Context, v int) (int, error) { return v + 1, nil }
	h := resumetest.New(t, resumetest.Replace("Double", func(ctx context.Context, v int) (int, error) { return answer(ctx, v) }))
	res, err := h.Run("r-1", fixture.Pipeline, 4)
	if err != nil || string(res.Output) != `"v=40 sent=2 total=41"` {
		t.Fatalf("run: %s, %v; want the double's total", res.Output, err)
	}
	var doubled []string
	for _, x := range h.Executions() {
		if x.Double {
			doubled = append(doubled, fmt.Sprintf("%s %s attempt %d ok %v", x.RunID, x.StepKey, x.Attempt, x.OK))
		}
	}
	if got := strings.Join(doubled, "; "); got != "r-1/Child Double attempt 1 ok true" {
		t.Errorf("doubled executions: %s", got)
	}
	// The double's outcome is journaled like the step's: an error is
	// final (Double has no retry=), and the run fails with it.
	answer = func(context.Context, int) (int, error) { return 0, errors.New("scoring is down") }
	res, err = h.Run("r-2", fixture.Pipeline, 4)
	if !errors.Is(err, resume.ErrRunFailed) || !strings.Contains(res.Error, "scoring is down") {
		t.Fatalf("run: %+v, %v; want failed with the double's error", res, err)
	}
	if h.Count("r-2", "Fetch") != 1 || h.Count("r-2/Child", "Double") != 1 {
		t.Errorf("Fetch executed %d times, Double %d; want once each", h.Count("r-2", "Fetch"), h.Count("r-2/Child", "Double"))
	}
}

func TestReplaceRefusesWhatDoesNotFit(t *testing.T) {
	for _, tc := range []struct {
		name   string
		step   string
		double any
		want   string
	}{
		{"unknown step", "Fech", func(context.Context, int) (int, error) { return 0, nil },
			`Replace("Fech"): workflow github.com/resumegen/resumegen/runtime/resumetest/internal/fixture.Pipeline has no step named Fech; its steps: Fetch, Charge, Store, Notify, Child, Double, Ship`},
		{"wrong signature", "Fetch", func(context.Context, string) (int, error) { return 0, nil },
			`Replace("Fetch"): the double is a func(context.Context, string) (int, error), but step Fetch calls a func(context.Context, int) (int, error)`},
		{"not a function", "Fetch", 42, `Replace("Fetch"): the double is a int, not a function of the step's type func(context.Context, int) (int, error)`},
		{"a child workflow", "Child", func(context.Context, int) (int, error) { return 0, nil },
			`Replace("Child"): step Child runs the child workflow github.com/resumegen/resumegen/runtime/resumetest/internal/fixture.Child, which is not replaced; replace the child's steps`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ran := false
			f := observe(t, func(f *fakeT) {
				h := resumetest.New(f, resumetest.Replace(tc.step, tc.double))
				h.Run("r-1", fixture.Pipeline, 4)
				ran = true
			})
			if !f.fatal || ran || !strings.Contains(strings.Join(f.errs, "\n"), tc.want) {
				t.Errorf("fatal=%v, went on=%v, reported %q; want fatal with %q", f.fatal, ran, f.errs, tc.want)
			}
		})
	}
}

// TestFastForwardTimesOutAThreeDayApproval: the expense waits a day, then
// three days for an approval nobody gives; with the harness's clock the
// run times out and ends in milliseconds, and the clock says four days
// passed. Approved instead, it pays.
func TestFastForwardTimesOutAThreeDayApproval(t *testing.T) {
	h := resumetest.New(t)
	start := h.Clock().Now()
	res, err := h.Run("e-1", fixture.Expense, 50)
	if !errors.Is(err, resume.ErrRunWaiting) {
		t.Fatalf("run: %+v, %v; want it waiting (a day's sleep)", res, err)
	}
	began := time.Now()
	res, err = h.FastForward("e-1")
	if err != nil || string(res.Output) != `"timed out"` {
		t.Fatalf("fast-forward: %+v, %v; want the approval timed out", res, err)
	}
	if took := time.Since(began); took > 5*time.Second {
		t.Errorf("four days took %v", took)
	}
	if passed := h.Clock().Now().Sub(start); passed != 96*time.Hour {
		t.Errorf("the clock moved %v, want 96h: a day's sleep, then the 72h timeout", passed)
	}

	res, err = h.Run("e-2", fixture.Expense, 50)
	h.Clock().Advance(23 * time.Hour)
	if res, err = h.Resume("e-2"); !errors.Is(err, resume.ErrRunWaiting) {
		t.Fatalf("resumed an hour early: %+v, %v; want it still asleep", res, err)
	}
	h.Clock().Advance(time.Hour)
	if res, err = h.Resume("e-2"); !errors.Is(err, resume.ErrRunWaiting) || res.Status != resume.StatusWaiting {
		t.Fatalf("awake: %+v, %v; want it waiting for the approval", res, err)
	}
	res, err = h.Signal("e-2/Review", "approval", true)
	if err != nil {
		t.Fatalf("signal: %+v, %v", res, err)
	}
	if res, err = h.Resume("e-2"); err != nil || string(res.Output) != `"paid"` {
		t.Fatalf("approved: %+v, %v; want paid", res, err)
	}
}

// TestCrashEverywhereFollowsWaits crashes the expense at every step and at
// each of its waits' rows; the clock moves through the sleep and the
// timeout in each case.
func TestCrashEverywhereFollowsWaits(t *testing.T) {
	rep := resumetest.New(t).CrashEverywhere(fixture.Expense, 50)
	var names []string
	for _, c := range rep.Cases {
		names = append(names, c.Name)
	}
	want := "Notify:before Notify:effect Notify:after Double:before Double:effect Double:after resume.Sleep:after approval:after approval:settled Review:before Review:effect Review:after"
	if got := strings.Join(names, " "); got != want {
		t.Errorf("cases:\n%s\nwant:\n%s", got, want)
	}
}

// TestScheduleTicksByTheHarnessClock: one clock drives waits and
// schedules alike. A schedule on the harness's engine starts its hourly
// tick's run as soon as the harness's clock passes the tick, not an hour
// (nor the scheduler's one-minute re-check) of real time later, and the
// run's day-long sleep and three-day timeout pass on the same clock.
func TestScheduleTicksByTheHarnessClock(t *testing.T) {
	h := resumetest.New(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- h.Engine().Schedule(ctx, resume.Schedule{Name: "hourly", Every: time.Hour, Workflow: fixture.Expense,
			Args: func(time.Time) []any { return []any{50} }})
	}()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("schedule: %v", err)
		}
	}()
	j := h.Engine().Journal()
	within(t, "the schedule stored", func() bool { _, err := j.LoadSchedule(ctx, "hourly"); return err == nil })
	tick := h.Clock().Now().Truncate(time.Hour).Add(time.Hour)
	id := "hourly@" + tick.UTC().Format(time.RFC3339)
	time.Sleep(100 * time.Millisecond) // a scheduler on the system clock would still wait
	if _, _, err := j.LoadRun(ctx, id); !errors.Is(err, resume.ErrRunNotFound) {
		t.Fatalf("run %s before its tick: %v, want not found", id, err)
	}
	h.Clock().Advance(tick.Sub(h.Clock().Now()))
	within(t, "the tick's run "+id+" enqueued", func() bool { _, _, err := j.LoadRun(ctx, id); return err == nil })
	if res, err := h.Resume(id); !errors.Is(err, resume.ErrRunWaiting) {
		t.Fatalf("resume %s: %+v, %v; want it waiting (a day's sleep)", id, res, err)
	}
	if res, err := h.FastForward(id); err != nil || string(res.Output) != `"timed out"` {
		t.Fatalf("fast-forward %s: %+v, %v; want the approval timed out", id, res, err)
	}
}

// within fails t unless ok holds within 10 seconds.
func within(t *testing.T, what string, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !ok(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 10s", what)
		}
	}
}

// caseNames lists the names of rep's cases, space-separated.
func caseNames(rep *resumetest.Report) string {
	var names []string
	for _, c := range rep.Cases {
		names = append(names, c.Name)
	}
	return strings.Join(names, " ")
}

// executed reports whether step key of some run executed in rep's
// uninterrupted run.
func executed(rep *resumetest.Report, key string) bool {
	for _, x := range rep.Executions {
		if x.StepKey == key {
			return true
		}
	}
	return false
}

// TestCrashEverywhereSendsTheSignal crashes the expense, whose approval
// awaits in a child run, with the approval sent when the child first
// waits for it: every case, the crash after the await's waiting row and
// the one right after its row settled with the event included, ends as
// the uninterrupted run, which took the approved path (Charge) or the
// rejected one; none timed out.
func TestCrashEverywhereSendsTheSignal(t *testing.T) {
	for _, c := range []struct {
		approved bool
		want     string
	}{
		{true, "Notify:before Notify:effect Notify:after Double:before Double:effect Double:after resume.Sleep:after approval:after approval:settled Review:before Review:effect Review:after Charge:before Charge:effect Charge:after"},
		{false, "Notify:before Notify:effect Notify:after Double:before Double:effect Double:after resume.Sleep:after approval:after approval:settled Review:before Review:effect Review:after"},
	} {
		t.Run(fmt.Sprint("approved=", c.approved), func(t *testing.T) {
			start := time.Now()
			h := resumetest.New(t, resumetest.WithSignal("approval", c.approved))
			rep := h.CrashEverywhere(fixture.Expense, 50)
			if got := caseNames(rep); got != c.want {
				t.Errorf("cases:\n%s\nwant:\n%s", got, c.want)
			}
			if want := map[bool]string{true: `"paid"`, false: `"rejected"`}[c.approved]; string(rep.Result.Output) != want {
				t.Errorf("the uninterrupted run's output %s, want %s", rep.Result.Output, want)
			}
			if executed(rep, "Charge") != c.approved {
				t.Errorf("Charge executed: %v, want %v: the approval was not what the run received", !c.approved, c.approved)
			}
			t.Logf("%d cases in %v", len(rep.Cases), time.Since(start))
		})
	}
}

// TestCrashEverywhereSendsTheSignalToAnAwaitWithoutTimeout: a run that
// waits for ever receives the event, in every case.
func TestCrashEverywhereSendsTheSignalToAnAwaitWithoutTimeout(t *testing.T) {
	rep := resumetest.New(t, resumetest.WithSignal("go", 21)).CrashEverywhere(fixture.Hold, 1)
	want := "Notify:before Notify:effect Notify:after go:after go:settled Double:before Double:effect Double:after"
	if got := caseNames(rep); got != want {
		t.Errorf("cases:\n%s\nwant:\n%s", got, want)
	}
}

// TestCrashEverywhereWithSignalCatchesABugOnTheSignalsPath: Gate's
// output depends on how many times its body started, on its approved
// path only. Crash-tested without the approval it passes (it times out,
// and its timeout path is right); with it, every case fails, the crash
// right after the await settled included.
func TestCrashEverywhereWithSignalCatchesABugOnTheSignalsPath(t *testing.T) {
	f := observe(t, func(f *fakeT) {
		resumetest.New(f, resumetest.WithContext(world)).CrashEverywhere(fixture.Gate, 4)
	})
	if f.Failed() {
		t.Fatalf("without the approval (the timeout path) Gate failed: %q", f.errs)
	}
	var rep *resumetest.Report
	f = observe(t, func(f *fakeT) {
		rep = resumetest.New(f, resumetest.WithContext(world), resumetest.WithSignal("approval", true)).CrashEverywhere(fixture.Gate, 4)
	})
	if rep == nil {
		t.Fatalf("the harness gave up: %q", f.errs)
	}
	for _, c := range rep.Cases {
		differs := false
		for _, p := range c.Problems {
			differs = differs || strings.Contains(p, "outcome differs")
		}
		if !differs {
			t.Errorf("case %s: problems %q; want the outcome reported different", c.Name, c.Problems)
		}
	}
	if want := "Notify:before Notify:effect Notify:after approval:after approval:settled"; caseNames(rep) != want {
		t.Errorf("cases %s, want %s", caseNames(rep), want)
	}
	if !strings.Contains(strings.Join(f.errs, "\n"), "crash at approval:settled: the resumed run's outcome differs") {
		t.Errorf("the crash after the await settled was not reported: %q", f.errs)
	}
}

// TestWithSignalRefusesAPayloadOfAnotherType: an event the await cannot
// decode is refused when sent, with the run and the event named.
func TestWithSignalRefusesAPayloadOfAnotherType(t *testing.T) {
	f := observe(t, func(f *fakeT) {
		resumetest.New(f, resumetest.WithSignal("approval", "yes")).CrashEverywhere(fixture.Expense, 50)
	})
	if !f.fatal || !strings.Contains(strings.Join(f.errs, "\n"), "send event approval (WithSignal)") {
		t.Errorf("a string approval to an Await[bool]: fatal %v, %q; want it refused, naming the event", f.fatal, f.errs)
	}
}

// TestCrashEverywhereDeadProcessExecutesNothing crashes a workflow with
// deferred steps. The simulated crash unwinds the body's goroutine, which
// runs its deferred calls; a killed process runs none, so the crashed
// engine must execute no deferred step's code (a default step would
// otherwise count one execution more) and retry none of their journal
// writes (a once step's in_flight row would otherwise be retried until
// the lease ran out).
func TestCrashEverywhereDeadProcessExecutesNothing(t *testing.T) {
	f := observe(t, func(f *fakeT) {
		resumetest.New(f).CrashEverywhere(fixture.Saga, 3)
	})
	if f.fatal || len(f.errs) > 0 {
		t.Fatalf("CrashEverywhere reported a correct workflow with deferred steps:\n%s", strings.Join(f.errs, "\n"))
	}
}

// TestCrashEverywhereResolvesPointeesAndResults crashes once steps that
// journal a pointee and two results at their effect: each parks the run,
// and the harness resolves it with everything the step journals, so the
// run finishes as the uninterrupted one did.
func TestCrashEverywhereResolvesPointeesAndResults(t *testing.T) {
	f := observe(t, func(f *fakeT) {
		rep := resumetest.New(f).CrashEverywhere(fixture.Checkout, 3)
		var parked []string
		for _, c := range rep.Cases {
			if c.Parked {
				parked = append(parked, c.Name)
			}
		}
		if got, want := strings.Join(parked, " "), "Price:effect Book:effect"; got != want {
			f.Errorf("parked cases %q, want %q", got, want)
		}
	})
	if f.fatal || len(f.errs) > 0 {
		t.Fatalf("CrashEverywhere reported a correct workflow:\n%s", strings.Join(f.errs, "\n"))
	}
	for _, l := range f.logs {
		if strings.Contains(l, "not resolved") {
			t.Errorf("a parked step was left unresolved: %s", l)
		}
	}
}
