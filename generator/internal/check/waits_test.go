package check_test

import (
	"testing"

	"github.com/resumegen/resumegen/generator/internal/check"
	"github.com/resumegen/resumegen/generator/internal/pipetest"
)

// A wait is refused with a //resume:step on its call, an Await whose
// event name is not a constant string or not a valid step name, and an
// Await whose payload JSON cannot journal. Constant names of every form
// (a named constant, a typed one converted, a constant expression) and
// sleeps without directives are accepted, in the body and in a helper.
func TestWaits(t *testing.T) {
	pipetest.Want(t, check.Waits, `package p

import (
	"context"
	"time"

	"github.com/resumegen/resumegen/runtime/resume"
)

const approval = "approval"

type Event string

const shipped Event = "shipped"

type Payload struct{ OK bool }

//resume:workflow
func W(ctx context.Context, name string) error {
	// wantnext "^//resume:step: resume.Sleep is journaled by the runtime itself, not as a step: remove the directive$"
	_ = resume.Sleep(ctx, time.Second) //resume:step
	// wantnext "^//resume:step name=X: resume.Await is journaled by the runtime itself"
	_, _ = resume.Await[int](ctx, "x", 0) //resume:step name=X
	_, _ = resume.Await[int](ctx, name, 0) // want "^resume.Await: its event name \\(name\\) is not a constant string: it is the wait's journal name and the name a Signal addresses, so it must be the same each time the run resumes; write a string literal or a constant \\(\"approval\"\\), and pass what varies in the payload$"
	_, _ = resume.Await[int](ctx, "order-"+name, 0) // want "^resume.Await: its event name \\(\"order-\" \\+ name\\) is not a constant string"
	_, _ = resume.Await[int](ctx, "has space", 0) // want "^resume.Await: bad event name \"has space\": an event name is a step name, letters, digits, '_', '.', '-' or '/'$"
	_, _ = resume.Await[int](ctx, "", 0) // want "^resume.Await: bad event name \"\":"
	_, _ = resume.Await[chan int](ctx, "ch", 0) // want "^resume.Await \"ch\": payload type chan int cannot be journaled as JSON: chan int is a channel, which JSON cannot encode$"
	_, _ = resume.Await[any](ctx, "any", 0) // want "^resume.Await \"any\": payload type any cannot be journaled as JSON: any is an interface"
	_, _ = resume.Await[Payload](ctx, approval, time.Hour)
	_, _ = resume.Await[*Payload](ctx, string(shipped), 0)
	_, _ = resume.Await[[]int](ctx, "a"+"/b.c_d-e", 0)
	_ = resume.SleepUntil(ctx, time.Time{})
	return inHelper(ctx)
}

func inHelper(ctx context.Context) error {
	_, err := resume.Await[func()](ctx, "fn", 0) // want "^resume.Await \"fn\": payload type func\\(\\) cannot be journaled as JSON"
	return err
}
`)
}
