package resume

import (
	"context"
	"strings"
	"testing"

	"github.com/resumegen/resumegen/runtime/internal/stephook"
)

// hookFunc hands every step what its callee function returns.
type hookFunc struct {
	callee  func(stephook.Step, any) any
	reached []string
}

func (h *hookFunc) Reached(s stephook.Step)            { h.reached = append(h.reached, s.StepKey) }
func (h *hookFunc) Callee(s stephook.Step, fn any) any { return h.callee(s, fn) }

func TestCalleeHandsTheStepTheHooksFunction(t *testing.T) {
	fetch := func(ctx context.Context, id string) (int, error) { return 1, nil }
	stepCtx := context.WithValue(context.Background(), stepInfoKey{}, StepInfo{RunID: "r-1", StepKey: "Fetch#2", Name: "Fetch"})

	if got, _ := Callee(stepCtx, fetch)(stepCtx, "x"); got != 1 {
		t.Errorf("without a hook: %d, want the function's own 1", got)
	}
	var seen stephook.Step
	h := &hookFunc{callee: func(s stephook.Step, fn any) any {
		seen = s
		return func(context.Context, string) (int, error) { return 2, nil }
	}}
	ctx := stephook.With(stepCtx, h)
	if got, _ := Callee(ctx, fetch)(ctx, "x"); got != 2 || seen.StepKey != "Fetch#2" || seen.RunID != "r-1" {
		t.Errorf("with a hook: %d for %+v, want the double's 2 for Fetch#2 of r-1", got, seen)
	}
	outside := stephook.With(context.Background(), h)
	if got, _ := Callee(outside, fetch)(outside, "x"); got != 1 {
		t.Errorf("called directly, outside a run: %d, want the function's own 1", got)
	}

	h.callee = func(stephook.Step, any) any { return func(context.Context, int) (int, error) { return 3, nil } }
	defer func() {
		msg, _ := recover().(string)
		want := "resume: run r-1, step Fetch#2: the test double is a func(context.Context, int) (int, error), but the step calls a func(context.Context, string) (int, error)"
		if msg != want {
			t.Errorf("a double of another type: panic %q, want %q", msg, want)
		}
	}()
	Callee(ctx, fetch)
	t.Error("a double of another type was handed to the step")
}

func TestDescribeNamesUnknownWorkflows(t *testing.T) {
	if _, err := stephook.Describe("example.com/none.Nothing"); err == nil || !strings.Contains(err.Error(), "no registered workflow is named example.com/none.Nothing") {
		t.Errorf("describe an unknown name: %v", err)
	}
	if _, err := stephook.Describe(42); err == nil {
		t.Error("describe a non-function: no error")
	}
}
