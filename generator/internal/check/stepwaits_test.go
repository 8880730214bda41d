package check_test

import (
	"testing"

	"github.com/resumegen/resumegen/generator/internal/check"
	"github.com/resumegen/resumegen/generator/internal/pipetest"
)

// A wait called in the body of a function or method declared
// //resume:step is refused at the wait, named by its kind (an Await by its
// constant event name, or without one), also inside a literal in the
// step; a wait in a function that is no step, in a function a step calls
// (not looked for) and a step declared on an interface method (no body)
// are not.
func TestStepWaits(t *testing.T) {
	pipetest.Want(t, check.StepWaits, `package p

import (
	"context"
	"time"

	"github.com/resumegen/resumegen/runtime/resume"
)

//resume:step
func Charge(ctx context.Context, event string) error {
	_ = resume.Sleep(ctx, time.Second) // want "^resume.Sleep is called in step Charge: a step is one journaled call, executed again when it is retried or the run resumes, so it cannot wait durably; wait in the workflow body before or after the step, or use time.Sleep inside the step$"
	_ = resume.SleepUntil(ctx, time.Time{}) // want "^resume.SleepUntil is called in step Charge"
	_, _ = resume.Await[int](ctx, "paid", 0) // want "^resume.Await \"paid\" is called in step Charge"
	_, _ = resume.Await[int](ctx, event, 0) // want "^resume.Await is called in step Charge"
	func() {
		_ = resume.Sleep(ctx, time.Second) // want "^resume.Sleep is called in step Charge"
	}()
	return helper(ctx)
}

type Client struct{}

//resume:step
func (c *Client) Notify(ctx context.Context) error {
	return resume.Sleep(ctx, time.Second) // want "^resume.Sleep is called in step Client.Notify"
}

type Notifier interface {
	//resume:step
	Notify(ctx context.Context) error
}

func helper(ctx context.Context) error { return resume.Sleep(ctx, time.Second) }

//resume:workflow
func W(ctx context.Context) error {
	_ = resume.Sleep(ctx, time.Second)
	return Charge(ctx, "x")
}
`)
}
