package journaltest

import (
	"context"
	"errors"
	"fmt"

	"github.com/resumegen/resumegen/runtime/resume"
)

// KidPlan steers Parent and its child workflow Kid. It is both runs' input.
type KidPlan struct {
	Refuse bool // K2's first execution fails permanently with ErrKidRefused; later ones succeed
	Once   bool // K2 is a once step
}

// ParentOut is what Parent's body saw.
type ParentOut struct {
	Sum    int
	Branch string // "ok", or "undone" after the child refused
	Err    string
}

// ErrKidRefused is K2's permanent failure, which Parent tests through the
// child's wrapped error.
var ErrKidRefused = errors.New("kid refused")

// Kid is the child workflow: two steps, K1 and K2.
func Kid(ctx context.Context, p KidPlan) (int, error) { return kidBody(ctx, p, false) }

func kidBody(ctx context.Context, p KidPlan, durable bool) (int, error) {
	k1, k2 := K1, K2
	if durable {
		k1 = func(ctx context.Context, p KidPlan) (int, error) {
			return resume.Call(ctx, &kidSteps[0], func(ctx context.Context) (int, error) { return K1(ctx, p) })
		}
		k2 = func(ctx context.Context, p KidPlan) (int, error) {
			def := &kidSteps[1]
			if p.Once {
				def = &kidSteps[2]
			}
			return resume.Call(ctx, def, func(ctx context.Context) (int, error) { return K2(ctx, p) })
		}
	}
	a, err := k1(ctx, p)
	if err != nil {
		return 0, err
	}
	b, err := k2(ctx, p)
	if err != nil {
		return 0, fmt.Errorf("kid: %w", err)
	}
	return a + b, nil
}

// K1 is the child's first step.
func K1(ctx context.Context, p KidPlan) (int, error) {
	seen.record(ctx, "K1")
	return 1, nil
}

// K2 is the child's second step.
func K2(ctx context.Context, p KidPlan) (int, error) {
	if n := seen.record(ctx, "K2"); n == 1 && p.Refuse {
		return 0, resume.Permanent(ErrKidRefused)
	}
	return 2, nil
}

// Parent runs Before, then Kid as a child run, then After; a refusal of
// the child is undone (Undo).
func Parent(ctx context.Context, p KidPlan) (ParentOut, error) {
	return parentBody(ctx, p, false)
}

func parentBody(ctx context.Context, p KidPlan, durable bool) (ParentOut, error) {
	step := func(i int, name string) error {
		if !durable {
			seen.record(ctx, name)
			return nil
		}
		return resume.Call0(ctx, &parentSteps[i], func(ctx context.Context) error { seen.record(ctx, name); return nil })
	}
	kid := Kid
	if durable {
		kid = func(ctx context.Context, p KidPlan) (int, error) {
			return resume.CallChild(ctx, &parentSteps[1], Kid, func(ctx context.Context) (int, error) { return Kid(ctx, p) }, p)
		}
	}
	var out ParentOut
	if err := step(0, "Before"); err != nil {
		return out, err
	}
	sum, err := kid(ctx, p)
	switch {
	case errors.Is(err, ErrKidRefused):
		out.Branch, out.Err = "undone", err.Error()
		if err := step(2, "Undo"); err != nil {
			return out, err
		}
	case err != nil:
		return out, err
	default:
		out.Branch, out.Sum = "ok", sum
	}
	return out, step(3, "After")
}

var kidSteps = []resume.StepDef{
	{Name: "K1", Callee: "journaltest.K1", Signature: "func(context.Context, KidPlan) (int, error)"},
	{Name: "K2", Callee: "journaltest.K2", Signature: "func(context.Context, KidPlan) (int, error)", Attempts: 3, BackoffMin: 1, BackoffMax: 1},
	{Name: "K2", Callee: "journaltest.K2", Signature: "func(context.Context, KidPlan) (int, error)", Policy: resume.PolicyOnce},
}

var parentSteps = []resume.StepDef{
	{Name: "Before", Callee: "journaltest.Before", Signature: "func(context.Context) error"},
	{Name: "Kid", Callee: "journaltest.Kid", Signature: "func(context.Context, KidPlan) (int, error)", Child: true},
	{Name: "Undo", Callee: "journaltest.Undo", Signature: "func(context.Context) error"},
	{Name: "After", Callee: "journaltest.After", Signature: "func(context.Context) error"},
}

var kidDef = &resume.WorkflowDef{
	Package: "github.com/resumegen/resumegen/runtime/journaltest", Name: "Kid", Version: "kid-v1", Steps: kidSteps,
	Run: func(ctx context.Context, args resume.Args) (any, error) {
		var p KidPlan
		if err := args.Decode(&p); err != nil {
			return nil, err
		}
		return kidBody(ctx, p, true)
	},
}

var parentDef = &resume.WorkflowDef{
	Package: "github.com/resumegen/resumegen/runtime/journaltest", Name: "Parent", Version: "parent-v1", Steps: parentSteps,
	Errors: []resume.ErrorDef{resume.ErrorSentinel("journaltest.ErrKidRefused", ErrKidRefused)},
	Run: func(ctx context.Context, args resume.Args) (any, error) {
		var p KidPlan
		if err := args.Decode(&p); err != nil {
			return nil, err
		}
		return parentBody(ctx, p, true)
	},
}

func init() {
	resume.Register(Kid, kidDef)
	resume.Register(Parent, parentDef)
}
