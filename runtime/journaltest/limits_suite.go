package journaltest

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/resumegen/resumegen/runtime/journal"
	"github.com/resumegen/resumegen/runtime/resume"
)

// SizePlan steers Sized, the workflow of the limits' cases: the key= value
// of its Tag step, the size of Blob's result and of the run's output, the
// key of its child run (none when ""), and padding for its input.
type SizePlan struct {
	Key      string
	Result   int
	Output   int
	ChildKey string
	Pad      string
}

// Tag is a keyed step; Blob returns n bytes of text.
func Tag(ctx context.Context, key string) (string, error) { seen.record(ctx, "Tag"); return key, nil }

// Blob returns a string of n bytes.
func Blob(ctx context.Context, n int) (string, error) {
	seen.record(ctx, "Blob")
	return strings.Repeat("b", n), nil
}

// Sized executes Tag[p.Key], Blob when p.Result > 0, SleepFlow as a child
// run keyed p.ChildKey when set, and returns p.Output bytes.
func Sized(ctx context.Context, p SizePlan) (string, error) { return "", nil }

var sizedSteps = []resume.StepDef{
	{Name: "Tag", Callee: waitPkg + ".Tag", Signature: "func(context.Context, string) (string, error)", JSON: "string", Key: "p.Key"},
	{Name: "Blob", Callee: waitPkg + ".Blob", Signature: "func(context.Context, int) (string, error)", JSON: "string"},
	{Name: "SleepFlow", Callee: waitPkg + ".SleepFlow", Signature: "func(context.Context, time.Duration) (string, error)", Child: true, JSON: "string", Key: "p.ChildKey"},
}

var sizedDef = &resume.WorkflowDef{
	Package: waitPkg, Name: "Sized", Version: "sized-v1", Steps: sizedSteps,
	Run: func(ctx context.Context, args resume.Args) (any, error) {
		var p SizePlan
		if err := args.Decode(&p); err != nil {
			return nil, err
		}
		if _, err := resume.CallKey(ctx, &sizedSteps[0], p.Key, func(ctx context.Context) (string, error) { return Tag(ctx, p.Key) }); err != nil {
			return nil, err
		}
		if p.Result > 0 {
			if _, err := resume.Call(ctx, &sizedSteps[1], func(ctx context.Context) (string, error) { return Blob(ctx, p.Result) }); err != nil {
				return nil, err
			}
		}
		if p.ChildKey != "" {
			if _, err := resume.CallChildKey(ctx, &sizedSteps[2], p.ChildKey, SleepFlow,
				func(ctx context.Context) (string, error) { return SleepFlow(ctx, 0) }, time.Duration(0)); err != nil {
				return nil, err
			}
		}
		return strings.Repeat("o", p.Output), nil
	},
}

func init() { resume.Register(Sized, sizedDef) }

// wantLimit fails t unless err is a journal limit's refusal whose text
// holds each of parts.
func wantLimit(t *testing.T, what string, err error, parts ...string) {
	t.Helper()
	if !errors.Is(err, journal.ErrLimit) {
		t.Fatalf("%s: %v, want a refusal matching journal.ErrLimit", what, err)
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Errorf("%s: the error does not say %q: %v", what, p, err)
		}
	}
	if len(err.Error()) > 600 {
		t.Errorf("%s: the error is %d bytes long: it repeats the value instead of naming it", what, len(err.Error()))
	}
}

