package journaltest

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/resumegen/resumegen/runtime/journal"
	"github.com/resumegen/resumegen/runtime/resume"
)

// runCodec checks resume.WithCodec on the journal: what the journal stores
// (read back without the codec) holds no input, output, result or error
// in the clear, every such value is sealed, and runs replay, resume and
// fail through the codec as they do without it. A journal read with the
// wrong key is an error, never a wrong value.
func runCodec(t *testing.T, open func(t *testing.T) journal.Journal, effectsOf func(t *testing.T, runID string) int) {
	ctx := context.Background()
	key := []byte("0123456789abcdef0123456789abcdef")
	codec, err := resume.NewAESGCMCodec(key)
	if err != nil {
		t.Fatal(err)
	}
	// sealedAtRest reads runID without the codec and checks that every
	// value is sealed and none of clear appears.
	sealedAtRest := func(t *testing.T, j journal.Journal, runID string, clear ...string) {
		t.Helper()
		r, steps, err := j.LoadRun(ctx, runID)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := json.Marshal(struct {
			R journal.RunRecord
			S []journal.StepRecord
		}{r, steps})
		for _, c := range clear {
			if strings.Contains(string(raw), c) {
				t.Errorf("run %s: %q is stored in the clear: %s", runID, c, raw)
			}
		}
		check := func(what string, v []byte) {
			if len(v) > 0 && !journal.IsSealed(v) {
				t.Errorf("run %s: %s stored unsealed: %s", runID, what, v)
			}
		}
		check("input", r.Input)
		check("output", r.Output)
		check("error", []byte(r.Error))
		check("error detail", r.ErrorDetail)
		for _, s := range steps {
			check(s.StepKey+" result", s.Result)
			check(s.StepKey+" error", []byte(s.Error))
			check(s.StepKey+" error detail", s.ErrorDetail)
			for _, a := range s.History {
				check(s.StepKey+" attempt error", []byte(a.Error))
			}
		}
	}

	t.Run("codec: a run's values are sealed at rest and read back clear", func(t *testing.T) {
		j := open(t)
		e := resume.NewEngine(j, resume.WithCodec(codec))
		id := newRunID(t)
		res, err := e.Start(ctx, id, Chain, Plan{FailFetch: 1, Loop: 3})
		if err != nil || res.Status != journal.StatusSucceeded || string(res.Output) != "5" {
			t.Fatalf("run: %+v, %v; want succeeded with 5", res, err)
		}
		sealedAtRest(t, j, id, "transient failure", "FailFetch")
		r, steps, err := e.Journal().LoadRun(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if string(r.Output) != "5" || !strings.Contains(string(r.Input), `"Loop":3`) {
			t.Errorf("read through the codec: input %s, output %s", r.Input, r.Output)
		}
		if len(steps) == 0 || string(steps[0].Result) != `["data"]` && string(steps[0].Result) != `"data"` {
			t.Errorf("Fetch's result through the codec: %+v", steps)
		}
		if len(steps[0].History) != 1 || !strings.Contains(steps[0].History[0].Error, "transient failure") {
			t.Errorf("Fetch's failed attempt through the codec: %+v", steps[0].History)
		}
		// Starting the same run again compares the input in the clear.
		if _, err := e.Start(ctx, id, Chain, Plan{FailFetch: 1, Loop: 3}); err != nil {
			t.Errorf("start again with the same input: %v", err)
		}
		// Another key opens nothing: an error, not a wrong value.
		other, _ := resume.NewAESGCMCodec([]byte("another key, another 32 bytes!!!"))
		if _, _, err := resume.SealJournal(j, other).LoadRun(ctx, id); err == nil || !strings.Contains(err.Error(), "does not open") {
			t.Errorf("LoadRun with another key: %v, want an error", err)
		}
	})

	t.Run("codec: a killed run resumes from its sealed journal", func(t *testing.T) {
		j := open(t)
		id := newRunID(t)
		p := Plan{Loop: 3}
		dying := resume.NewEngine(j, resume.WithCodec(codec), resume.WithLease(150*time.Millisecond), resume.WithOwner("crasher"),
			resume.WithFaultAction(func() { panic(crash{}) }), resume.WithFault(resume.Fault{Step: "Loop#2", Point: resume.FaultBefore}))
		func() {
			defer func() {
				if r := recover(); r != nil {
					if _, ok := r.(crash); !ok {
						panic(r)
					}
				}
			}()
			dying.Start(ctx, id, Chain, p)
			t.Fatal("the engine did not die at Loop#2")
		}()
		if l, ok := j.(journal.Liveness); ok {
			// The "process" ends: its liveness signal goes with it.
			if err := l.Release(ctx, "crasher"); err != nil {
				t.Fatal(err)
			}
		}
		time.Sleep(170 * time.Millisecond) // a journal without liveness: the lease expires
		e := resume.NewEngine(j, resume.WithCodec(codec))
		res, err := e.Resume(ctx, id)
		if err != nil || res.Status != journal.StatusSucceeded || string(res.Output) != "5" {
			t.Fatalf("resume: %+v, %v", res, err)
		}
		if n := seen.count(id, "Fetch"); n != 1 {
			t.Errorf("Fetch executed %d times, want 1: its sealed result replays", n)
		}
		if n := effectsOf(t, id); n != 1 {
			t.Errorf("%d effect rows, want 1", n)
		}
		sealedAtRest(t, j, id, `"Loop":3`)
	})

	t.Run("codec: a failed run's error is sealed, and shown clear through the codec", func(t *testing.T) {
		j := open(t)
		e := resume.NewEngine(j, resume.WithCodec(codec))
		id := newRunID(t)
		res, err := e.Start(ctx, id, Chain, Plan{FailFetch: 9, PermanentFetch: true})
		if err == nil || res.Status != journal.StatusFailed || !strings.Contains(res.Error, "transient failure") {
			t.Fatalf("run: %+v, %v; want failed with Fetch's error", res, err)
		}
		sealedAtRest(t, j, id, "transient failure", "fetch 1")
	})
}
