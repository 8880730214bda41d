package check_test

import (
	"testing"

	"github.com/resumegen/resumegen/generator/internal/check"
	"github.com/resumegen/resumegen/generator/internal/pipetest"
)

// A call-site directive (a step or an allow) in a function no workflow
// reaches is refused, also in a method and in a function that only a
// function of no workflow calls; one in the body, in a helper the body
// calls directly or through another helper, and in a helper only a second
// workflow calls marks its call and is accepted. So is one in an exported
// function (and what it calls), which a workflow of another package may
// call.
func TestUnreached(t *testing.T) {
	pipetest.Want(t, check.Unreached, `package p

import (
	"context"
	"time"
)

//resume:workflow
func W(ctx context.Context) error {
	_ = Plain(ctx) //resume:step name=InBody
	_ = outer(ctx)
	return nil
}

//resume:workflow
func V(ctx context.Context) error { return onlyV(ctx) }

func outer(ctx context.Context) error { return inner(ctx) }

func inner(ctx context.Context) error {
	return Plain(ctx) //resume:step name=Inner
}

func onlyV(ctx context.Context) error {
	return Plain(ctx) //resume:step name=OnlyV
}

func never(ctx context.Context) {
	// wantnext "^//resume:step name=Never: directive inside never, which is neither a //resume:workflow nor a function a workflow body calls: a call-site directive only marks calls in a workflow body or in the helpers it calls$"
	_ = Plain(ctx) //resume:step name=Never
	// wantnext "^//resume:allow nondeterministic reason=\"x\": directive inside never, which is neither"
	_ = time.Now() //resume:allow nondeterministic reason="x"
	calledByNever(ctx)
}

func calledByNever(ctx context.Context) {
	// wantnext "^//resume:step name=Deeper: directive inside calledByNever, which is neither"
	_ = Plain(ctx) //resume:step name=Deeper
}

type T struct{}

func (T) m(ctx context.Context) {
	// wantnext "^//resume:step name=Method: directive inside m, which is neither"
	_ = Plain(ctx) //resume:step name=Method
}

func Exported(ctx context.Context) { exportedCalls(ctx) }

func exportedCalls(ctx context.Context) {
	_ = Plain(ctx) //resume:step name=ForOthers
}

func Plain(ctx context.Context) error { return nil }
`)
}

// A helper the workflow calls where the step search does not follow it
// (in a go statement, a deferred call of one that waits, a generic
// helper) has its call refused by the placement check; the directives in
// it, and in what it calls, are not refused a second time as unreached:
// the body does call it, and once the call is fixed they mark their calls.
func TestUnreachedLeavesRefusedCallsToPlacement(t *testing.T) {
	pipetest.Want(t, check.Unreached, `package p

import (
	"context"
	"time"

	"github.com/resumegen/resumegen/runtime/resume"
)

//resume:workflow
func W(ctx context.Context) error {
	go inGo(ctx)
	defer waits(ctx)
	generic[int](ctx)
	return nil
}

func inGo(ctx context.Context) {
	_ = Plain(ctx) //resume:step name=InGo
	_ = time.Now() //resume:allow nondeterministic reason="in go"
	below(ctx)
}

func below(ctx context.Context) {
	_ = Plain(ctx) //resume:step name=Below
}

func waits(ctx context.Context) {
	_ = resume.Sleep(ctx, time.Second)
	_ = Plain(ctx) //resume:step name=Waits
}

func generic[T any](ctx context.Context) {
	_ = Plain(ctx) //resume:step name=Generic
}

func Plain(ctx context.Context) error { return nil }
`)
}
