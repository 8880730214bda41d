package journaltest

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/resumegen/resumegen/runtime/journal"
	"github.com/resumegen/resumegen/runtime/resume"
)

// The waiting workflows: what resumegen would generate for bodies that
// call resume.Sleep and resume.Await (issue 13).

// Nap is a default step; Naps counts its executions by run.
func Nap(ctx context.Context, tag string) (string, error) {
	seen.record(ctx, "Nap:"+tag)
	return tag, nil
}

// SleepFlow executes Nap "a", sleeps for d, executes Nap "b".
func SleepFlow(ctx context.Context, d time.Duration) (string, error) {
	a, err := Nap(ctx, "a")
	if err != nil {
		return "", err
	}
	if err := resume.Sleep(ctx, d); err != nil {
		return "", err
	}
	b, err := Nap(ctx, "b")
	return a + b, err
}

// Approval is what the approval event carries.
type Approval struct {
	Approved bool
	By       string
}

// Gate steers ApproveFlow: its await's timeout (0: none), and whether it
// awaits a second time.
type Gate struct {
	TimeoutMS int
	Twice     bool
}

// ApproveFlow awaits "approval" for at most g's timeout, a second time
// when asked, and then executes Nap "after", so that a kill after the
// await can be simulated there. A timeout is an outcome: "timeout".
func ApproveFlow(ctx context.Context, g Gate) (string, error) {
	verdict, err := awaitVerdict(ctx, g.TimeoutMS)
	if err != nil {
		return "", err
	}
	if g.Twice {
		second, err := awaitVerdict(ctx, g.TimeoutMS)
		if err != nil {
			return "", err
		}
		verdict += "," + second
	}
	if _, err := Nap(ctx, "after"); err != nil {
		return "", err
	}
	return verdict, nil
}

func awaitVerdict(ctx context.Context, timeoutMS int) (string, error) {
	a, err := resume.Await[Approval](ctx, "approval", time.Duration(timeoutMS)*time.Millisecond)
	switch {
	case errors.Is(err, resume.ErrTimeout):
		return "timeout", nil
	case err != nil:
		return "", err
	case a.Approved:
		return "approved by " + a.By, nil
	}
	return "rejected by " + a.By, nil
}

// NapParent runs SleepFlow as a child run.
func NapParent(ctx context.Context, d time.Duration) (string, error) {
	return SleepFlow(ctx, d)
}

const waitPkg = "github.com/resumegen/resumegen/runtime/journaltest"

var napStep = resume.StepDef{Name: "Nap", Callee: waitPkg + ".Nap", Signature: "func(context.Context, string) (string, error)", JSON: "string"}

var sleepFlowSteps = []resume.StepDef{
	napStep,
	{Name: "resume.Sleep", Callee: "github.com/resumegen/resumegen/runtime/resume.Sleep", Signature: "func(context.Context, time.Duration) error"},
}

var sleepFlowDef = &resume.WorkflowDef{
	Package: waitPkg, Name: "SleepFlow", Version: "sleep-v1", Steps: sleepFlowSteps,
	Run: func(ctx context.Context, args resume.Args) (any, error) {
		var d time.Duration
		if err := args.Decode(&d); err != nil {
			return nil, err
		}
		return sleepFlowBody(ctx, d)
	},
}

func sleepFlowBody(ctx context.Context, d time.Duration) (string, error) {
	a, err := napCall(ctx, "a")
	if err != nil {
		return "", err
	}
	if err := resume.Sleep(ctx, d); err != nil {
		return "", err
	}
	b, err := napCall(ctx, "b")
	return a + b, err
}

func napCall(ctx context.Context, tag string) (string, error) {
	return resume.Call(ctx, &napStep, func(ctx context.Context) (string, error) { return Nap(ctx, tag) })
}

var approveSteps = []resume.StepDef{
	{Name: "approval", Callee: "github.com/resumegen/resumegen/runtime/resume.Await",
		Signature: "func(context.Context, string, time.Duration) (" + waitPkg + ".Approval, error)",
		JSON:      "Approval", Shape: []string{"result Approval: Approved bool", "result Approval: By string"}},
	napStep,
}

var approveDef = &resume.WorkflowDef{
	Package: waitPkg, Name: "ApproveFlow", Version: "approve-v1", Steps: approveSteps,
	Run: func(ctx context.Context, args resume.Args) (any, error) {
		var g Gate
		if err := args.Decode(&g); err != nil {
			return nil, err
		}
		return approveBody(ctx, g)
	},
}

