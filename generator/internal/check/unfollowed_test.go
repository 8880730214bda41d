package check_test

import (
	"testing"

	"github.com/resumegen/resumegen/generator/internal/check"
	"github.com/resumegen/resumegen/generator/internal/pipetest"
)

// A function that is a journaled call or reaches one, used as a value, is
// refused where it is used: whatever calls the value runs it outside the
// journal. That covers the runtime's waits, steps, workflows and helpers
// reaching a step or a wait, of the package (as functions, method values,
// method expressions, instantiations, and an interface method declared a
// step) and of another module (pipetest reads only package p from
// source, so package other stands for another module's, whose source is
// read by name). Functions reaching nothing, interface method values and
// callees are accepted. (A function of another package of the module is
// followed by types: see TestUnfollowedModuleValues.)
func TestUnfollowedValues(t *testing.T) {
	pipetest.Want(t, check.Unfollowed, `package p

import (
	"context"
	"sort"
	"time"

	"github.com/resumegen/resumegen/generator/internal/check/testdata/other"
	"github.com/resumegen/resumegen/runtime/resume"
)

//resume:step
func S(ctx context.Context) error { return nil }

func helper(ctx context.Context) error { return S(ctx) }

func waits(ctx context.Context) error { return resume.Sleep(ctx, time.Second) }

func gen[T any](ctx context.Context) error { return S(ctx) }

func pure(ctx context.Context) error { return nil }

type Svc struct{}

func (s *Svc) Run(ctx context.Context) error { return S(ctx) }

type Runner interface{ Run(ctx context.Context) error }

type Stepper interface {
	//resume:step
	Run(ctx context.Context) error
}

//resume:workflow
func Child(ctx context.Context) error { return S(ctx) }

//resume:workflow
func W(ctx context.Context, r Runner, st Stepper) error {
	sl := resume.Sleep // want "^resume.Sleep is used here as a value: a wait is a journaled point of the workflow, and the generator only sees a direct call; call resume.Sleep directly in the workflow body or in a helper it calls$"
	aw := resume.Await[int] // want "^resume.Await is used here as a value"
	s := S // want "^S is a //resume:step, and is used here as a value: whatever calls the value runs it outside the journal; call S directly in the workflow body or in a helper it calls$"
	h := helper // want "^helper calls step S at p.go:15:49, and is used here as a value: whatever calls the value runs it outside the journal; call helper directly"
	wt := waits // want "^waits calls resume.Sleep at p.go:17:48, and is used here as a value"
	g := gen[int] // want "^gen calls step S at p.go:19:53, and is used here as a value"
	c := Child // want "^Child is a //resume:workflow, whose call from a workflow is a child run, and is used here as a value: whatever calls the value runs it outside the journal; call Child directly"
	svc := &Svc{}
	m := svc.Run // want "^Svc.Run calls step S at p.go:25:55, and is used here as a value"
	me := (*Svc).Run // want "^Svc.Run calls step S at p.go:25:55, and is used here as a value"
	oc := other.Child // want "^other.Child is a //resume:workflow, whose call from a workflow is a child run, and is used here as a value: whatever calls the value runs it outside the journal; call other.Child directly in the workflow body or in a helper it calls$"
	os := other.Send // want "^other.Send is a //resume:step, and is used here as a value: whatever calls the value runs it outside the journal; call other.Send directly"
	on := other.Notify // want "^other.Notify is a function of another module that calls step Send, and is used here as a value: whatever calls the value runs that outside the journal; move the helper into this module and call it directly, or mark it //resume:step$"
	op := other.Pause // want "^other.Pause is a function of another module that waits with resume.Sleep, and is used here as a value: .*, or call resume.Sleep in the workflow body$"
	sr := st.Run // want "^Stepper.Run is a //resume:step, and is used here as a value: whatever calls the value runs it outside the journal; call Stepper.Run directly"
	_ = []any{sl, aw, s, h, wt, g, c, m, me, oc, os, on, op, sr}
	_ = []any{pure, other.Pure, r.Run, sort.Ints, time.Now}
	_ = helper(ctx)
	return inHelper(ctx)
}

func inHelper(ctx context.Context) error {
	f := S // want "^S is a //resume:step, and is used here as a value: .* \\(in inHelper, called from W via inHelper\\)$"
	_ = f
	return nil
}
`)
}

