package check

import (
	"go/ast"
	"go/types"

	"golang.org/x/tools/go/types/typeutil"

	"github.com/resumegen/resumegen/generator/internal/model"
	"github.com/resumegen/resumegen/generator/internal/runtimeapi"
)

// Placement refuses a journaled call, or a call of a helper reaching one,
// whose order the journal cannot reproduce: in a go statement, a function
// literal not called where written, a select, a range over a map or a
// map's iterator, or over a channel the body does not own; and a wait in a
// deferred call. It refuses the calls of helpers reaching steps that the
// generator cannot copy: generic ones, method expressions, methods
// promoted through an embedded field.
var Placement = &Check{
	Name: "placement",
	Doc:  "journaled calls stand where the journal can replay them in order",
	Run: func(p *Pass) {
		p.workflows(func(pkg *model.Package, w *model.Workflow) {
			for _, s := range w.Calls {
				if s.Where != model.Ordered {
					p.Errorf(s.Call.Pos(), "%s is called %s%s", s.What(), whyNot(s.Where, s.WhereDetail), s.In.Via())
				}
			}
			for _, hc := range w.Blocked {
				blocked(p, pkg, hc)
			}
		})
	},
}

// whyNot says why a journaled call may not stand where it does.
func whyNot(where model.Where, detail string) string {
	switch where {
	case model.InGo:
		return "in a go statement: it would run concurrently with the steps after it, in no fixed order; call it directly in the workflow body, or start the goroutine inside a step; " +
			"to run child workflows in parallel, fan them out with resume.Map(ctx, items, func(ctx context.Context, it T) (R, error) { return Child(ctx, it) //resume:step key=it.ID })"
	case model.InFuncLit:
		return "inside a function literal: a closure may run later, several times or never, so the journal cannot order it; call the step directly in the workflow body, or call the literal where it is written (func() { ... }())"
	case model.InSelect:
		return "inside select: which case runs is not deterministic, so a resume could take another branch; choose the branch first (for example in a step) and call the step after the select"
	case model.InMapSeq:
		return "in a range over " + detail + ": it yields in map order, which is random, so a resume would replay its occurrences against other keys; range over sorted keys instead (slices.Sorted(maps.Keys(m)))"
	case model.InMapRange:
		return "in a range over a map: map order is random, so a resume would replay its occurrences against other keys; range over sorted keys instead (slices.Sorted(maps.Keys(m)))"
	case model.InChanRange:
		return "in a range over a channel the workflow body does not own: received values are not journaled, so a resume would see other values; " +
			"receive them in a step that returns a slice and range over that, or make, fill and close the channel in the body itself"
	case model.InMapNoKey:
		return "inside resume.Map without key=: each item's calls are journaled by key, and an item dispatched again on a later entry would shift the numbers of unkeyed calls; end its line with //resume:step key=EXPR (the item's id)"
	case model.InMapWait:
		return "inside resume.Map: an item cannot wait (its key would shift when items are dispatched again); wait in a child workflow the item calls, or before or after the Map"
	case model.InDefer:
		return "in a deferred call: it would run as the function returns, also after a failed step or while the run is being suspended, where the journal cannot order a wait; wait in the body before returning instead"
	}
	return ""
}

// blocked reports a call of a function reaching a step that the step
// search did not enter.
func blocked(p *Pass, pkg *model.Package, hc *model.HelperCall) {
	name := model.QualifiedName(hc.Callee, pkg.Load.Types)
	runs := runsWhat(pkg, hc.Witness)
	via := hc.In.Via()
	switch {
	case hc.Where != model.Ordered:
		p.Errorf(hc.Call.Pos(), "call of %s, which runs %s, is %s%s", name, runs, whyNot(hc.Where, hc.WhereDetail), via)
	case hc.Uncopyable == model.Generic:
		fix := ", or mark it //resume:step"
		if fn, _ := typeutil.Callee(pkg.Calls.Steps.Info(hc.Witness.Pos()), hc.Witness).(*types.Func); runtimeapi.WaitOf(fn) != runtimeapi.NotWait {
			fix = "" // a step cannot wait
		}
		p.Errorf(hc.Call.Pos(), "%s runs %s and is generic: the generator does not copy generic helpers; make %s non-generic%s%s", name, runs, name, fix, via)
	case hc.Uncopyable == model.MethodExpression:
		p.Errorf(hc.Call.Pos(), "%s runs %s and is called as a method expression: call it on a value (x.%s(...)) so the generator can journal its steps%s", name, runs, hc.Callee.Name(), via)
	case hc.Uncopyable == model.ViaEmbedded:
		p.Errorf(hc.Call.Pos(), "%s runs %s and is reached here through an embedded field: name the field (x.%s.%s(...)) so the generator can journal its steps%s", name, runs, hc.Embedded, hc.Callee.Name(), via)
	case hc.Uncopyable == model.NoContext:
		p.Errorf(hc.Call.Pos(), "%s runs %s, whose callee takes no context.Context, and has no named context.Context parameter to pass the run's context on: add one (ctx context.Context) to %s and pass the workflow's ctx%s", name, runs, name, via)
	case hc.Uncopyable == model.BadKey:
		p.Errorf(hc.Call.Pos(), "%s runs %s, whose call in %s cannot be journaled as written (its key= does not type-check, or its type arguments or receiver cannot be told): fix the call in %s%s", name, runs, name, name, via)
	}
}

// runsWhat names the journaled call a helper reaches, for messages: "step
// NotifyOwner" (a step or a child workflow's call), or a wait,
// "resume.Sleep" or `resume.Await "approval"`, which is no step.
func runsWhat(pkg *model.Package, call *ast.CallExpr) string {
	if call == nil {
		return "step " + pkg.StepNameAt(call)
	}
	if fn, _ := typeutil.Callee(pkg.Calls.Steps.Info(call.Pos()), call).(*types.Func); runtimeapi.WaitOf(fn) != runtimeapi.NotWait {
		return pkg.WaitNameAt(call, fn)
	}
	return "step " + pkg.StepNameAt(call)
}

// HelperContext refuses a step in a helper whose callee takes no
// context.Context when the helper has no context parameter to pass the
// run's context on: the wrapper needs it.
var HelperContext = &Check{
	Name: "helpercontext",
	Doc:  "a helper calling a step without a context parameter has a context.Context to pass it",
	Run: func(p *Pass) {
		p.workflows(func(pkg *model.Package, w *model.Workflow) {
			for _, h := range w.Helpers {
				if h.CtxName != "" {
					continue
				}
				for _, s := range w.Steps {
					if s.TakesCtx || s.In.Decl != h.Decl {
						continue
					}
					p.Errorf(s.Call.Pos(), "step %s takes no context.Context and %s has no named context.Context parameter to pass the run's context on: add one (ctx context.Context) and pass the workflow's ctx%s", s.Name, h.Display, s.In.Via())
				}
			}
		})
	},
}
