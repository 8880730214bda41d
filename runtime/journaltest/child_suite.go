package journaltest

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/resumegen/resumegen/runtime/journal"
	"github.com/resumegen/resumegen/runtime/resume"
)

// runChildren proves child runs: a workflow called from a workflow runs as
// a run of its own that its parent drives, resumes where it stopped, and
// hands the parent its outcome, value and error, as a journaled step.
func runChildren(t *testing.T, open func(t *testing.T) journal.Journal) {
	ctx := context.Background()
	outOf := func(t *testing.T, res resume.Result) ParentOut {
		t.Helper()
		var out ParentOut
		if err := res.Decode(&out); err != nil {
			t.Fatal(err)
		}
		return out
	}
	// Keys a run's steps executed, by run: the parent's and its child's.
	counts := func(id string) map[string]int {
		child := resume.ChildRunID(id, "Kid")
		return map[string]int{
			"Before": seen.count(id, "Before"), "Undo": seen.count(id, "Undo"), "After": seen.count(id, "After"),
			"K1": seen.count(child, "K1"), "K2": seen.count(child, "K2"),
		}
	}

	for _, plan := range []KidPlan{{}, {Refuse: true}} {
		ref := open(t)
		refID := newRunID(t)
		res, err := resume.NewEngine(ref).Start(ctx, refID, Parent, plan)
		if err != nil {
			t.Fatalf("uninterrupted %+v: %v", plan, err)
		}
		want, wantN := outOf(t, res), counts(refID)
		if plan.Refuse && (want.Branch != "undone" || wantN["K2"] != 1) {
			t.Fatalf("uninterrupted refusal: %+v %v; want the undone branch", want, wantN)
		}
		for _, f := range []resume.Fault{
			{Step: "Before", Point: resume.FaultAfter},
			{Step: "Kid", Point: resume.FaultBefore},
			{Step: "K1", Point: resume.FaultBefore},
			{Step: "K1", Point: resume.FaultEffect},
			{Step: "K1", Point: resume.FaultAfter},
			{Step: "K2", Point: resume.FaultBefore},
			{Step: "K2", Point: resume.FaultAfter},
			{Step: "Kid", Point: resume.FaultEffect},
			{Step: "Kid", Point: resume.FaultAfter},
			{Step: "Undo", Point: resume.FaultBefore},
			{Step: "After", Point: resume.FaultBefore},
		} {
			if plan.Refuse && (f.Step == "K2" && f.Point == resume.FaultAfter || f.Step == "Kid" && f.Point != resume.FaultBefore) {
				continue // a failed attempt has no effect or after point
			}
			if !plan.Refuse && f.Step == "Undo" {
				continue
			}
			t.Run(fmtPlan(plan)+": a crash at "+f.Step+":"+string(f.Point)+" resumes as if it never happened", func(t *testing.T) {
				j := open(t)
				id := newRunID(t)
				if !startParentCrashing(t, j, id, plan, f) {
					t.Fatalf("did not crash at %v", f)
				}
				res, err := resume.NewEngine(j).Resume(ctx, id)
				if err != nil {
					t.Fatalf("resume: %+v, %v", res, err)
				}
				if got := outOf(t, res); got != want {
					t.Errorf("resumed parent saw %+v, an uninterrupted one %+v", got, want)
				}
				wantHere := map[string]int{}
				for k, n := range wantN {
					wantHere[k] = n
				}
				if f.Point == resume.FaultEffect && f.Step != "Kid" {
					wantHere[f.Step]++ // the one repetition at least once allows
				}
				if got := counts(id); !reflect.DeepEqual(got, wantHere) {
					t.Errorf("executions %v, want %v", got, wantHere)
				}
				child, _, err := j.LoadRun(ctx, resume.ChildRunID(id, "Kid"))
				if err != nil || child.Parent != id || child.Workflow != kidDef.QualifiedName() {
					t.Errorf("child run = %+v, %v; want a run of Kid whose parent is %s", child, err, id)
				}
			})
		}
	}

	t.Run("a child that failed before its parent journaled it: the parent replays its error, identity kept", func(t *testing.T) {
		j := &crashAfterFinish{Journal: open(t), when: func(r journal.RunRecord) bool {
			return r.Parent != "" && r.Status == journal.StatusFailed
		}}
		id := newRunID(t)
		childID := resume.ChildRunID(id, "Kid")
		if !startDying(j, id, Parent, KidPlan{Refuse: true}, resume.Fault{}) {
			t.Fatal("the child's finish did not crash the process")
		}
		res, err := resume.NewEngine(j.Journal).Resume(ctx, id)
		if err != nil || outOf(t, res).Branch != "undone" || seen.count(childID, "K2") != 1 {
			t.Fatalf("resume: %+v, %v, K2 executed %d times; want the undone branch and K2 once", res, err, seen.count(childID, "K2"))
		}
	})

	t.Run("a child that needs a person parks its parent; settling the child wakes the parent", func(t *testing.T) {
		j := open(t)
		id := newRunID(t)
		childID := resume.ChildRunID(id, "Kid")
		if !startParentCrashing(t, j, id, KidPlan{Once: true}, resume.Fault{Step: "K2", Point: resume.FaultEffect}) {
			t.Fatal("did not crash")
		}
		e := resume.NewEngine(j)
		res, err := e.Resume(ctx, id)
		if !errors.Is(err, resume.ErrNeedsAttention) || res.AttentionKind != journal.AttentionKindChild || res.AttentionStep != "Kid" {
			t.Fatalf("parent: %+v, %v; want needs attention (child) at Kid", res, err)
		}
		child, _, _ := j.LoadRun(ctx, childID)
		if child.Status != journal.StatusNeedsAttention || child.AttentionStep != "K2" {
			t.Fatalf("child: %+v; want needs attention at K2", child)
		}
		if err := e.Resolve(ctx, childID, "K2", journal.Resolution{Done: true, Result: []byte(`2`)}); err != nil {
			t.Fatal(err)
		}
		parent, _, _ := j.LoadRun(ctx, id)
		if parent.Status != journal.StatusPending {
			t.Fatalf("parent after the child was resolved: %s, want pending", parent.Status)
		}
		// A worker takes the parent, never the child on its own.
		w := resume.NewEngine(j, resume.WithOwner("worker"))
		if _, _, err := j.ClaimNext(ctx, journal.ClaimNextRequest{Owner: "w", Lease: time.Minute, Workflows: []string{kidDef.QualifiedName()}}); !errors.Is(err, journal.ErrNoRunReady) {
			t.Fatalf("a worker claimed a child run: %v", err)
		}
		res, err = w.Resume(ctx, id)
		if err != nil || outOf(t, res).Sum != 3 || seen.count(childID, "K2") != 1 {
			t.Fatalf("parent: %+v, %v, K2 executed %d times; want sum 3, K2 once", res, err, seen.count(childID, "K2"))
		}
		kids, err := j.ListRuns(ctx, journal.RunFilter{Parent: id})
		if err != nil || len(kids) != 1 || kids[0].RunID != childID || kids[0].Status != journal.StatusSucceeded {
			t.Errorf("children of %s: %+v, %v", id, kids, err)
		}
	})
}

func fmtPlan(p KidPlan) string {
	if p.Refuse {
		return "refused"
	}
	return "ok"
}

// startParentCrashing runs Parent with p on an engine that "dies" at f.
func startParentCrashing(t *testing.T, j journal.Journal, runID string, p KidPlan, f resume.Fault) (crashed bool) {
	t.Helper()
	return startDying(j, runID, Parent, p, f)
}

// crashAfterFinish is a journal on which the process "dies" right after
// the first FinishRun that when matches has committed.
type crashAfterFinish struct {
	journal.Journal
	when  func(journal.RunRecord) bool
	fired bool
}

func (c *crashAfterFinish) FinishRun(ctx context.Context, l journal.Lease, r journal.RunRecord) error {
	if err := c.Journal.FinishRun(ctx, l, r); err != nil {
		return err
	}
	if !c.fired && c.when(r) {
		c.fired = true
		panic(crash{})
	}
	return nil
}