// A call the step search cannot follow is refused when it may reach a
// journaled call: through a function value that a function reaching one
// could be (as a function or a method expression), of an interface method
// that such a method implements, and of a function of another module
// (package other, see TestUnfollowedValues) that reaches a step, a wait
// or a workflow. Calls of other modules' functions reaching nothing
// (other.Pure, strings.ToUpper), of steps, children and interface steps,
// of builtins, conversions, literals called in place, and through values
// of another type are accepted.
func TestUnfollowedCalls(t *testing.T) {
	pipetest.Want(t, check.Unfollowed, `package p

import (
	"context"
	"strings"

	"github.com/resumegen/resumegen/generator/internal/check/testdata/other"
)

//resume:step
func S(ctx context.Context) error { return nil }

//resume:workflow
func Child(ctx context.Context, n int) (int, error) { return n, S(ctx) }

// Early implements Runner, but its Run reaches nothing: its other method
// reaching a step is no implementation of Runner.Run.
type Early struct{}

func (Early) Other(ctx context.Context, n int) error { return S(ctx) }

func (Early) Run(ctx context.Context, n int) error { return nil }

type Svc struct{}

func (s *Svc) Run(ctx context.Context, n int) error { return S(ctx) }

type Value struct{}

func (Value) Do(ctx context.Context, n string) error { return S(ctx) }

type Runner interface{ Run(ctx context.Context, n int) error }

type Doer interface{ Do(ctx context.Context, n string) error }

type Other interface{ Run(ctx context.Context, n int) bool }

type Stepper interface {
	//resume:step
	Run(ctx context.Context, n int) error
}

var hook = S

//resume:workflow
func W(ctx context.Context, fn func(context.Context) error, c func(context.Context, int) (int, error), e func(*Svc, context.Context, int) error, r Runner, d Doer, o Other, st Stepper, nf func(int) error) error {
	_ = fn(ctx) // want "^call of fn, a function value, may run S, which has its type and is a //resume:step: the generator cannot follow a call through a function value, so that step would not be journaled; call S directly, or mark the callee //resume:step$"
	_ = hook(ctx) // want "^call of hook, a function value, may run S"
	_, _ = c(ctx, 1) // want "^call of c, a function value, may run Child, which has its type and is a //resume:workflow, whose call from a workflow is a child run: the generator cannot follow a call through a function value, so that step would not be journaled; call Child directly: only a call the generator sees is a child run$"
	_ = e(&Svc{}, ctx, 1) // want "^call of e, a function value, may run Svc.Run, which has its type and calls step S at p.go:26:62:"
	_ = r.Run(ctx, 1) // want "^call of interface method r.Run may run Svc.Run, which implements it and calls step S at p.go:26:62: the generator cannot see which implementation runs, so that step would not be journaled; call the concrete method directly, or mark the interface method //resume:step$"
	_ = d.Do(ctx, "x") // want "^call of interface method d.Do may run Value.Do, which implements it and calls step S"
	_ = other.Notify(ctx) // want "^other.Notify is a function of another module that calls step Send: the generator follows calls into the packages of the main module only, so that step would not be journaled; mark this call //resume:step to journal it as one step, or move the helper into this module$"
	_ = other.Pause(ctx) // want "^other.Pause is a function of another module that waits with resume.Sleep: the generator follows calls into the packages of the main module only, so that wait would not enter the workflow's version; move the helper into this module, or call resume.Sleep in the workflow body$"
	_ = other.StartsChild(ctx) // want "^other.StartsChild is a function of another module that calls workflow Child \\(a child run\\): the generator follows calls into the packages of the main module only"
	_ = o.Run(ctx, 1)
	_ = st.Run(ctx, 1)
	_ = nf(1)
	_ = other.Pure(ctx)
	_ = other.Send(ctx, "x")
	_, _ = other.Child(ctx, 1)
	_, _ = Child(ctx, 1)
	_ = strings.ToUpper("x")
	_ = len("x") + int(3.0)
	func() {}()
	return inHelper(ctx, fn)
}

func inHelper(ctx context.Context, fn func(context.Context) error) error {
	return fn(ctx) // want "^call of fn, a function value, may run S, .* \\(in inHelper, called from W via inHelper\\)$"
}
`)
}

// A function of another package of the module that runs a step (or is
// one, or a workflow) used as a value is refused, as one of the
// workflow's own package is, naming what it runs and where; calling it is
// followed, and a function reaching nothing is accepted as a value.
func TestUnfollowedModuleValues(t *testing.T) {
	pipetest.WantModule(t, check.Unfollowed, map[string]string{
		"p.go": `package p

import (
	"context"

	"example.com/p/util"
)

//resume:workflow
func W(ctx context.Context) error {
	n := util.Notify // want "^util.Notify calls step Send at util/util.go:9:49, and is used here as a value: whatever calls the value runs it outside the journal; call util.Notify directly in the workflow body or in a helper it calls$"
	s := util.Send   // want "^util.Send is a //resume:step, and is used here as a value"
	c := util.Child  // want "^util.Child is a //resume:workflow, whose call from a workflow is a child run, and is used here as a value"
	_ = []any{n, s, c, util.Pure}
	return util.Notify(ctx)
}
`,
		"util/util.go": `package util

import "context"

//resume:step
func Send(ctx context.Context) error { return nil }

// Notify calls a step.
func Notify(ctx context.Context) error { return Send(ctx) }

// Pure runs nothing.
func Pure(ctx context.Context) error { return nil }

//resume:workflow
func Child(ctx context.Context) error { return Send(ctx) }
`,
	})
}
