package generator

import (
	"go/ast"
	"go/types"
	"strings"
)

// A workflow called from a workflow body, directly or through a helper the
// step search follows, is a child run: a run of its own, with its own
// journal and version, whose outcome (value and error) the parent journals
// as the outcome of the call's step. The call site is a step of the parent
// like any other (named after the callee, name= and key= at the call site
// work, the placement rules apply), with the policy "child" in the
// manifest and in the version's canonical line; its wrapper calls
// resume.CallChild instead of resume.Call (see childWrapper).

// policyChild is the policy a child call's step shows in the manifest and
// in the canonical line the version hashes.
const policyChild = "child"

// isWorkflowFunc reports whether fn is a //resume:workflow function: of
// this package, or of another package of the module (read from source).
func (m *packageModel) isWorkflowFunc(fn *types.Func) bool {
	return m.workflowFuncs[fn] || m.foreignWorkflow(fn)
}

// childAt returns the step of call, a call of the workflow fn, or nil after
// reporting why it cannot be one. Only name= and key= apply at a child call
// site: the child's own steps carry their policies.
func (m *packageModel) childAt(w *Workflow, call *ast.CallExpr, fn *types.Func, ds *diagnostics) *Step {
	site, hasSite := m.siteDirectives[call.Lparen]
	if hasSite {
		if bad := site.opts.policyOptions(); bad != "" {
			ds.errorf(site.pos, "%s: a call of workflow %s is a child run, which takes no %s: the child's own steps carry their policies and retries; keep only name= and key= here, and set the options on the steps inside %s", site.text, fn.Name(), bad, fn.Name())
			return nil
		}
	}
	if cur, old := m.oldFuncs[fn]; old {
		ds.errorf(call.Pos(), "%s is an old version of workflow %s, kept only to finish the runs pinned to it: it starts no run, so it cannot run as a child; call %s", fn.Name(), cur, cur)
		return nil
	}
	sig := fn.Type().(*types.Signature)
	if sig.Recv() != nil {
		ds.errorf(call.Pos(), "workflow %s is a method: calling it from a workflow as a child run is not supported yet; make the child a function that takes what it needs as input, or call its steps here", fn.Name())
		return nil
	}
	if fn.Pkg() != m.pkg.Types && !m.checkForeignChild(fn, sig, call, ds) {
		return nil
	}
	if sig.TypeParams().Len() > 0 || sig.Params().Len() == 0 || !isContext(sig.Params().At(0).Type()) || !resultsOK(sig.Results()) {
		// The workflow's own declaration is refused (checkWorkflow).
		return nil
	}
	if !m.checkChildPointers(fn, sig, call, ds) {
		return nil
	}
	s := &Step{call: call, fn: fn, sig: sig, Policy: policyChild, child: true, takesCtx: true}
	s.values, s.hasErr, _ = splitResults(sig.Results())
	if hasSite {
		s.opts.name, s.opts.key = site.opts.name, site.opts.key
		s.opts.renamed, s.opts.renamedPos = site.opts.renamed, site.opts.renamedPos
	}
	s.Callee, s.display = calleeNames(fn, w.pkg.Types)
	s.Name = fn.Name()
	if s.opts.name != "" {
		s.Name = s.opts.name
	}
	bare := bareSignature(sig)
	s.canonSig = types.TypeString(bare, nil)
	s.Signature = types.TypeString(bare, nameQualifier(w.pkg.Types))
	// The parent journals the child's output as this step's result.
	s.JSON = journaledType(s, sig.Params(), nameQualifier(m.pkg.Types))
	if res := sig.Results(); res.Len() == 2 {
		s.Shape = jsonShape("result", res.At(0).Type(), nameQualifier(m.pkg.Types))
	}
	if s.opts.key != "" {
		if sig.Variadic() {
			ds.errorf(site.pos, "%s: key= on a call of the variadic workflow %s is not supported: give %s a slice parameter instead", site.text, fn.Name(), fn.Name())
			return nil
		}
		key, err := m.checkKey(s.opts.key, call, sig)
		if err != nil {
			ds.errorf(site.pos, "%s: %v", site.text, err)
			return nil
		}
		s.key = key
	}
	return s
}

