package generator

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"path/filepath"
	"strings"

	"golang.org/x/tools/go/types/typeutil"
)

// stepSearch is the walk of one workflow's body and of the helpers it
// calls, in source order, that finds the workflow's steps (see findSteps).
type stepSearch struct {
	m  *packageModel
	w  *Workflow
	ds *diagnostics
	// first is the call site that took each step name.
	first map[string]token.Pos
	// entered holds the helpers walked: each once per workflow, at its
	// first call, so a step inside a helper is one step however many
	// times the helper is called, numbered at run time like a loop's.
	entered map[*types.Func]bool
	// callees are the identifiers naming the function of a call: the
	// other uses of a function are as values.
	callees map[*ast.Ident]bool
	// deferred counts the deferred calls the walk is in: a wait may not
	// be called there (see deferredWait), and a step is marked deferred
	// (resume.StepDef.Deferred: it executes while a stopping run unwinds).
	deferred int
	// helperSteps are, per helper walked, the steps its walk found (its
	// own and those of the helpers it entered first), for markDeferred.
	helperSteps map[*types.Func][]*Step
}

// frame is the function whose body a stepSearch walks.
type frame struct {
	body     *ast.BlockStmt // the function's body, for rangeReason
	workflow string         // the workflow's name
	path     []string       // the helpers from the workflow body to here
}

// via names, for a message about code in a helper, the helper and how the
// workflow reaches it: " (in pickOwner, called from Onboard via notifyAll
// → pickOwner)"; it is "" in the workflow body itself.
func (fr *frame) via() string {
	if len(fr.path) == 0 {
		return ""
	}
	return fmt.Sprintf(" (in %s, called from %s via %s)", fr.path[len(fr.path)-1], fr.workflow, strings.Join(fr.path, " → "))
}

// helper is a function or method of the workflow's package that the
// workflow body reaches and that reaches steps: the generated code holds a
// durable copy of it, whose step calls go to the step wrappers.
type helper struct {
	fn       *types.Func
	decl     *ast.FuncDecl
	file     *ast.File
	display  string // pickOwner, Client.notify
	copyName string // resumeOnboard_pickOwner
	// ctxName is the name of the helper's first context.Context
	// parameter, which step calls of callees without one receive, or "".
	ctxName string
}

// helperCall is a call of a helper from the workflow body or a helper:
// the durable code calls the helper's copy instead.
type helperCall struct {
	h *helper
	// method says the call is x.m(...), which becomes copy(x, ...);
	// addr and deref adjust x to the method's receiver type.
	method, addr, deref bool
}

// displayName is fn's name, Type.Method for a method.
func displayName(fn *types.Func) string { return defaultStepName(fn) }

// enter follows the call of callee, a function or method of the package
// declared with a body, into callee's body.
func (s *stepSearch) enter(call *ast.CallExpr, callee *types.Func, why string, fr *frame) {
	m, w, ds := s.m, s.w, s.ds
	name := displayName(callee)
	witness := m.graph.StepCall(callee)
	if witness != nil {
		if why != "" {
			ds.errorf(call.Pos(), "call of %s, which runs step %s, is %s%s", name, m.stepNameAt(witness), why, fr.via())
			return
		}
		if !s.helperCall(call, callee, fr) {
			return
		}
	}
	if s.entered[callee] {
		if s.deferred > 0 {
			s.markDeferred(callee, map[*types.Func]bool{})
		}
		return
	}
	s.entered[callee] = true
	decl := m.graph.Decl(callee)
	m.followed[decl] = true
	w.reached = append(w.reached, decl)
	before := len(w.Steps)
	inner := &frame{body: decl.Body, workflow: fr.workflow, path: append(append([]string(nil), fr.path...), name)}
	s.walk(decl.Body, "", inner)
	s.helperSteps[callee] = w.Steps[before:len(w.Steps):len(w.Steps)]
	if h := s.helperOf(callee); h != nil {
		s.checkHelperContext(h, w.Steps[before:], inner)
	}
}

// markDeferred marks deferred the steps of helper fn, walked first from a
// call that was not deferred and reached again from one, and those of the
// helpers it calls: the steps of a helper are one step each however the
// helper is reached, and one path from a deferred call makes them
// compensations.
func (s *stepSearch) markDeferred(fn *types.Func, seen map[*types.Func]bool) {
	if seen[fn] {
		return
	}
	seen[fn] = true
	for _, st := range s.helperSteps[fn] {
		st.deferred = true
	}
	ast.Inspect(s.m.graph.Decl(fn).Body, func(n ast.Node) bool {
		if call, ok := n.(*ast.CallExpr); ok {
			if callee := s.m.graph.Callee(call); callee != nil && s.entered[callee] {
				s.markDeferred(callee, seen)
			}
		}
		return true
	})
}