// runLimits proves the journal's limits (journal.MaxRunIDBytes and the
// others) are checked where input enters, by the engine and by the
// journal itself, with an error naming the limit and the value's size,
// and that a value at the limit is stored and finishes.
func runLimits(t *testing.T, open func(*testing.T) journal.Journal) {
	ctx := context.Background()
	over := strings.Repeat("x", 8100) // the run id
	bigJSON := func(n int) json.RawMessage { b, _ := json.Marshal(strings.Repeat("p", n)); return b }

	t.Run("a run id over the limit is refused before anything is written", func(t *testing.T) {
		j := open(t)
		e := resume.NewEngine(j)
		_, err := e.Start(ctx, over, Sized, SizePlan{Key: "k"})
		wantLimit(t, "Start", err, "run id", "8100 bytes", "1024 bytes", "MaxRunIDBytes")
		_, err = e.Enqueue(ctx, over, Sized, SizePlan{Key: "k"})
		wantLimit(t, "Enqueue", err, "8100 bytes")
		_, err = e.EnqueueAt(ctx, time.Now().Add(time.Hour), over, Sized, SizePlan{Key: "k"})
		wantLimit(t, "EnqueueAt", err, "8100 bytes")
		if _, _, err := j.LoadRun(ctx, over); !errors.Is(err, journal.ErrRunNotFound) {
			t.Errorf("the refused run: %v, want no run stored", err)
		}
		if n := seen.count(over, "Tag"); n != 0 {
			t.Errorf("Tag executed %d times for a refused run", n)
		}
		now := time.Now()
		_, _, err = j.CreateRun(ctx, journal.RunRecord{RunID: over, Workflow: sizedDef.QualifiedName(), Version: "v", Input: json.RawMessage("[]"), CreatedAt: now, UpdatedAt: now})
		wantLimit(t, "the journal's CreateRun", err, "8100 bytes", "MaxRunIDBytes")
	})

	t.Run("a run id at the limit runs to its end", func(t *testing.T) {
		j := open(t)
		id := newRunID(t)
		id += strings.Repeat("y", journal.MaxRunIDBytes-len(id))
		res, err := resume.NewEngine(j).Start(ctx, id, Sized, SizePlan{Key: "k"})
		if err != nil || res.Status != journal.StatusSucceeded {
			t.Fatalf("a run id of %d bytes: %s, %v", len(id), res.Status, err)
		}
		if r, _, err := j.LoadRun(ctx, id); err != nil || r.Status != journal.StatusSucceeded {
			t.Errorf("stored: %s, %v; want succeeded", r.Status, err)
		}
	})

	t.Run("a run id that is not valid text is refused", func(t *testing.T) {
		j := open(t)
		e := resume.NewEngine(j)
		for _, id := range []string{"bad-\xff", "nul-\x00-id"} {
			_, err := e.Start(ctx, id, Sized, SizePlan{Key: "k"})
			wantLimit(t, "Start "+id, err, "run id")
			now := time.Now()
			_, _, err = j.CreateRun(ctx, journal.RunRecord{RunID: id, Workflow: sizedDef.QualifiedName(), Version: "v", Input: json.RawMessage("[]"), CreatedAt: now, UpdatedAt: now})
			wantLimit(t, "the journal's CreateRun "+id, err, "run id")
		}
	})

	t.Run("a workflow name over the limit is refused by the journal", func(t *testing.T) {
		j := open(t)
		now := time.Now()
		_, _, err := j.CreateRun(ctx, journal.RunRecord{RunID: newRunID(t), Workflow: strings.Repeat("w", journal.MaxWorkflowNameBytes+1), Version: "v",
			Input: json.RawMessage("[]"), CreatedAt: now, UpdatedAt: now})
		wantLimit(t, "CreateRun", err, "workflow name", "513 bytes", "MaxWorkflowNameBytes")
	})

	t.Run("an input over the limit is refused before anything is written", func(t *testing.T) {
		j := open(t)
		id := newRunID(t)
		_, err := resume.NewEngine(j).Start(ctx, id, Sized, SizePlan{Key: "k", Pad: strings.Repeat("i", journal.MaxValueBytes)})
		wantLimit(t, "Start", err, "input", "MaxValueBytes", id)
		if _, _, err := j.LoadRun(ctx, id); !errors.Is(err, journal.ErrRunNotFound) {
			t.Errorf("the refused run: %v, want no run stored", err)
		}
	})

	t.Run("a step key over the limit fails the run, naming the step and the limit", func(t *testing.T) {
		j := open(t)
		for _, key := range []string{strings.Repeat("k", journal.MaxStepKeyBytes), "nul\x00key"} {
			id := newRunID(t)
			res, err := resume.NewEngine(j).Start(ctx, id, Sized, SizePlan{Key: key})
			if res.Status != journal.StatusFailed || !strings.Contains(res.Error, "step Tag") || !strings.Contains(res.Error, "step key") {
				t.Errorf("a key of %d bytes: %s, %q (%v); want failed naming step Tag and the step key's limit", len(key), res.Status, res.Error, err)
			}
			if seen.count(id, "Tag") != 0 {
				t.Errorf("Tag executed with a key the journal cannot store")
			}
		}
	})

	t.Run("a step name or key over the limit is refused by the journal", func(t *testing.T) {
		j := open(t)
		id := newRunID(t)
		now := time.Now()
		r, _, err := j.CreateRun(ctx, journal.RunRecord{RunID: id, Workflow: sizedDef.QualifiedName(), Version: "v", Input: json.RawMessage("[]"),
			CreatedAt: now, UpdatedAt: now, LeaseOwner: "limits", LeaseUntil: now.Add(time.Minute)})
		if err != nil {
			t.Fatal(err)
		}
		l := journal.Lease{RunID: id, Owner: "limits", Epoch: r.Epoch}
		long := strings.Repeat("n", journal.MaxStepNameBytes+1)
		err = j.WriteStep(ctx, l, journal.StepRecord{RunID: id, StepKey: "A", Name: long, Status: journal.StepSucceeded, Result: json.RawMessage("1"), Attempt: 1, Seq: 1, StartedAt: now})
		wantLimit(t, "WriteStep name", err, "step name", "257 bytes", "MaxStepNameBytes")
		err = j.WriteStep(ctx, l, journal.StepRecord{RunID: id, StepKey: strings.Repeat("k", journal.MaxStepKeyBytes+1), Name: "A", Status: journal.StepSucceeded, Result: json.RawMessage("1"), Attempt: 1, Seq: 1, StartedAt: now})
		wantLimit(t, "WriteStep key", err, "step key", "1025 bytes", "MaxStepKeyBytes")
		err = j.WriteStep(ctx, l, journal.StepRecord{RunID: id, StepKey: "A", Name: "A", Status: journal.StepSucceeded, Result: bigJSON(journal.MaxValueBytes), Attempt: 1, Seq: 1, StartedAt: now})
		wantLimit(t, "WriteStep result", err, "step result", "MaxValueBytes")
		if _, steps, _ := j.LoadRun(ctx, id); len(steps) != 0 {
			t.Errorf("%d step rows written past the limits", len(steps))
		}
	})

	t.Run("a step result over the limit fails the attempt, and is not journaled", func(t *testing.T) {
		j := open(t)
		id := newRunID(t)
		res, _ := resume.NewEngine(j).Start(ctx, id, Sized, SizePlan{Key: "k", Result: journal.MaxValueBytes})
		if res.Status != journal.StatusFailed || !strings.Contains(res.Error, "MaxValueBytes") || !strings.Contains(res.Error, "step Blob") {
			t.Errorf("a result over the limit: %s, %q; want failed naming step Blob and MaxValueBytes", res.Status, res.Error)
		}
		_, steps, _ := j.LoadRun(ctx, id)
		for _, s := range steps {
			if len(s.Result) > journal.MaxValueBytes {
				t.Errorf("row %s holds %d bytes", s.StepKey, len(s.Result))
			}
		}
	})

	t.Run("an output over the limit fails the run", func(t *testing.T) {
		j := open(t)
		res, _ := resume.NewEngine(j).Start(ctx, newRunID(t), Sized, SizePlan{Key: "k", Output: journal.MaxValueBytes})
		if res.Status != journal.StatusFailed || !strings.Contains(res.Error, "output") || !strings.Contains(res.Error, "MaxValueBytes") {
			t.Errorf("an output over the limit: %s, %.300q; want failed naming the output and MaxValueBytes", res.Status, res.Error)
		}
	})

	t.Run("a child run id over the limit fails its step, naming it", func(t *testing.T) {
		j := open(t)
		id := newRunID(t)
		id += strings.Repeat("p", 1000-len(id))
		res, _ := resume.NewEngine(j).Start(ctx, id, Sized, SizePlan{Key: "k", ChildKey: strings.Repeat("c", 100)})
		if res.Status != journal.StatusFailed || !strings.Contains(res.Error, "child run's id") || !strings.Contains(res.Error, "MaxRunIDBytes") {
			t.Errorf("a child id over the limit: %s, %q; want failed naming the child run's id and MaxRunIDBytes", res.Status, res.Error)
		}
		if runs, _ := j.ListRuns(ctx, journal.RunFilter{Parent: id}); len(runs) != 0 {
			t.Errorf("%d child runs created", len(runs))
		}
	})

	t.Run("an event name or a payload over the limit is refused", func(t *testing.T) {
		j := open(t)
		e := resume.NewEngine(j)
		id := newRunID(t)
		if res, err := e.Start(ctx, id, ApproveFlow, Gate{}); res.Status != journal.StatusWaiting {
			t.Fatalf("ApproveFlow: %s, %v", res.Status, err)
		}
		long := strings.Repeat("e", journal.MaxStepNameBytes+1)
		wantLimit(t, "Signal name", e.Signal(ctx, id, long, Approval{}), "event name", "257 bytes", "MaxStepNameBytes")
		_, err := j.Signal(ctx, journal.SignalRecord{RunID: id, Name: long, Payload: json.RawMessage("{}")})
		wantLimit(t, "the journal's Signal name", err, "event name", "257 bytes")
		big := bigJSON(journal.MaxValueBytes)
		wantLimit(t, "Signal payload", e.Signal(ctx, id, "approval", big), "signal payload", "MaxValueBytes")
		_, err = j.Signal(ctx, journal.SignalRecord{RunID: id, Name: "approval", Payload: big})
		wantLimit(t, "the journal's Signal payload", err, "signal payload", "MaxValueBytes")
		if sigs, _ := j.ListSignals(ctx, id); len(sigs) != 0 {
			t.Errorf("%d signals kept past the limits", len(sigs))
		}
	})

	t.Run("a resolution result over the limit is refused", func(t *testing.T) {
		j := open(t)
		id := newRunID(t)
		startCrashing(t, j, id, Plan{}, resume.Fault{Step: "Notify", Point: resume.FaultEffect})
		if res, _ := resume.NewEngine(j).Resume(ctx, id); res.Status != journal.StatusNeedsAttention {
			t.Fatalf("the crashed run: %s, want needs_attention", res.Status)
		}
		big := bigJSON(journal.MaxValueBytes)
		wantLimit(t, "Resolve", resume.NewEngine(j).Resolve(ctx, id, "Notify", journal.Resolution{Done: true, Result: big}), "resolution result", "MaxValueBytes")
		wantLimit(t, "the journal's Resolve", j.Resolve(ctx, id, "Notify", journal.Resolution{Done: true, Result: big}), "resolution result")
		if r, _, _ := j.LoadRun(ctx, id); r.Status != journal.StatusNeedsAttention {
			t.Errorf("after the refusals: %s, want needs_attention still", r.Status)
		}
	})
}