// policyOptions names the options of o that set a step's delivery policy
// or tuning (once, tx, retry=, backoff=, timeout=), or "".
func (o stepOptions) policyOptions() string {
	var bad []string
	if o.hasPolicy {
		bad = append(bad, string(o.policy))
	}
	if o.attempts != 0 {
		bad = append(bad, "retry=")
	}
	if o.hasBackoff {
		bad = append(bad, "backoff=")
	}
	if o.timeout != 0 {
		bad = append(bad, "timeout=")
	}
	return strings.Join(bad, ", ")
}

// checkForeignChild checks, at the call, the signature of a workflow of
// another package: its own package's check is not run here, and the
// parent journals its input (in the child run) and its output (as the
// step's result), so both must round-trip through JSON.
func (m *packageModel) checkForeignChild(fn *types.Func, sig *types.Signature, call *ast.CallExpr, ds *diagnostics) bool {
	q := nameQualifier(m.pkg.Types)
	name := fn.Pkg().Name() + "." + fn.Name()
	pos := call.Pos()
	if sig.TypeParams().Len() > 0 {
		ds.errorf(pos, "child workflow %s: a workflow cannot be generic", name)
		return false
	}
	params := sig.Params()
	if params.Len() == 0 || !isContext(params.At(0).Type()) {
		ds.errorf(pos, "child workflow %s: the first parameter must be a context.Context (the run's context)", name)
		return false
	}
	ok := true
	for i := 1; i < params.Len(); i++ {
		t := params.At(i).Type()
		if sig.Variadic() && i == params.Len()-1 {
			t = t.(*types.Slice).Elem()
		}
		if err := journalable(t, q); err != nil {
			ds.errorf(pos, "child workflow %s: parameter type %s cannot be journaled as JSON (it is the child run's input): %v", name, types.TypeString(t, q), err)
			ok = false
		}
	}
	res := sig.Results()
	if !resultsOK(res) {
		ds.errorf(pos, "child workflow %s: returns %s; a workflow must return error or (T, error)", name, tupleString(res, q))
		return false
	}
	if res.Len() == 2 {
		if err := journalable(res.At(0).Type(), q); err != nil {
			ds.errorf(pos, "child workflow %s: result type %s cannot be journaled as JSON (it is the child run's output and this step's result): %v", name, types.TypeString(res.At(0).Type(), q), err)
			ok = false
		}
	}
	return ok
}

// refuseWorkflowSteps refuses a function marked both //resume:workflow and
// //resume:step: a call of a workflow is a child run, journaled as a step
// of the caller, so the step directive would say nothing true.
func (m *packageModel) refuseWorkflowSteps(ds *diagnostics) {
	for _, w := range m.workflows {
		fn, _ := m.pkg.TypesInfo.Defs[w.decl.Name].(*types.Func)
		if _, ok := m.stepDecls[fn]; fn == nil || !ok {
			continue
		}
		delete(m.stepDecls, fn)
		ds.errorf(w.decl.Name.Pos(), "workflow %s is also marked //resume:step: a call of a workflow from a workflow is a child run, journaled as a step of the caller with the child's own steps inside; remove //resume:step (name= and key= may go at the call site)", w.Name)
	}
}

// what names the step for messages: "step Notify", or "child workflow
// Notify (step Notify)" for a call of a workflow.
func (s *Step) what() string {
	if !s.child {
		return "step " + s.Name
	}
	if s.Name != s.fn.Name() {
		return "child workflow " + s.fn.Name() + " (step " + s.Name + ")"
	}
	return "child workflow " + s.Name
}

// checkChildPointers refuses a child call of a workflow that takes a
// pointer: the child run gets its input decoded from the journal, so what
// it writes through the pointer would reach the caller as a plain call but
// never from a child run.
func (m *packageModel) checkChildPointers(fn *types.Func, sig *types.Signature, call *ast.CallExpr, ds *diagnostics) bool {
	ok := true
	params := sig.Params()
	for i := 1; i < params.Len(); i++ {
		t := params.At(i).Type()
		if _, ptr := t.Underlying().(*types.Pointer); !ptr {
			continue
		}
		ds.errorf(call.Pos(), "child workflow %s takes %s: a child run decodes its input from the journal, so what it writes through the pointer never reaches this caller; pass the value and return what %s computes", fn.Name(), typeString(t, m.pkg.Types), fn.Name())
		ok = false
	}
	return ok
}