// helperCall records the call of a helper that reaches steps, creating the
// helper at its first call; it reports false, after reporting why, when
// the generator cannot copy it.
func (s *stepSearch) helperCall(call *ast.CallExpr, callee *types.Func, fr *frame) bool {
	m, w, ds := s.m, s.w, s.ds
	name := displayName(callee)
	step := m.stepNameAt(m.graph.StepCall(callee))
	sig := callee.Type().(*types.Signature)
	if sig.TypeParams().Len() > 0 || (sig.Recv() != nil && sig.RecvTypeParams().Len() > 0) {
		fix := ", or mark it //resume:step"
		if m.isWaitCall(m.graph.StepCall(callee)) {
			fix = "" // a step cannot wait
		}
		ds.errorf(call.Pos(), "%s runs step %s and is generic: the generator does not copy generic helpers; make %s non-generic%s%s", name, step, name, fix, fr.via())
		return false
	}
	hc := &helperCall{}
	if sel, ok := ast.Unparen(call.Fun).(*ast.SelectorExpr); ok {
		selection := m.pkg.TypesInfo.Selections[sel]
		if selection == nil || selection.Kind() != types.MethodVal {
			ds.errorf(call.Pos(), "%s runs step %s and is called as a method expression: call it on a value (x.%s(...)) so the generator can journal its steps%s", name, step, callee.Name(), fr.via())
			return false
		}
		if len(selection.Index()) > 1 {
			ds.errorf(call.Pos(), "%s runs step %s and is reached here through an embedded field: name the field (x.%s.%s(...)) so the generator can journal its steps%s", name, step, embeddedPath(selection), callee.Name(), fr.via())
			return false
		}
		_, recvPtr := sig.Recv().Type().(*types.Pointer)
		_, xPtr := m.pkg.TypesInfo.TypeOf(sel.X).Underlying().(*types.Pointer)
		hc.method, hc.addr, hc.deref = true, recvPtr && !xPtr, !recvPtr && xPtr
	}
	h := s.helperOf(callee)
	if h == nil {
		decl := m.graph.Decl(callee)
		h = &helper{fn: callee, decl: decl, file: m.fileOf(decl), display: name,
			copyName: "resume" + sanitizeIdent(w.Name) + "_" + sanitizeIdent(name), ctxName: contextParam(m.pkg.TypesInfo, decl)}
		w.helpers = append(w.helpers, h)
	}
	hc.h = h
	w.helperCalls[call.Lparen] = hc
	return true
}

// embeddedPath names the embedded fields a promoted method is reached
// through, for the message: Base or Outer.Base.
func embeddedPath(sel *types.Selection) string {
	var names []string
	t := sel.Recv()
	for _, i := range sel.Index()[:len(sel.Index())-1] {
		if p, ok := t.Underlying().(*types.Pointer); ok {
			t = p.Elem()
		}
		st, ok := t.Underlying().(*types.Struct)
		if !ok {
			break
		}
		names = append(names, st.Field(i).Name())
		t = st.Field(i).Type()
	}
	return strings.Join(names, ".")
}

func (s *stepSearch) helperOf(fn *types.Func) *helper {
	for _, h := range s.w.helpers {
		if h.fn == fn {
			return h
		}
	}
	return nil
}

// checkHelperContext refuses a step of h, among steps, whose callee takes
// no context.Context when h has no context parameter to pass the run's
// context on: the wrapper needs it.
func (s *stepSearch) checkHelperContext(h *helper, steps []*Step, fr *frame) {
	for _, st := range steps {
		if st.takesCtx || h.ctxName != "" || st.call.Pos() < h.decl.Body.Lbrace || st.call.Pos() > h.decl.Body.Rbrace {
			continue
		}
		s.ds.errorf(st.call.Pos(), "step %s takes no context.Context and %s has no named context.Context parameter to pass the run's context on: add one (ctx context.Context) and pass the workflow's ctx%s", st.Name, h.display, fr.via())
	}
}

// contextParam is the name of the first named context.Context parameter of
// decl, or "".
func contextParam(info *types.Info, decl *ast.FuncDecl) string {
	for _, f := range decl.Type.Params.List {
		if !isContext(info.TypeOf(f.Type)) {
			continue
		}
		for _, n := range f.Names {
			if n.Name != "_" {
				return n.Name
			}
		}
	}
	return ""
}

// fileOf returns the file of the package that holds n.
func (m *packageModel) fileOf(n ast.Node) *ast.File {
	for _, f := range m.pkg.Syntax {
		if f.FileStart <= n.Pos() && n.Pos() <= f.FileEnd {
			return f
		}
	}
	return nil
}

