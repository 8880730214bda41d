package main

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/resumegen/resumegen/runtime/resume"
	"github.com/resumegen/resumegen/runtime/resumetest"
)

// policy is the company's real policy: a day before the reminder, three
// days to decide. With the harness's clock it passes in milliseconds.
func expense(id string) Expense {
	return Expense{ID: id, Submitter: "sam@example.com", Approver: "dana@example.com", Amount: 12900,
		RemindAfter: 24 * time.Hour, DecideWithin: 72 * time.Hour}
}

// freshWorld gives each run of the harness a world of its own.
func freshWorld(t testing.TB) context.Context {
	w, err := openWorld(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return withWorld(context.Background(), w)
}

// TestDecisions runs the real policy (24h, then 72h) on the harness's
// clock: approved, rejected, approved before the reminder (the signal is
// kept for the await), and nobody deciding (timed out after four days).
func TestDecisions(t *testing.T) {
	cases := []struct {
		name     string
		signalAt time.Duration // when the decision is sent; < 0: never
		decision Decision
		want     Outcome
		pays     int
	}{
		{"approved", 30 * time.Hour, Decision{Approved: true, By: "dana"}, Outcome{Status: "paid", By: "dana"}, 1},
		{"rejected", 30 * time.Hour, Decision{By: "dana", Note: "no receipt"}, Outcome{Status: "rejected", By: "dana", Note: "no receipt"}, 0},
		{"approved while asleep", time.Hour, Decision{Approved: true, By: "dana"}, Outcome{Status: "paid", By: "dana"}, 1},
		{"timed out", -1, Decision{}, Outcome{Status: "timed out"}, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := resumetest.New(t, resumetest.WithContext(freshWorld))
			start := h.Clock().Now()
			if _, err := h.Run("exp-1", Approve, expense("exp-1")); !errors.Is(err, resume.ErrRunWaiting) {
				t.Fatalf("run: %v; want it asleep", err)
			}
			if c.signalAt >= 0 {
				h.Clock().Advance(c.signalAt)
				if err := h.Engine().Signal(h.Context(), "exp-1", "approval", c.decision); err != nil {
					t.Fatal(err)
				}
			}
			res, err := h.FastForward("exp-1")
			if err != nil {
				t.Fatalf("fast-forward: %+v, %v", res, err)
			}
			var got Outcome
			if err := res.Decode(&got); err != nil {
				t.Fatal(err)
			}
			got.Payment = ""
			if got != c.want {
				t.Errorf("outcome %+v, want %+v", got, c.want)
			}
			if n := h.Count("exp-1", "Pay"); n != c.pays {
				t.Errorf("Pay executed %d times, want %d", n, c.pays)
			}
			if h.Count("exp-1", "Remind") != 1 || h.Count("exp-1", "Tell") != 1 {
				t.Errorf("Remind %d, Tell %d executions; want one each", h.Count("exp-1", "Remind"), h.Count("exp-1", "Tell"))
			}
			if c.signalAt < 0 {
				if passed := h.Clock().Now().Sub(start); passed != 96*time.Hour {
					t.Errorf("timed out after %v, want 96h: the day's sleep, then the 72h timeout", passed)
				}
			}
		})
	}
}

// TestSignalRefusals: a decision of another shape, a misspelt event, a
// signal to an unknown run, and one to a finished run are refused when
// sent. The typed sender of the generated run handle (ApproveRun) takes
// only a Decision, and only for an event Approve awaits.
func TestSignalRefusals(t *testing.T) {
	h := resumetest.New(t, resumetest.WithContext(freshWorld))
	ctx, e := h.Context(), h.Engine()
	if _, err := h.Run("exp-2", Approve, expense("exp-2")); !errors.Is(err, resume.ErrRunWaiting) {
		t.Fatal(err)
	}
	if err := e.Signal(ctx, "exp-2", "approval", map[string]string{"approved": "yes"}); err == nil {
		t.Error("a decision whose approved is a string was accepted")
	}
	if err := e.Signal(ctx, "exp-2", "aproval", Decision{Approved: true}); !errors.Is(err, resume.ErrNotAwaited) {
		t.Errorf("a misspelt event: %v, want ErrNotAwaited", err)
	}
	if err := (ApproveRun{Engine: e, ID: "exp-404"}).SignalApproval(ctx, Decision{Approved: true}); !errors.Is(err, resume.ErrRunNotFound) {
		t.Errorf("signal to an unknown run: %v, want ErrRunNotFound", err)
	}
	if _, err := h.FastForward("exp-2"); err != nil {
		t.Fatal(err)
	}
	if err := (ApproveRun{Engine: e, ID: "exp-2"}).SignalApproval(ctx, Decision{Approved: true}); !errors.Is(err, resume.ErrRunFinished) {
		t.Errorf("signal to a finished run: %v, want ErrRunFinished", err)
	}
	if out, err := (ApproveRun{Engine: e, ID: "exp-2"}).Wait(ctx); err != nil || out.Status != "timed out" {
		t.Errorf("ApproveRun.Wait = %+v, %v, want the timed-out outcome of the fast-forwarded run", out, err)
	}
}

// TestCrashEverywhere crashes the run in process at every step and wait
// row (before, at the effect of and after each; an await that waited also
// right after it settled) on each path: the approver's decision, sent by
// the harness when the run first waits for it, approved or rejected, and
// nobody deciding. Every resumed run ends as the uninterrupted one.
func TestCrashEverywhere(t *testing.T) {
	const (
		head = "Submit:before Submit:effect Submit:after resume.Sleep:after Remind:before Remind:effect Remind:after approval:after approval:settled "
		pay  = "Pay:before Pay:effect Pay:after "
		tell = "Tell:before Tell:effect Tell:after"
	)
	cases := []struct {
		name    string
		opts    []resumetest.Option
		want    string
		outcome Outcome
	}{
		{"approved", []resumetest.Option{resumetest.WithSignal("approval", Decision{Approved: true, By: "dana"})}, head + pay + tell, Outcome{Status: "paid", By: "dana"}},
		{"rejected", []resumetest.Option{resumetest.WithSignal("approval", Decision{By: "dana", Note: "no receipt"})}, head + tell, Outcome{Status: "rejected", By: "dana", Note: "no receipt"}},
		{"timed out", nil, head + tell, Outcome{Status: "timed out"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			opts := append([]resumetest.Option{resumetest.WithContext(freshWorld)}, c.opts...)
			rep := resumetest.New(t, opts...).CrashEverywhere(Approve, expense("exp-3"))
			var names []string
			for _, cs := range rep.Cases {
				names = append(names, cs.Name)
			}
			if got := strings.Join(names, " "); got != c.want {
				t.Errorf("cases:\n%s\nwant:\n%s", got, c.want)
			}
			var got Outcome
			if err := rep.Result.Decode(&got); err != nil {
				t.Fatal(err)
			}
			if got.Payment = ""; got != c.outcome {
				t.Errorf("the uninterrupted run's outcome %+v, want %+v", got, c.outcome)
			}
		})
	}
}
