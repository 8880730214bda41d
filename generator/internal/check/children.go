package check

import (
	"go/types"

	"github.com/resumegen/resumegen/generator/internal/model"
)

// Children refuses a child workflow's call the runtime cannot run as a
// child run: with a policy or tuning option at the call (the child's
// steps carry theirs), of an old version, of a workflow that is a method,
// of another package's workflow whose signature or journaled input and
// output a workflow may not have, of a workflow taking a pointer (its
// writes would never reach the caller), and a key= on a variadic workflow
// or one that cannot be a key, and a direct call of a workflow of a queue
// (it would execute in its parent's slot, past the queue's limits).
var Children = &Check{
	Name: "children",
	Doc:  "a call of a workflow runs as a child run",
	Run: func(p *Pass) {
		p.workflows(func(pkg *model.Package, w *model.Workflow) {
			for _, s := range w.Calls {
				if s.Child {
					child(p, pkg, s)
				}
			}
		})
	},
}

func child(p *Pass, pkg *model.Package, s *model.Step) {
	fn, sig, site := s.Fn, s.Sig, s.Site
	if site != nil {
		if bad := site.Step.PolicyOptions(); bad != "" {
			p.Errorf(site.Pos, "%s: a call of workflow %s is a child run, which takes no %s: the child's own steps carry their policies and retries; keep only name= and key= here, and set the options on the steps inside %s", site.Text, fn.Name(), bad, fn.Name())
			return
		}
	}
	if q := s.ChildQueue; q != "" && !s.InMap {
		p.Errorf(s.Call.Pos(), "workflow %s runs in queue %s, but a child run called here executes inside its parent's run, not through the queue, and its limits would not hold: start it with resume.Map (a detached child, claimed through its queue), or drop queue= from %s", fn.Name(), q, fn.Name())
		return
	}
	if cur := s.ChildOld; cur != "" {
		p.Errorf(s.Call.Pos(), "%s is an old version of workflow %s, kept only to finish the runs pinned to it: it starts no run, so it cannot run as a child; call %s", fn.Name(), cur, cur)
		return
	}
	if sig.Recv() != nil {
		p.Errorf(s.Call.Pos(), "workflow %s is a method: calling it from a workflow as a child run is not supported yet; make the child a function that takes what it needs as input, or call its steps here", fn.Name())
		return
	}
	if fn.Pkg() != pkg.Load.Types && !foreignChild(p, pkg, s) {
		return
	}
	if sig.TypeParams().Len() > 0 || sig.Params().Len() == 0 || !model.IsContext(sig.Params().At(0).Type()) || !model.ResultsOK(sig.Results()) {
		return // the workflow's own declaration is refused
	}
	if !childPointers(p, pkg, s) {
		return
	}
	if s.Opts.Key == "" {
		return
	}
	if sig.Variadic() {
		p.Errorf(site.Pos, "%s: key= on a call of the variadic workflow %s is not supported: give %s a slice parameter instead", site.Text, fn.Name(), fn.Name())
		return
	}
	if s.KeyExpr != nil && s.KeyExpr.Err != nil {
		p.Errorf(site.Pos, "%s: %v", site.Text, s.KeyExpr.Err)
	}
}

// foreignChild checks, at the call, the signature of a workflow of
// another package: its own package's check is not run here, and the
// parent journals its input (in the child run) and its output (as the
// step's result), so both must round-trip through JSON.
func foreignChild(p *Pass, pkg *model.Package, s *model.Step) bool {
	fn, sig := s.Fn, s.Sig
	q := model.NameQualifier(pkg.Load.Types)
	name := fn.Pkg().Name() + "." + fn.Name()
	pos := s.Call.Pos()
	if sig.TypeParams().Len() > 0 {
		p.Errorf(pos, "child workflow %s: a workflow cannot be generic", name)
		return false
	}
	params := sig.Params()
	if params.Len() == 0 || !model.IsContext(params.At(0).Type()) {
		p.Errorf(pos, "child workflow %s: the first parameter must be a context.Context (the run's context)", name)
		return false
	}
	ok := true
	for i := 1; i < params.Len(); i++ {
		t := params.At(i).Type()
		if sig.Variadic() && i == params.Len()-1 {
			t = t.(*types.Slice).Elem()
		}
		if err := journaled(t, q); err != nil {
			p.Errorf(pos, "child workflow %s: parameter type %s cannot be journaled as JSON (it is the child run's input): %v", name, types.TypeString(t, q), err)
			ok = false
		}
	}
	res := sig.Results()
	if !model.ResultsOK(res) {
		p.Errorf(pos, "child workflow %s: returns %s; a workflow must return error or (T, error)", name, model.TupleString(res, q))
		return false
	}
	if res.Len() == 2 {
		if err := journaled(res.At(0).Type(), q); err != nil {
			p.Errorf(pos, "child workflow %s: result type %s cannot be journaled as JSON (it is the child run's output and this step's result): %v", name, types.TypeString(res.At(0).Type(), q), err)
			ok = false
		}
	}
	return ok
}

// childPointers refuses a child call of a workflow that takes a pointer:
// the child run gets its input decoded from the journal, so what it
// writes through the pointer would reach the caller as a plain call but
// never from a child run.
func childPointers(p *Pass, pkg *model.Package, s *model.Step) bool {
	ok := true
	params := s.Sig.Params()
	for i := 1; i < params.Len(); i++ {
		t := params.At(i).Type()
		if _, ptr := t.Underlying().(*types.Pointer); !ptr {
			continue
		}
		p.Errorf(s.Call.Pos(), "child workflow %s takes %s: a child run decodes its input from the journal, so what it writes through the pointer never reaches this caller; pass the value and return what %s computes", s.Fn.Name(), model.TypeString(t, pkg.Load.Types), s.Fn.Name())
		ok = false
	}
	return ok
}