func approveBody(ctx context.Context, g Gate) (string, error) {
	verdict, err := awaitVerdict(ctx, g.TimeoutMS)
	if err != nil {
		return "", err
	}
	if g.Twice {
		second, err := awaitVerdict(ctx, g.TimeoutMS)
		if err != nil {
			return "", err
		}
		verdict += "," + second
	}
	if _, err := napCall(ctx, "after"); err != nil {
		return "", err
	}
	return verdict, nil
}

var napParentSteps = []resume.StepDef{
	{Name: "SleepFlow", Callee: waitPkg + ".SleepFlow", Signature: "func(context.Context, time.Duration) (string, error)", Child: true, JSON: "string"},
}

var napParentDef = &resume.WorkflowDef{
	Package: waitPkg, Name: "NapParent", Version: "napparent-v1", Steps: napParentSteps,
	Run: func(ctx context.Context, args resume.Args) (any, error) {
		var d time.Duration
		if err := args.Decode(&d); err != nil {
			return nil, err
		}
		return resume.CallChild(ctx, &napParentSteps[0], SleepFlow, func(ctx context.Context) (string, error) { return SleepFlow(ctx, d) }, d)
	},
}

// GateParent runs ApproveFlow as a child run.
func GateParent(ctx context.Context, g Gate) (string, error) {
	return ApproveFlow(ctx, g)
}

var gateParentSteps = []resume.StepDef{
	{Name: "ApproveFlow", Callee: waitPkg + ".ApproveFlow", Signature: "func(context.Context, " + waitPkg + ".Gate) (string, error)", Child: true, JSON: "string"},
}

var gateParentDef = &resume.WorkflowDef{
	Package: waitPkg, Name: "GateParent", Version: "gateparent-v1", Steps: gateParentSteps,
	Run: func(ctx context.Context, args resume.Args) (any, error) {
		var g Gate
		if err := args.Decode(&g); err != nil {
			return nil, err
		}
		return resume.CallChild(ctx, &gateParentSteps[0], ApproveFlow, func(ctx context.Context) (string, error) { return ApproveFlow(ctx, g) }, g)
	},
}

func init() {
	resume.Register(GateParent, gateParentDef)
	resume.Register(SleepFlow, sleepFlowDef)
	resume.Register(ApproveFlow, approveDef)
	resume.Register(NapParent, napParentDef)
}

