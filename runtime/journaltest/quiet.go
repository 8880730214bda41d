package journaltest

import (
	"context"
	"fmt"

	"github.com/resumegen/resumegen/runtime/resume"
)

// QuietPlan steers Quiet, the workflow of steps that return no error.
type QuietPlan struct {
	PanicTick int // Tick (2 attempts) panics in its first PanicTick executions
}

// Tick is a default step that returns a value and no error: it can fail
// only by panicking.
func Tick(ctx context.Context, p QuietPlan) int {
	if n := seen.record(ctx, "Tick"); n <= p.PanicTick {
		panic(fmt.Sprintf("tick boom %d", n))
	}
	return 7
}

// Ping is a once step that returns nothing.
func Ping(ctx context.Context) { seen.record(ctx, "Ping") }

// Quiet runs Tick, then Ping.
func Quiet(ctx context.Context, p QuietPlan) (int, error) {
	return quietBody(ctx, p, Tick, Ping), nil
}

func quietBody(ctx context.Context, p QuietPlan, tick func(context.Context, QuietPlan) int, ping func(context.Context)) int {
	n := tick(ctx, p)
	ping(ctx)
	return n
}

var quietSteps = []resume.StepDef{
	{Name: "Tick", Callee: "journaltest.Tick", Signature: "func(context.Context, QuietPlan) int", Attempts: 2, BackoffMin: 1, BackoffMax: 1},
	{Name: "Ping", Callee: "journaltest.Ping", Signature: "func(context.Context)", Policy: resume.PolicyOnce},
}

// The wrappers resumegen generates for steps that return no error: an
// outcome they cannot return unwinds the body.
var quietDef = &resume.WorkflowDef{
	Package: "github.com/resumegen/resumegen/runtime/journaltest", Name: "Quiet", Version: "quiet-v1", Steps: quietSteps,
	Run: func(ctx context.Context, args resume.Args) (any, error) {
		var p QuietPlan
		if err := args.Decode(&p); err != nil {
			return nil, err
		}
		tick := func(ctx context.Context, p QuietPlan) int {
			v, err := resume.Call(ctx, &quietSteps[0], func(ctx context.Context) (int, error) { return Tick(ctx, p), nil })
			if err != nil {
				resume.Unwind(err)
			}
			return v
		}
		ping := func(ctx context.Context) {
			if err := resume.Call0(ctx, &quietSteps[1], func(ctx context.Context) error { Ping(ctx); return nil }); err != nil {
				resume.Unwind(err)
			}
		}
		return quietBody(ctx, p, tick, ping), nil
	},
}

func init() { resume.Register(Quiet, quietDef) }
