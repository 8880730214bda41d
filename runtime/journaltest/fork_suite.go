package journaltest

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/resumegen/resumegen/runtime/journal"
	"github.com/resumegen/resumegen/runtime/resume"
)

// runFork proves resume.Engine.Fork (journal.Forker): a run killed mid-run
// forked from an earlier step ends as an uninterrupted run with its input
// would, the steps before the fork's step not executed again and the rest
// executed once; a replacement input keeps the copied steps; the fork is
// recorded on both runs, is idempotent on its id (also when two forks race)
// and refuses a step the run did not journal, another run's id and a
// version the program lacks; on a sealed journal the copy is sealed for the
// new run's id.
func runFork(t *testing.T, h Harness) {
	ctx := context.Background()
	// killed leaves run id of Chain (two loops) dead before its first Loop
	// step: Fetch, Notify and Write journaled.
	killed := func(t *testing.T, j journal.Journal) string {
		t.Helper()
		id := newRunID(t)
		if !startCrashing(t, j, id, Plan{Loop: 2}, resume.Fault{Step: "Loop", Point: resume.FaultBefore}) {
			t.Fatal("the fault did not strike")
		}
		return id
	}
	// uninterrupted is the output of a fresh run of Chain with p.
	uninterrupted := func(t *testing.T, j journal.Journal, p Plan) json.RawMessage {
		t.Helper()
		res, err := resume.NewEngine(j).Start(ctx, newRunID(t), Chain, p)
		if err != nil || res.Status != journal.StatusSucceeded {
			t.Fatalf("uninterrupted run: %+v, %v", res, err)
		}
		return res.Output
	}
	counts := func(id string) map[string]int {
		out := map[string]int{}
		for _, s := range []string{"Fetch", "Notify", "Write", "Loop"} {
			out[s] = seen.count(id, s)
		}
		return out
	}
	actionsOf := func(t *testing.T, j journal.Journal, id string) []journal.ActionRecord {
		t.Helper()
		au, ok := journal.Find[journal.Auditor](j)
		if !ok {
			t.Fatal("the journal does not record operators' actions (journal.Auditor)")
		}
		acts, err := au.ListActions(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		return acts
	}
	forkActions := func(acts []journal.ActionRecord) []string {
		var out []string
		for _, a := range acts {
			if a.Action == journal.ActionFork {
				out = append(out, a.Detail)
			}
		}
		return out
	}

	t.Run("fork after a kill executes from its step and ends as an uninterrupted run", func(t *testing.T) {
		j := h.open(t)
		id := killed(t, j)
		before := counts(id)
		e := resume.NewEngine(j)
		actx := journal.WithAction(ctx, journal.ActionRecord{Actor: "ada", Origin: "host-1", Via: "test"})
		res, err := e.Fork(actx, id, "Write", resume.ForkOptions{})
		if err != nil {
			t.Fatalf("fork: %v", err)
		}
		fork := journal.ForkID(id, 1)
		if res.RunID != fork || res.Status != journal.StatusPending {
			t.Fatalf("fork: %+v; want run %s pending", res, fork)
		}
		r, steps, err := j.LoadRun(ctx, fork)
		if err != nil {
			t.Fatal(err)
		}
		var keys []string
		for _, s := range steps {
			keys = append(keys, s.StepKey+"="+string(s.Status))
		}
		if got := strings.Join(keys, ","); got != "Fetch=succeeded,Notify=succeeded" && got != "Notify=succeeded,Fetch=succeeded" {
			t.Errorf("the fork's journal before it runs: %s; want Fetch and Notify copied, succeeded", got)
		}
		if r.Version != chainDef.Version || r.Workflow != chainDef.QualifiedName() {
			t.Errorf("fork pinned to %s %s; want the original's %s %s", r.Workflow, r.Version, chainDef.QualifiedName(), chainDef.Version)
		}
		out, err := e.Resume(ctx, fork)
		if err != nil || out.Status != journal.StatusSucceeded {
			t.Fatalf("resume the fork: %+v, %v", out, err)
		}
		if want := uninterrupted(t, j, Plan{Loop: 2}); string(out.Output) != string(want) {
			t.Errorf("the fork's output = %s; an uninterrupted run's = %s", out.Output, want)
		}
		if got, want := counts(fork), (map[string]int{"Fetch": 0, "Notify": 0, "Write": 1, "Loop": 2}); !equalCounts(got, want) {
			t.Errorf("the fork executed %v; want %v (steps before Write replayed, Write and after once)", got, want)
		}
		if got := counts(id); !equalCounts(got, before) {
			t.Errorf("the original executed %v after the fork; before it %v", got, before)
		}
		if n, err := h.CountEffects(ctx, fork); err != nil || n != 1 {
			t.Errorf("the fork's tx effect rows = %d (%v); want 1", n, err)
		}
		if got := forkActions(actionsOf(t, j, id)); len(got) != 1 || got[0] != journal.ForkedTo(fork, "Write") {
			t.Errorf("the original's fork actions = %q; want [%q]", got, journal.ForkedTo(fork, "Write"))
		}
		acts := actionsOf(t, j, fork)
		if got := forkActions(acts); len(got) != 1 || got[0] != journal.ForkedFrom(id, "Write") {
			t.Errorf("the fork's fork actions = %q; want [%q]", got, journal.ForkedFrom(id, "Write"))
		} else if a := acts[0]; a.Actor != "ada" || a.Origin != "host-1" || a.Via != "test" || a.At.IsZero() {
			t.Errorf("the fork's action = %+v; want by ada from host-1 via test, stamped", a)
		}
		// A second fork without an id is another run.
		res2, err := e.Fork(ctx, id, "Fetch", resume.ForkOptions{})
		if err != nil || res2.RunID != journal.ForkID(id, 2) {
			t.Fatalf("second fork: %+v, %v; want run %s", res2, err, journal.ForkID(id, 2))
		}
		if _, steps, _ := j.LoadRun(ctx, res2.RunID); len(steps) != 0 {
			t.Errorf("a fork from the first step copied %d rows; want none", len(steps))
		}
	})

	t.Run("a replaced input keeps the copied steps", func(t *testing.T) {
		j := h.open(t)
		id := killed(t, j)
		e := resume.NewEngine(j)
		res, err := e.Fork(ctx, id, "Write", resume.ForkOptions{ID: id + "-three", Input: json.RawMessage(`[{"Loop":3}]`)})
		if err != nil {
			t.Fatal(err)
		}
		out, err := e.Resume(ctx, res.RunID)
		if err != nil || out.Status != journal.StatusSucceeded || string(out.Output) != "5" {
			t.Fatalf("resume the fork: %+v, %v; want succeeded with 0+1+4 = 5", out, err)
		}
		if got, want := counts(res.RunID), (map[string]int{"Fetch": 0, "Notify": 0, "Write": 1, "Loop": 3}); !equalCounts(got, want) {
			t.Errorf("the fork executed %v; want %v", got, want)
		}
		if _, err := e.Fork(ctx, id, "Write", resume.ForkOptions{Input: json.RawMessage(`{"Loop":3}`)}); err == nil || !strings.Contains(err.Error(), "JSON array") {
			t.Errorf("a fork whose input is no array: %v; want refused", err)
		}
	})

	t.Run("fork refuses what it cannot fork, naming the run and step", func(t *testing.T) {
		j := h.open(t)
		id := killed(t, j)
		e := resume.NewEngine(j)
		_, err := e.Fork(ctx, id, "Loop#2", resume.ForkOptions{})
		if !errors.Is(err, resume.ErrForkStep) || !strings.Contains(err.Error(), id) || !strings.Contains(err.Error(), "Loop#2") {
			t.Errorf("fork from a step not journaled: %v; want ErrForkStep naming %s and Loop#2", err, id)
		}
		if _, err := e.Fork(ctx, "no-such-run", "Fetch", resume.ForkOptions{}); !errors.Is(err, journal.ErrRunNotFound) {
			t.Errorf("fork of an unknown run: %v; want ErrRunNotFound", err)
		}
		other := newRunID(t)
		if _, err := e.Enqueue(ctx, other, Chain, Plan{}); err != nil {
			t.Fatal(err)
		}
		if _, err := e.Fork(ctx, id, "Write", resume.ForkOptions{ID: other}); !errors.Is(err, journal.ErrRunConflict) {
			t.Errorf("fork onto another run's id: %v; want ErrRunConflict", err)
		}
		if _, err := e.Fork(ctx, id, "Write", resume.ForkOptions{ID: id}); !errors.Is(err, journal.ErrRunConflict) {
			t.Errorf("fork onto its own id: %v; want ErrRunConflict", err)
		}
		if got := forkActions(actionsOf(t, j, id)); len(got) != 0 {
			t.Errorf("refused forks recorded %q; want nothing", got)
		}
		// A run pinned to a version this program lacks.
		old := newRunID(t)
		if _, _, err := j.CreateRun(ctx, journal.RunRecord{RunID: old, Workflow: chainDef.QualifiedName(), Version: "chain-v9",
			Status: journal.StatusPending, Input: json.RawMessage(`[{}]`)}); err != nil {
			t.Fatal(err)
		}
		if _, err := e.Fork(ctx, old, "Fetch", resume.ForkOptions{}); err == nil || !strings.Contains(err.Error(), "chain-v9") {
			t.Errorf("fork of a version the program lacks: %v; want refused naming chain-v9", err)
		}
	})

	t.Run("fork is idempotent on its id, also when two race", func(t *testing.T) {
		j := h.open(t)
		id := killed(t, j)
		e := resume.NewEngine(j)
		fork := id + "-mine"
		var wg sync.WaitGroup
		errs := make([]error, 4)
		for i := range errs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, errs[i] = e.Fork(ctx, id, "Write", resume.ForkOptions{ID: fork})
			}()
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Errorf("fork %d: %v", i, err)
			}
		}
		if got := forkActions(actionsOf(t, j, id)); len(got) != 1 {
			t.Errorf("the original's fork actions = %q; want one", got)
		}
		if got := forkActions(actionsOf(t, j, fork)); len(got) != 1 {
			t.Errorf("the fork's fork actions = %q; want one", got)
		}
		if _, err := e.Fork(ctx, id, "Notify", resume.ForkOptions{ID: fork}); !errors.Is(err, journal.ErrRunConflict) {
			t.Errorf("the id forked again from another step: %v; want ErrRunConflict", err)
		}
		out, err := e.Resume(ctx, fork)
		if err != nil || out.Status != journal.StatusSucceeded || seen.count(fork, "Write") != 1 {
			t.Fatalf("resume the fork: %+v, %v, Write executed %d times", out, err, seen.count(fork, "Write"))
		}
		if res, err := e.Fork(ctx, id, "Write", resume.ForkOptions{ID: fork}); err != nil || res.Status != journal.StatusSucceeded {
			t.Errorf("the fork again once it ran: %+v, %v; want the run as it is", res, err)
		}
	})

	t.Run("a long journal is copied whole", func(t *testing.T) {
		// More rows than one statement of the copy takes (500, or 50).
		j := h.open(t)
		e := resume.NewEngine(j)
		benchState.policy, benchState.baseline = resume.PolicyDefault, nil
		id := newRunID(t)
		if _, err := e.Start(ctx, id, BenchFlow, 1201); err != nil {
			t.Fatal(err)
		}
		res, err := e.Fork(ctx, id, "Default#1201", resume.ForkOptions{})
		if err != nil {
			t.Fatal(err)
		}
		_, steps, err := j.LoadRun(ctx, res.RunID)
		if err != nil || len(steps) != 1200 {
			t.Fatalf("the fork holds %d rows (%v); want the 1200 before Default#1201", len(steps), err)
		}
		before := j.Counters().Commits
		if out, err := e.Resume(ctx, res.RunID); err != nil || out.Status != journal.StatusSucceeded {
			t.Fatalf("resume the fork: %+v, %v", out, err)
		}
		_, steps, _ = j.LoadRun(ctx, res.RunID)
		if len(steps) != 1201 {
			t.Errorf("after its resume the fork holds %d rows; want 1201", len(steps))
		}
		if n := j.Counters().Commits - before; n > 4 {
			t.Errorf("the fork's resume made %d commits; want the claim, one step and the finish (the copied rows replayed)", n)
		}
	})

	t.Run("a sealed run's fork is sealed for its own id", func(t *testing.T) {
		j := h.open(t)
		sealed := resume.SealJournal(j, keyring(t, "k1"))
		id := killed(t, sealed)
		e := resume.NewEngine(sealed)
		if _, err := resume.NewEngine(j).Fork(ctx, id, "Write", resume.ForkOptions{}); err == nil || !strings.Contains(err.Error(), "sealed") {
			t.Errorf("fork without the codec: %v; want refused, the values sealed", err)
		}
		res, err := e.Fork(ctx, id, "Write", resume.ForkOptions{})
		if err != nil {
			t.Fatal(err)
		}
		_, raw, err := j.LoadRun(ctx, res.RunID)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range raw {
			if !journal.IsSealed(s.Result) {
				t.Errorf("the fork's row %s stored %s; want it sealed", s.StepKey, s.Result)
			}
		}
		out, err := e.Resume(ctx, res.RunID)
		if err != nil || out.Status != journal.StatusSucceeded {
			t.Fatalf("resume the sealed fork: %+v, %v", out, err)
		}
		if want := uninterrupted(t, sealed, Plan{Loop: 2}); string(out.Output) != string(want) {
			t.Errorf("the sealed fork's output = %s; want %s", out.Output, want)
		}
		if got := counts(res.RunID); got["Fetch"] != 0 || got["Notify"] != 0 || got["Write"] != 1 {
			t.Errorf("the sealed fork executed %v; want Write once, Fetch and Notify replayed", got)
		}
	})
}

func equalCounts(a, b map[string]int) bool {
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
