package journaltest

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/resumegen/resumegen/runtime/journal"
	"github.com/resumegen/resumegen/runtime/resume"
)

// runAudit proves that a journal records an operator's action
// (journal.WithAction) with the write it goes with: cancel, retry,
// resolve, accept-version and signal each add one row naming who, what,
// from where and when (the journal's clock); a refused action records
// nothing.
func runAudit(t *testing.T, h Harness) {
	ctx := context.Background()
	j := h.open(t)
	au, ok := journal.Find[journal.Auditor](j)
	if !ok {
		t.Fatal("the journal does not record operators' actions (journal.Auditor)")
	}
	act := func(id, action string) context.Context {
		return journal.WithAction(ctx, journal.ActionRecord{Action: action, Detail: "detail of " + action, Actor: "ada", Origin: "host-1", Via: "test"})
	}
	at := time.Now()
	// A parked once step (resolve), a failed run (retry), a waiting run
	// (signal), a version stop (accept), a pending run (cancel).
	parked := newRunID(t)
	if !startCrashing(t, j, parked, Plan{Loop: 1}, resume.Fault{Step: "Notify", Point: resume.FaultEffect}) {
		t.Fatal("no crash")
	}
	e := resume.NewEngine(j)
	if res, _ := e.Resume(ctx, parked); res.Status != journal.StatusNeedsAttention {
		t.Fatalf("run %s: %s; want parked on Notify", parked, res.Status)
	}
	failed := newRunID(t)
	if res, _ := e.Start(ctx, failed, Chain, Plan{FailFetch: 9, PermanentFetch: true}); res.Status != journal.StatusFailed {
		t.Fatalf("run %s: %s; want failed", failed, res.Status)
	}
	waiting := newRunID(t)
	if _, err := e.Start(ctx, waiting, ApproveFlow, Gate{}); !errors.Is(err, resume.ErrRunWaiting) {
		t.Fatal(err)
	}
	pending := newRunID(t)
	if _, err := e.Enqueue(ctx, pending, Chain, Plan{Loop: 1}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		id, action string
		do         func(ctx context.Context) error
	}{
		{parked, "resolve", func(ctx context.Context) error {
			return j.Resolve(ctx, parked, "Notify", journal.Resolution{Done: true})
		}},
		{failed, "retry", func(ctx context.Context) error { return j.Retry(ctx, failed) }},
		{waiting, "signal", func(ctx context.Context) error {
			_, err := j.Signal(ctx, journal.SignalRecord{RunID: waiting, Name: "approval", Payload: json.RawMessage(`{"Approved":true}`)})
			return err
		}},
		{pending, "cancel", func(ctx context.Context) error { return j.Cancel(ctx, pending, journal.CancelOptions{}) }},
	} {
		if err := c.do(act(c.id, c.action)); err != nil {
			t.Fatalf("%s run %s: %v", c.action, c.id, err)
		}
		// The same action again is refused, and records nothing.
		if err := c.do(act(c.id, c.action)); err == nil && c.action != "signal" {
			t.Errorf("%s run %s a second time: accepted", c.action, c.id)
		}
		as, err := au.ListActions(ctx, c.id)
		want := 1
		if c.action == "signal" {
			want = 2 // a second signal is kept, and recorded
		}
		if err != nil || len(as) != want {
			t.Fatalf("actions on run %s after its %s: %+v, %v; want %d", c.id, c.action, as, err, want)
		}
		a := as[0]
		if a.RunID != c.id || a.Seq != 1 || a.Action != c.action || a.Detail != "detail of "+c.action || a.Actor != "ada" ||
			a.Origin != "host-1" || a.Via != "test" || a.At.Before(at.Add(-time.Minute)) || a.At.After(time.Now().Add(time.Minute)) {
			t.Errorf("recorded %+v; want run %s's %s by ada from host-1, now", a, c.id, c.action)
		}
		if want == 2 && as[1].Seq != 2 {
			t.Errorf("the second action's seq is %d, want 2", as[1].Seq)
		}
	}
	// A write without an action in its context records none.
	if err := j.Retry(ctx, parked); err == nil {
		t.Errorf("retry of a pending run accepted")
	}
	if as, _ := au.ListActions(ctx, parked); len(as) != 1 {
		t.Errorf("run %s has %d actions, want 1", parked, len(as))
	}
	if as, err := au.ListActions(ctx, "no-such-run"); err != nil || len(as) != 0 {
		t.Errorf("actions of an unknown run: %+v, %v; want none", as, err)
	}
}