// runWait tests suspension, sleeps, awaits, signals and timeouts.
func runWait(t *testing.T, h Harness) {
	ctx := context.Background()
	open := func(t *testing.T) journal.Journal { return h.open(t) }
	engine := func(j journal.Journal, opts ...resume.Option) *resume.Engine {
		return resume.NewEngine(j, append([]resume.Option{resume.WithLease(2 * time.Second)}, opts...)...)
	}
	load := func(t *testing.T, j journal.Journal, runID string) journal.RunRecord {
		t.Helper()
		r, _, err := j.LoadRun(ctx, runID)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}

	t.Run("a sleeping run waits without a lease and survives its process", func(t *testing.T) {
		j := open(t)
		runID := newRunID(t)
		const d = 400 * time.Millisecond
		started := time.Now()
		res, err := engine(j).Start(ctx, runID, SleepFlow, d)
		if !errors.Is(err, resume.ErrRunWaiting) || res.Status != resume.StatusWaiting {
			t.Fatalf("Start = %+v, %v; want the run waiting", res, err)
		}
		r := load(t, j, runID)
		if r.Status != journal.StatusWaiting || r.WaitKind != journal.WaitSleep || r.LeaseOwner != "" || !r.LeaseUntil.IsZero() {
			t.Fatalf("stored %s/%s, lease %q until %v; want waiting for a sleep, no lease", r.Status, r.WaitKind, r.LeaseOwner, r.LeaseUntil)
		}
		if r.WakeAt.Before(started.Add(d-50*time.Millisecond)) || r.WakeAt.After(time.Now().Add(d)) {
			t.Fatalf("wake_at %v, want about %v", r.WakeAt, started.Add(d))
		}
		// Not due: no claim takes it, and the journal says when it will be.
		if _, _, err := j.ClaimNext(ctx, journal.ClaimNextRequest{Owner: "w", Lease: time.Second, Workflows: []string{r.Workflow}}); !errors.Is(err, journal.ErrNoRunReady) {
			t.Fatalf("ClaimNext of a sleeping run before it is due: %v", err)
		}
		if wait, ok, err := j.NextWake(ctx, []string{r.Workflow}); err != nil || !ok || wait <= 0 || wait > d {
			t.Fatalf("NextWake = %v, %v, %v; want up to %v", wait, ok, err, d)
		}
		// Another process resumes it before it is due: the clock is not
		// restarted, and it waits again until the same time.
		res, err = engine(j).Resume(ctx, runID)
		if !errors.Is(err, resume.ErrRunWaiting) || !res.WakeAt.Equal(r.WakeAt) {
			t.Fatalf("early Resume = %+v, %v; want waiting until %v", res, err, r.WakeAt)
		}
		// A worker picks it up when it is due, woken by the journal's next
		// wake-up rather than its (long) poll interval.
		e := engine(j)
		stop := startWorker(ctx, e, resume.WorkerOptions{PollInterval: 5 * time.Second})
		defer stop()
		wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		res, err = e.Wait(wctx, runID)
		if err != nil || res.Status != resume.StatusSucceeded || string(res.Output) != `"ab"` {
			t.Fatalf("Wait = %+v, %v", res, err)
		}
		if late := time.Since(r.WakeAt); time.Now().Before(r.WakeAt) || late > 3*time.Second {
			t.Fatalf("finished %v after its wake-up time", late)
		} else {
			t.Logf("finished %v after its wake-up time (poll interval 5s); Wait returned %v after it", load(t, j, runID).UpdatedAt.Sub(r.WakeAt), late)
		}
		if a, b := seen.count(runID, "Nap:a"), seen.count(runID, "Nap:b"); a != 1 || b != 1 {
			t.Fatalf("Nap a executed %d times, b %d; want once each", a, b)
		}
	})

	t.Run("a run killed just after waking resumes past its sleep", func(t *testing.T) {
		j := open(t)
		runID := newRunID(t)
		// A sleep long enough that a loaded machine still suspends the run
		// before it is due (the start journals a step first).
		const nap = 400 * time.Millisecond
		if _, err := engine(j).Start(ctx, runID, SleepFlow, nap); !errors.Is(err, resume.ErrRunWaiting) {
			t.Fatalf("Start = %v, want the run waiting for its %v sleep", err, nap)
		}
		time.Sleep(nap + 10*time.Millisecond)
		// The run wakes, and its process dies before the step after the
		// sleep journals.
		if !startDying(j, runID, SleepFlow, nap, resume.Fault{Step: "Nap#2", Point: resume.FaultEffect}) {
			t.Fatal("the fault did not strike")
		}
		res, err := engine(j).Resume(ctx, runID)
		if err != nil || string(res.Output) != `"ab"` {
			t.Fatalf("Resume = %+v, %v", res, err)
		}
		if a, b := seen.count(runID, "Nap:a"), seen.count(runID, "Nap:b"); a != 1 || b != 2 {
			t.Fatalf("Nap a executed %d times, b %d; want 1 and 2 (b died once before journaling)", a, b)
		}
	})

	t.Run("a signal sent while no process runs wakes the awaiting run", func(t *testing.T) {
		j := open(t)
		runID := newRunID(t)
		if _, err := engine(j).Start(ctx, runID, ApproveFlow, Gate{}); !errors.Is(err, resume.ErrRunWaiting) {
			t.Fatal(err)
		}
		r := load(t, j, runID)
		if r.Status != journal.StatusWaiting || r.WaitKind != journal.WaitSignal || r.WaitName != "approval" || !r.WakeAt.IsZero() {
			t.Fatalf("stored %s %s %q until %v; want waiting for approval for ever", r.Status, r.WaitKind, r.WaitName, r.WakeAt)
		}
		if err := engine(j).Signal(ctx, runID, "approval", Approval{Approved: true, By: "ann"}); err != nil {
			t.Fatal(err)
		}
		if r := load(t, j, runID); r.Status != journal.StatusPending {
			t.Fatalf("after the signal the run is %s, want pending", r.Status)
		}
		res, err := engine(j).Resume(ctx, runID)
		if err != nil || string(res.Output) != `"approved by ann"` {
			t.Fatalf("Resume = %+v, %v", res, err)
		}
		sigs, err := j.ListSignals(ctx, runID)
		if err != nil || len(sigs) != 1 || sigs[0].ConsumedKey != "approval" {
			t.Fatalf("signals %+v, %v; want one, consumed by approval", sigs, err)
		}
	})

	t.Run("a signal sent before the await is kept for it, a second for the next", func(t *testing.T) {
		j := open(t)
		e := engine(j)
		runID := newRunID(t)
		if _, err := e.Enqueue(ctx, runID, ApproveFlow, Gate{Twice: true}); err != nil {
			t.Fatal(err)
		}
		for _, by := range []string{"ann", "bob", "cy"} {
			if err := e.Signal(ctx, runID, "approval", Approval{Approved: by != "bob", By: by}); err != nil {
				t.Fatal(err)
			}
		}
		res, err := e.Resume(ctx, runID)
		if err != nil || string(res.Output) != `"approved by ann,rejected by bob"` {
			t.Fatalf("Resume = %+v, %v; want the first two signals in order", res, err)
		}
		sigs, _ := j.ListSignals(ctx, runID)
		if len(sigs) != 3 || sigs[0].ConsumedKey != "approval" || sigs[1].ConsumedKey != "approval#2" || sigs[2].ConsumedKey != "" {
			t.Fatalf("signals %+v: want ann to approval, bob to approval#2, cy kept", sigs)
		}
	})

	t.Run("a timeout is journaled and replays as ErrTimeout", func(t *testing.T) {
		j := open(t)
		runID := newRunID(t)
		if _, err := engine(j).Start(ctx, runID, ApproveFlow, Gate{TimeoutMS: 100}); !errors.Is(err, resume.ErrRunWaiting) {
			t.Fatal(err)
		}
		time.Sleep(120 * time.Millisecond)
		// The process that sees the timeout dies after the await's body
		// branch, before Nap journals: the replay must take the same branch.
		if !startDying(j, runID, ApproveFlow, Gate{TimeoutMS: 100}, resume.Fault{Step: "Nap", Point: resume.FaultEffect}) {
			t.Fatal("the fault did not strike")
		}
		// A signal sent after the timeout changes nothing.
		if err := engine(j).Signal(ctx, runID, "approval", Approval{Approved: true, By: "late"}); err != nil {
			t.Fatal(err)
		}
		res, err := engine(j).Resume(ctx, runID)
		if err != nil || string(res.Output) != `"timeout"` {
			t.Fatalf("Resume = %+v, %v; want the timeout replayed", res, err)
		}
		_, steps, _ := j.LoadRun(ctx, runID)
		for _, s := range steps {
			if s.StepKey == "approval" && (s.Status != journal.StepFailed || !s.Final || s.Error != resume.ErrTimeout.Error()) {
				t.Fatalf("the await's row is %+v; want a final failure with ErrTimeout", s)
			}
		}
	})

	t.Run("signals to finished or unknown runs and payloads of another shape are refused", func(t *testing.T) {
		j := open(t)
		e := engine(j)
		runID := newRunID(t)
		if _, err := e.Start(ctx, runID, ApproveFlow, Gate{}); !errors.Is(err, resume.ErrRunWaiting) {
			t.Fatal(err)
		}
		err := e.Signal(ctx, runID, "approval", json.RawMessage(`{"Approved":"yes","By":"x"}`))
		if err == nil || !strings.Contains(err.Error(), "Approved") {
			t.Fatalf("a payload of another shape: %v; want it refused, naming the field", err)
		}
		if err := e.Signal(ctx, runID, "approval", Approval{Approved: true, By: "x"}); err != nil {
			t.Fatal(err)
		}
		if _, err := e.Resume(ctx, runID); err != nil {
			t.Fatal(err)
		}
		if err := e.Signal(ctx, runID, "approval", Approval{}); !errors.Is(err, resume.ErrRunFinished) {
			t.Fatalf("signal to a finished run: %v, want ErrRunFinished", err)
		}
		if err := e.Signal(ctx, "no-such-run", "approval", Approval{}); !errors.Is(err, resume.ErrRunNotFound) {
			t.Fatalf("signal to an unknown run: %v, want ErrRunNotFound", err)
		}
	})

	t.Run("a signal racing the timeout delivers exactly one outcome", func(t *testing.T) {
		j := open(t)
		e := engine(j)
		for i := 0; i < 8; i++ {
			runID := newRunID(t)
			res, err := e.Start(ctx, runID, ApproveFlow, Gate{TimeoutMS: 30})
			if err == nil && string(res.Output) == `"timeout"` {
				continue // a slow machine: the timeout passed in the first entry
			}
			if !errors.Is(err, resume.ErrRunWaiting) {
				t.Fatal(err)
			}
			time.Sleep(25 * time.Millisecond)
			var wg sync.WaitGroup
			wg.Add(2)
			go func() {
				defer wg.Done()
				time.Sleep(time.Duration(i) * time.Millisecond)
				if err := e.Signal(ctx, runID, "approval", Approval{Approved: true, By: "racer"}); err != nil && !errors.Is(err, resume.ErrRunFinished) {
					t.Error(err)
				}
			}()
			go func() {
				defer wg.Done()
				time.Sleep(5 * time.Millisecond)
				_, _ = e.Resume(ctx, runID) // busy, waiting or done: checked below
			}()
			wg.Wait()
			res, err = e.Resume(ctx, runID)
			for errors.Is(err, resume.ErrRunWaiting) || errors.Is(err, resume.ErrRunBusy) {
				time.Sleep(10 * time.Millisecond)
				res, err = e.Resume(ctx, runID)
			}
			if err != nil {
				t.Fatal(err)
			}
			sigs, _ := j.ListSignals(ctx, runID)
			consumed := len(sigs) == 1 && sigs[0].ConsumedKey == "approval"
			if got := string(res.Output); got == `"approved by racer"` != consumed || got != `"timeout"` && got != `"approved by racer"` {
				t.Fatalf("outcome %s with signals %+v: the await received one, and only that one", got, sigs)
			}
		}
	})

	t.Run("a run enqueued for later waits until then", func(t *testing.T) {
		j := open(t)
		e := engine(j)
		runID := newRunID(t)
		at := time.Now().Add(300 * time.Millisecond)
		res, err := e.EnqueueAt(ctx, at, runID, SleepFlow, time.Duration(0))
		if err != nil || res.Status != resume.StatusWaiting || res.WaitKind != journal.WaitStart {
			t.Fatalf("EnqueueAt = %+v, %v", res, err)
		}
		if _, _, err := j.ClaimNext(ctx, journal.ClaimNextRequest{Owner: "w", Lease: time.Second, Workflows: []string{res.Workflow}}); !errors.Is(err, journal.ErrNoRunReady) {
			t.Fatalf("ClaimNext before the start time: %v", err)
		}
		stop := startWorker(ctx, e, resume.WorkerOptions{PollInterval: 5 * time.Second})
		defer stop()
		wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		if res, err := e.Wait(wctx, runID); err != nil || string(res.Output) != `"ab"` || time.Now().Before(at) {
			t.Fatalf("Wait = %+v, %v", res, err)
		}
	})

	t.Run("a parent waits with its sleeping child run", func(t *testing.T) {
		j := open(t)
		runID := newRunID(t)
		res, err := engine(j).Start(ctx, runID, NapParent, 150*time.Millisecond)
		child := resume.ChildRunID(runID, "SleepFlow")
		if !errors.Is(err, resume.ErrRunWaiting) || res.WaitKind != journal.WaitChild || res.WaitName != child {
			t.Fatalf("Start = %+v, %v; want waiting for the child", res, err)
		}
		if c := load(t, j, child); c.Status != journal.StatusWaiting || c.WaitKind != journal.WaitSleep || !c.WakeAt.Equal(res.WakeAt) {
			t.Fatalf("child %s %s until %v; parent until %v", c.Status, c.WaitKind, c.WakeAt, res.WakeAt)
		}
		e := engine(j)
		stop := startWorker(ctx, e, resume.WorkerOptions{PollInterval: 5 * time.Second})
		defer stop()
		wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		if res, err := e.Wait(wctx, runID); err != nil || string(res.Output) != `"ab"` {
			t.Fatalf("Wait = %+v, %v", res, err)
		}
		if a, b := seen.count(child, "Nap:a"), seen.count(child, "Nap:b"); a != 1 || b != 1 {
			t.Fatalf("the child's Nap a executed %d times, b %d", a, b)
		}
	})

	t.Run("a signal sent while the run is about to suspend is not lost", func(t *testing.T) {
		j := open(t)
		runID := newRunID(t)
		if _, err := engine(j).Start(ctx, runID, ApproveFlow, Gate{}); !errors.Is(err, resume.ErrRunWaiting) {
			t.Fatal(err)
		}
		// A process enters the run; the signal arrives while it runs (the
		// run is not waiting: the signal is kept, nobody is woken), and the
		// process then suspends the run for that very event.
		r, _, err := j.Claim(ctx, journal.ClaimRequest{RunID: runID, Owner: "p", Lease: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		if err := engine(j).Signal(ctx, runID, "approval", Approval{Approved: true, By: "quick"}); err != nil {
			t.Fatal(err)
		}
		r.Status, r.WaitKind, r.WaitName = journal.StatusWaiting, journal.WaitSignal, "approval"
		if err := j.FinishRun(ctx, journal.Lease{RunID: runID, Owner: "p", Epoch: r.Epoch}, r); err != nil {
			t.Fatal(err)
		}
		if got := load(t, j, runID); got.Status != journal.StatusPending || got.WaitKind != "" {
			t.Fatalf("the run suspended with a signal kept for it is %s (%s); want pending", got.Status, got.WaitKind)
		}
		if res, err := engine(j).Resume(ctx, runID); err != nil || string(res.Output) != `"approved by quick"` {
			t.Fatalf("Resume = %+v, %v", res, err)
		}
	})

	t.Run("a sealed journal seals signal payloads", func(t *testing.T) {
		j := open(t)
		codec, err := resume.NewAESGCMCodec(make([]byte, 32))
		if err != nil {
			t.Fatal(err)
		}
		e := engine(j, resume.WithCodec(codec))
		runID := newRunID(t)
		if _, err := e.Start(ctx, runID, ApproveFlow, Gate{}); !errors.Is(err, resume.ErrRunWaiting) {
			t.Fatal(err)
		}
		if err := e.Signal(ctx, runID, "approval", Approval{Approved: true, By: "secret agent"}); err != nil {
			t.Fatal(err)
		}
		sigs, err := j.ListSignals(ctx, runID)
		if err != nil || len(sigs) != 1 || !journal.IsSealed(sigs[0].Payload) {
			t.Fatalf("stored signals %+v, %v; want the payload sealed", sigs, err)
		}
		if res, err := e.Resume(ctx, runID); err != nil || string(res.Output) != `"approved by secret agent"` {
			t.Fatalf("Resume = %+v, %v", res, err)
		}
		_, steps, _ := j.LoadRun(ctx, runID)
		for _, s := range steps {
			if s.StepKey == "approval" && !journal.IsSealed(s.Result) {
				t.Fatalf("the await's result is stored in the clear: %s", s.Result)
			}
		}
	})

	t.Run("a signal to an awaiting child run wakes its parent", func(t *testing.T) {
		j := open(t)
		runID := newRunID(t)
		child := resume.ChildRunID(runID, "ApproveFlow")
		res, err := engine(j).Start(ctx, runID, GateParent, Gate{})
		if !errors.Is(err, resume.ErrRunWaiting) || res.WaitKind != journal.WaitChild || res.WaitName != child {
			t.Fatalf("Start = %+v, %v; want waiting for the child", res, err)
		}
		if err := engine(j).Signal(ctx, child, "approval", Approval{Approved: true, By: "kid"}); err != nil {
			t.Fatal(err)
		}
		if p, c := load(t, j, runID), load(t, j, child); p.Status != journal.StatusPending || c.Status != journal.StatusPending {
			t.Fatalf("after the signal the parent is %s and the child %s; want both pending", p.Status, c.Status)
		}
		e := engine(j)
		stop := startWorker(ctx, e, resume.WorkerOptions{PollInterval: 5 * time.Second})
		defer stop()
		wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		if res, err := e.Wait(wctx, runID); err != nil || string(res.Output) != `"approved by kid"` {
			t.Fatalf("Wait = %+v, %v", res, err)
		}
	})

	t.Run("outside a workflow Sleep is a plain sleep and Await refuses", func(t *testing.T) {
		start := time.Now()
		if err := resume.Sleep(ctx, 20*time.Millisecond); err != nil || time.Since(start) < 20*time.Millisecond {
			t.Fatalf("Sleep = %v after %v", err, time.Since(start))
		}
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		if err := resume.Sleep(cctx, time.Hour); !errors.Is(err, context.Canceled) {
			t.Fatalf("Sleep with an ended context = %v", err)
		}
		if _, err := resume.Await[Approval](ctx, "approval", time.Second); err == nil {
			t.Fatal("Await outside a run returned no error")
		}
	})
}