// stepNameAt names the step of a step call for messages: its name= or
// its callee's default step name.
func (m *packageModel) stepNameAt(call *ast.CallExpr) string {
	if call == nil {
		return "?"
	}
	if d, ok := m.siteDirectives[call.Lparen]; ok && d.opts.name != "" {
		return d.opts.name
	}
	if fn, ok := typeutil.Callee(m.pkg.TypesInfo, call).(*types.Func); ok {
		if waitOf(fn) != waitNone {
			return m.waitNameAt(call, fn)
		}
		if o, ok := m.stepDecls[fn.Origin()]; ok && o.name != "" {
			return o.name
		}
		return defaultStepName(fn)
	}
	return types.ExprString(call.Fun)
}

// reacher is a function or method of the package that a call the
// generator cannot follow may run, and the step that makes it matter.
type reacher struct {
	fn   *types.Func
	what string // "calls step NotifyOwner at a.go:12:9" or "is //resume:step"
}

// reachers lists the package's functions and methods that reach a step,
// and those that are steps themselves, in source order.
func (m *packageModel) reachers(ds *diagnostics) []reacher {
	if !m.reachersDone {
		m.reacherList, m.reachersDone = m.findReachers(ds), true
	}
	return m.reacherList
}

func (m *packageModel) findReachers(ds *diagnostics) []reacher {
	var out []reacher
	for _, fn := range m.graph.Reachers() {
		if _, isStep := m.stepDecls[fn]; isStep || m.workflowFuncs[fn] {
			continue
		}
		call := m.graph.StepCall(fn)
		out = append(out, reacher{fn, fmt.Sprintf("calls step %s at %s", m.stepNameAt(call), m.posString(call.Pos(), ds))})
	}
	for fn := range m.stepDecls {
		if fn.Pkg() == m.pkg.Types && !isInterfaceMethod(fn) {
			out = append(out, reacher{fn, "is a //resume:step"})
		}
	}
	for fn := range m.workflowFuncs {
		out = append(out, reacher{fn, "is a //resume:workflow, whose call from a workflow is a child run"})
	}
	sortReachers(out)
	return out
}

func sortReachers(rs []reacher) {
	for i := 1; i < len(rs); i++ {
		for j := i; j > 0 && rs[j].fn.Pos() < rs[j-1].fn.Pos(); j-- {
			rs[j], rs[j-1] = rs[j-1], rs[j]
		}
	}
}

func isInterfaceMethod(fn *types.Func) bool {
	recv := fn.Type().(*types.Signature).Recv()
	return recv != nil && types.IsInterface(recv.Type())
}

// checkValueUse refuses the use of a function that reaches a step (or is
// one) as a value: whoever calls the value later does not journal it.
func (s *stepSearch) checkValueUse(id *ast.Ident, fr *frame) {
	if s.callees[id] {
		return
	}
	fn, ok := s.m.pkg.TypesInfo.Uses[id].(*types.Func)
	if !ok || isInterfaceMethod(fn) || s.waitValueUse(id, fn, fr) {
		return
	}
	if fn.Pkg() != s.m.pkg.Types {
		if s.m.foreignWorkflow(fn.Origin()) {
			s.ds.errorf(id.Pos(), "%s.%s is a //resume:workflow, whose call from a workflow is a child run, and is used here as a value: whatever calls the value runs it outside the journal; call %s.%s directly in the workflow body or in a helper it calls%s", fn.Pkg().Name(), fn.Name(), fn.Pkg().Name(), fn.Name(), fr.via())
		}
		return
	}
	for _, r := range s.m.reachers(s.ds) {
		if r.fn == fn.Origin() {
			s.ds.errorf(id.Pos(), "%s %s, and is used here as a value: whatever calls the value runs it outside the journal; call %s directly in the workflow body or in a helper it calls%s", displayName(fn), r.what, displayName(fn), fr.via())
			return
		}
	}
}

