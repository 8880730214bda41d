package check_test

import (
	"testing"

	"github.com/resumegen/resumegen/generator/internal/check"
	"github.com/resumegen/resumegen/generator/internal/pipetest"
)

// Two journaled call sites of one workflow with one name are refused at
// the second, with the message of how the names came (callees, name=, an
// await's event name); so is a name starting with "resume.". Sleeps share
// resume.Sleep, a step in a loop or in a helper called twice is one call
// site, and two workflows may each have a step of one name. A call the
// journal cannot order is left to the placement check.
func TestNames(t *testing.T) {
	pipetest.Want(t, check.Names, `package p

import (
	"context"
	"time"

	"github.com/resumegen/resumegen/runtime/resume"
)

//resume:workflow
func W(ctx context.Context) error {
	_ = S(ctx)
	_ = S(ctx) // want "^step name S is already used by the call at p.go:12:6: add //resume:step name=NAME at the end of one call's line to tell them apart$"
	_ = T(ctx) //resume:step name=N
	// wantnext "^step name N is already used by the call at p.go:14:6: both call sites are named N, by name= or by their callee; give one of them another name= \\(//resume:step name=NAME at the end of its line\\)$"
	_ = S(ctx) //resume:step name=N
	_ = N(ctx) // want "^step name N is already used by the call at p.go:14:6: both call sites are named N, by name="
	_, _ = resume.Await[int](ctx, "S", 0) // want "^resume.Await \"S\": name S is already used by the call at p.go:12:6: steps and awaits share the run's journal names; give the await another event name, or the step another name \\(//resume:step name=NAME\\)$"
	_, _ = resume.Await[int](ctx, "ok", 0)
	// wantnext "^step ok: name ok is already used by the call at p.go:19:9: steps and awaits share"
	_ = T(ctx) //resume:step name=ok
	_, _ = resume.Await[int](ctx, "ok", 0) // want "^resume.Await \"ok\": name ok is already used by the call at p.go:19:9: steps and awaits share"
	_ = resume.Sleep(ctx, time.Second)
	_ = resume.SleepUntil(ctx, time.Time{})
	_ = resume.Sleep(ctx, time.Second)
	// wantnext "^step resume.Mine: names starting with \"resume.\" are the runtime's own journal names \\(resume.Sleep names the run's sleeps\\): choose another name$"
	_ = T(ctx) //resume:step name=resume.Mine
	_, _ = resume.Await[int](ctx, "resume.x", 0) // want "^resume.Await \"resume.x\": names starting with \"resume.\" are the runtime's own journal names"
	for range 3 {
		_ = U(ctx)
	}
	_ = twice(ctx)
	_ = twice(ctx)
	go U(ctx)
	go T(ctx) //resume:step name=resume.Go
	return nil
}

func twice(ctx context.Context) error { return V(ctx) }

//resume:workflow
func Other(ctx context.Context) error {
	_ = S(ctx)
	return U(ctx)
}

//resume:step
func S(ctx context.Context) error { return nil }

//resume:step
func T(ctx context.Context) error { return nil }

//resume:step
func U(ctx context.Context) error { return nil }

//resume:step
func V(ctx context.Context) error { return nil }

//resume:step
func N(ctx context.Context) error { return nil }
`)
}
