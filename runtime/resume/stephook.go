package resume

import (
	"context"
	"fmt"
	"reflect"

	"github.com/resumegen/resumegen/runtime/internal/stephook"
)

// The test harness's seam (package runtime/resumetest): a hook in a run's
// context sees each execution of a step's code through [Callee], and
// stephook.Describe tells the harness a workflow's steps.

func init() { stephook.Describe = describe }

// callee returns fn, or what the hook in ctx hands the step whose code is
// about to execute in its place.
func callee[F any](ctx context.Context, fn F) F {
	h := stephook.From(ctx)
	if h == nil {
		return fn
	}
	info, ok := StepFromContext(ctx)
	if !ok {
		return fn // the step function called directly, outside a run
	}
	got := h.Callee(stephook.Step{
		RunID: info.RunID, Workflow: info.Workflow, StepKey: info.StepKey,
		Name: info.Name, Policy: info.Policy.String(), Attempt: info.Attempt,
	}, fn)
	f, ok := got.(F)
	if !ok {
		panic(fmt.Sprintf("resume: run %s, step %s: the test double is a %T, but the step calls a %s", info.RunID, info.StepKey, got, reflect.TypeFor[F]()))
	}
	return f
}

// reached tells the hook in ctx, if any, that the body reached step key
// of def.
func (st *runState) reached(ctx context.Context, def *StepDef, key string) {
	if h := stephook.From(ctx); h != nil {
		h.Reached(stephook.Step{RunID: st.run.RunID, Workflow: st.run.Workflow, StepKey: key, Name: def.Name, Policy: def.Policy.String(), Entry: st})
	}
}

// describe describes the registered workflow wf, a function or a
// qualified name.
func describe(wf any) (stephook.Workflow, error) {
	var def *WorkflowDef
	if name, ok := wf.(string); ok {
		d, found := Lookup(name)
		if !found {
			return stephook.Workflow{}, fmt.Errorf("resume: no registered workflow is named %s", name)
		}
		def = d
	} else {
		d, err := lookupFunc(wf)
		if err != nil {
			return stephook.Workflow{}, err
		}
		def = d
	}
	out := stephook.Workflow{Name: def.QualifiedName()}
	for _, s := range def.Steps {
		d := stephook.StepDesc{Name: s.Name, Signature: s.Signature, Policy: s.Policy.String(), JSON: s.JSON}
		if s.Child {
			d.Child = s.Callee
		}
		out.Steps = append(out.Steps, d)
	}
	return out, nil
}