// checkUnfollowed refuses a call the step search cannot follow that may
// reach a step: a call through a function value that a function of the
// package reaching a step could be, a call of an interface method that
// such a method could implement, or a call of a function of another
// package of the module that reaches a step.
func (s *stepSearch) checkUnfollowed(call *ast.CallExpr, fr *frame) {
	m, ds := s.m, s.ds
	info := m.pkg.TypesInfo
	if tv, ok := info.Types[call.Fun]; ok && (tv.IsType() || tv.IsBuiltin()) {
		return
	}
	switch fn := typeutil.Callee(info, call).(type) {
	case nil, *types.Var:
		t, ok := info.TypeOf(call.Fun).Underlying().(*types.Signature)
		if !ok {
			return
		}
		for _, r := range m.reachers(ds) {
			if funcValueCould(r.fn, t) {
				fix := "call " + displayName(r.fn) + " directly, or mark the callee //resume:step"
				if m.workflowFuncs[r.fn] {
					fix = "call " + displayName(r.fn) + " directly: only a call the generator sees is a child run"
				}
				ds.errorf(call.Pos(), "call of %s, a function value, may run %s, which has its type and %s: the generator cannot follow a call through a function value, so that step would not be journaled; %s%s",
					types.ExprString(call.Fun), displayName(r.fn), r.what, fix, fr.via())
				return
			}
		}
	case *types.Func:
		if isInterfaceMethod(fn) {
			s.checkInterfaceCall(call, fn, fr)
			return
		}
		if fn.Pkg() != nil && fn.Pkg() != m.pkg.Types && !m.foreignWorkflow(fn.Origin()) {
			if step := m.foreignReach(fn.Origin()); strings.HasPrefix(step, foreignWaitPrefix) {
				ds.errorf(call.Pos(), "%s.%s is a function of another package that %s: the generator only follows calls into functions of the workflow's own package, so that wait would not enter the workflow's version; move the helper into this package, or call resume.%s in the workflow body%s",
					fn.Pkg().Name(), displayName(fn), step, strings.TrimPrefix(step, foreignWaitPrefix), fr.via())
			} else if step != "" {
				ds.errorf(call.Pos(), "%s.%s is a function of another package that %s: the generator only follows calls into functions of the workflow's own package, so that step would not be journaled; move the helper into this package, or mark it //resume:step%s",
					fn.Pkg().Name(), displayName(fn), step, fr.via())
			}
		}
	}
}

// checkInterfaceCall refuses a call of interface method fn, not itself a
// step, that a method of the package reaching a step implements.
func (s *stepSearch) checkInterfaceCall(call *ast.CallExpr, fn *types.Func, fr *frame) {
	m, ds := s.m, s.ds
	sel, ok := ast.Unparen(call.Fun).(*ast.SelectorExpr)
	if !ok {
		return
	}
	iface, ok := m.pkg.TypesInfo.TypeOf(sel.X).Underlying().(*types.Interface)
	if !ok {
		return
	}
	for _, r := range m.reachers(ds) {
		recv := r.fn.Type().(*types.Signature).Recv()
		if recv == nil || r.fn.Name() != fn.Name() {
			continue
		}
		t := recv.Type()
		if _, ptr := t.(*types.Pointer); !ptr && !types.Implements(t, iface) {
			t = types.NewPointer(t)
		}
		if types.Implements(t, iface) {
			ds.errorf(call.Pos(), "call of interface method %s may run %s, which implements it and %s: the generator cannot see which implementation runs, so that step would not be journaled; call the concrete method directly, or mark the interface method //resume:step%s",
				types.ExprString(call.Fun), displayName(r.fn), r.what, fr.via())
			return
		}
	}
}

// funcValueCould reports whether fn, as a function value, a method value
// or a method expression, is assignable to a variable of type t.
func funcValueCould(fn *types.Func, t *types.Signature) bool {
	sig := fn.Type().(*types.Signature)
	if sig.TypeParams().Len() > 0 {
		return false
	}
	if types.Identical(bareSignature(sig), bareSignature(t)) {
		return true
	}
	recv := sig.Recv()
	if recv == nil {
		return false
	}
	params := []*types.Var{types.NewParam(token.NoPos, nil, "", recv.Type())}
	for i := 0; i < sig.Params().Len(); i++ {
		params = append(params, sig.Params().At(i))
	}
	expr := types.NewSignatureType(nil, nil, nil, types.NewTuple(params...), sig.Results(), sig.Variadic())
	return types.Identical(bareSignature(expr), bareSignature(t))
}

// helperSource names a helper's file for the comment on its copy.
func (h *helper) sourceName(fset *token.FileSet) string {
	return filepath.Base(fset.File(h.decl.Pos()).Name())
}

// isStepCall reports whether call is a step call wherever it is: a call
// carrying a trailing //resume:step, a call of a function or method
// declared //resume:step, or a call of a //resume:workflow (a child run),
// in this package or another of the module.
func (m *packageModel) isStepCall(call *ast.CallExpr) bool {
	if _, ok := m.siteDirectives[call.Lparen]; ok {
		return true
	}
	fn, ok := typeutil.Callee(m.pkg.TypesInfo, call).(*types.Func)
	if !ok {
		return false
	}
	if _, ok := m.stepDecls[fn.Origin()]; ok {
		return true
	}
	return m.foreignStep(fn.Origin()) != nil || m.isWorkflowFunc(fn.Origin()) || waitOf(fn) != waitNone
}
