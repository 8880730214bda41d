package resume

import (
	"context"
	"fmt"
	"reflect"
)

// Typed ways to run a workflow, one per shape: the compiler checks the
// arguments against the workflow's parameters. Run (one input) is in
// engine.go. Each starts run runID, or attaches to it, executes it in this
// process and returns its output, as [Engine.Start] does; a workflow
// whose result is only an error has the Do forms.

// Run0 is [Run] for a workflow without input.
func Run0[Out any](ctx context.Context, e *Engine, runID string, wf func(context.Context) (Out, error)) (Out, error) {
	return runTyped[Out](ctx, e, runID, wf)
}

// Run2 is [Run] for a workflow of two inputs.
func Run2[In1, In2, Out any](ctx context.Context, e *Engine, runID string, wf func(context.Context, In1, In2) (Out, error), in1 In1, in2 In2) (Out, error) {
	return runTyped[Out](ctx, e, runID, wf, in1, in2)
}

// Run3 is [Run] for a workflow of three inputs.
func Run3[In1, In2, In3, Out any](ctx context.Context, e *Engine, runID string, wf func(context.Context, In1, In2, In3) (Out, error), in1 In1, in2 In2, in3 In3) (Out, error) {
	return runTyped[Out](ctx, e, runID, wf, in1, in2, in3)
}

// Do0 runs a workflow without input whose result is only an error; see
// [Run].
func Do0(ctx context.Context, e *Engine, runID string, wf func(context.Context) error) error {
	_, err := e.Start(ctx, runID, wf)
	return err
}

// Do runs a workflow of one input whose result is only an error; see
// [Run].
func Do[In any](ctx context.Context, e *Engine, runID string, wf func(context.Context, In) error, in In) error {
	_, err := e.Start(ctx, runID, wf, in)
	return err
}

// Do2 is [Do] for a workflow of two inputs.
func Do2[In1, In2 any](ctx context.Context, e *Engine, runID string, wf func(context.Context, In1, In2) error, in1 In1, in2 In2) error {
	_, err := e.Start(ctx, runID, wf, in1, in2)
	return err
}

// Do3 is [Do] for a workflow of three inputs.
func Do3[In1, In2, In3 any](ctx context.Context, e *Engine, runID string, wf func(context.Context, In1, In2, In3) error, in1 In1, in2 In2, in3 In3) error {
	_, err := e.Start(ctx, runID, wf, in1, in2, in3)
	return err
}

func runTyped[Out any](ctx context.Context, e *Engine, runID string, wf any, args ...any) (Out, error) {
	var out Out
	res, err := e.Start(ctx, runID, wf, args...)
	if err != nil {
		return out, err
	}
	return out, res.Decode(&out)
}

// checkArgs refuses args that the workflow function wf cannot take after
// its context, so that a wrong start fails at once, naming the parameter,
// instead of storing a run that fails to decode its input.
func checkArgs(wf any, args []any) error {
	t := reflect.TypeOf(wf)
	if t == nil || t.Kind() != reflect.Func {
		return nil
	}
	first := 1 // the context
	if t.NumIn() > 0 && t.In(0).Kind() != reflect.Interface {
		first = 2 // a method expression: the receiver, then the context
	}
	want := t.NumIn() - first
	if t.IsVariadic() {
		if len(args) < want-1 {
			return fmt.Errorf("the workflow takes at least %d arguments after its context, not %d", want-1, len(args))
		}
	} else if len(args) != want {
		return fmt.Errorf("the workflow takes %d arguments after its context, not %d", want, len(args))
	}
	for i, a := range args {
		p := first + i
		var pt reflect.Type
		switch {
		case t.IsVariadic() && p >= t.NumIn()-1:
			pt = t.In(t.NumIn() - 1).Elem()
		default:
			pt = t.In(p)
		}
		if a == nil {
			switch pt.Kind() {
			case reflect.Pointer, reflect.Interface, reflect.Map, reflect.Slice:
				continue
			}
			return fmt.Errorf("argument %d is nil, but the workflow's parameter is a %s", i+1, pt)
		}
		if at := reflect.TypeOf(a); !at.AssignableTo(pt) {
			return fmt.Errorf("argument %d is a %s, but the workflow's parameter is a %s", i+1, at, pt)
		}
	}
	return nil
}
