package generator

import (
	"fmt"
	"go/ast"
	"go/constant"
	"go/token"
	"go/types"
	"strconv"
	"strings"

	"github.com/resumegen/resumegen/generator/internal/callgraph"
	"golang.org/x/tools/go/types/typeutil"
)

// waitKind says which of the runtime's waits a call is: resume.Sleep and
// resume.SleepUntil, or resume.Await. A wait is a journaled point of the
// workflow like a step (it enters the step list, the version and the
// manifest, and where it may be called is checked as for a step), but its
// call is not rewritten: the runtime finds the run in the context.
type waitKind int

const (
	waitNone  waitKind = iota
	waitSleep          // resume.Sleep or resume.SleepUntil
	waitAwait          // resume.Await[T]
)

// sleepStepName is the journal name of every Sleep and SleepUntil of a
// run, whatever its call site: the runtime counts them as a loop's steps
// (resume.Sleep, resume.Sleep#2, ...).
const sleepStepName = "resume.Sleep"

// foreignWaitPrefix starts what foreignReach says of a function of another
// package that calls a wait: "waits with resume.Sleep".
const foreignWaitPrefix = "waits with resume."

// waitOf says which wait fn is, if any.
func waitOf(fn *types.Func) waitKind {
	if fn == nil || fn.Pkg() == nil || fn.Pkg().Path() != resumePath || fn.Type().(*types.Signature).Recv() != nil {
		return waitNone
	}
	return waitByName(fn.Name())
}

// waitByName says which wait the runtime's function name is, if any.
func waitByName(name string) waitKind {
	switch name {
	case "Sleep", "SleepUntil":
		return waitSleep
	case "Await":
		return waitAwait
	}
	return waitNone
}

// isWaitCall reports whether call is a call of one of the runtime's waits.
func (m *packageModel) isWaitCall(call *ast.CallExpr) bool {
	fn, _ := typeutil.Callee(m.pkg.TypesInfo, call).(*types.Func)
	return waitOf(fn) != waitNone
}

// waitAt returns the journaled point of a call of a wait fn (kind), or nil
// after reporting why it cannot be one. site is the call's trailing
// //resume:step, if hasSite.
func (m *packageModel) waitAt(w *Workflow, call *ast.CallExpr, fn *types.Func, kind waitKind, site directive, hasSite bool, ds *diagnostics) *Step {
	info := m.pkg.TypesInfo
	if hasSite {
		ds.errorf(site.pos, "%s: resume.%s is journaled by the runtime itself, not as a step: remove the directive", site.text, fn.Name())
		return nil
	}
	sig := fn.Type().(*types.Signature)
	s := &Step{call: call, fn: fn, wait: kind, Policy: string(policyDefault), takesCtx: true}
	if kind == waitAwait {
		inst, ok := info.Instances[calleeIdent(call.Fun)]
		if !ok {
			ds.errorf(call.Pos(), "resume.Await: cannot tell its type argument: write it, resume.Await[T](ctx, NAME, timeout)")
			return nil
		}
		sig, s.typeArgs = inst.Type.(*types.Signature), inst.TypeArgs
	}
	s.sig = sig
	// The callee is the runtime's function, without type arguments: T
	// enters the version through the signature and the shape.
	s.Callee, s.display = calleeNames(fn, w.pkg.Types)
	if s.typeArgs != nil {
		s.display += typeArgsString(s.typeArgs, nameQualifier(w.pkg.Types))
	}
	bare := bareSignature(sig)
	s.canonSig = types.TypeString(bare, nil)
	s.Signature = types.TypeString(bare, nameQualifier(w.pkg.Types))
	if kind == waitSleep {
		s.Name = sleepStepName
		return s
	}
	name, ok := m.awaitName(call, ds)
	if !ok {
		return nil
	}
	s.Name = name
	m.awaitTypes(s, call.Pos(), ds)
	return s
}

// awaitName is the event name of a call of resume.Await, which must be a
// constant string: it is the run's journal key of the wait and the name a
// Signal addresses, so it must be the same each time the body runs.
func (m *packageModel) awaitName(call *ast.CallExpr, ds *diagnostics) (string, bool) {
	if len(call.Args) < 2 {
		return "", false // go/types reported it
	}
	arg := call.Args[1]
	tv := m.pkg.TypesInfo.Types[arg]
	if tv.Value == nil || tv.Value.Kind() != constant.String {
		ds.errorf(arg.Pos(), "resume.Await: its event name (%s) is not a constant string: it is the wait's journal name and the name a Signal addresses, so it must be the same each time the run resumes; write a string literal or a constant (\"approval\"), and pass what varies in the payload", types.ExprString(arg))
		return "", false
	}
	name := constant.StringVal(tv.Value)
	if !validStepName(name) {
		ds.errorf(arg.Pos(), "resume.Await: bad event name %s: an event name is a step name, letters, digits, '_', '.', '-' or '/'", strconv.Quote(name))
		return "", false
	}
	return name, true
}

// awaitTypes refuses an Await whose payload type T cannot be journaled as
// JSON, and records T's shape and JSON type: the payload is the wait's
// journaled result, which a Signal is checked against.
func (m *packageModel) awaitTypes(s *Step, pos token.Pos, ds *diagnostics) {
	q := nameQualifier(m.pkg.Types)
	t := s.typeArgs.At(0)
	if err := journalable(t, q); err != nil {
		ds.errorf(pos, "%s: payload type %s cannot be journaled as JSON: %v", s.waitWhat(), typeString(t, m.pkg.Types), err)
	}
	s.values, s.hasErr = []int{0}, true
	s.Shape = jsonShape("result", t, q)
	s.JSON = (&shapeRenderer{q: q, seen: map[string]bool{}}).typ(t)
}

// waitWhat names a wait in messages: resume.Sleep, resume.SleepUntil,
// resume.Await "approval".
func (s *Step) waitWhat() string {
	if s.wait == waitAwait {
		return fmt.Sprintf("resume.Await %q", s.Name)
	}
	return "resume." + s.fn.Name()
}

// waitNameAt names the journaled point of a wait call for messages about
// what a helper reaches: resume.Sleep, or the event name of an Await.
func (m *packageModel) waitNameAt(call *ast.CallExpr, fn *types.Func) string {
	if waitOf(fn) == waitAwait && len(call.Args) > 1 {
		if tv := m.pkg.TypesInfo.Types[call.Args[1]]; tv.Value != nil && tv.Value.Kind() == constant.String {
			return fmt.Sprintf("resume.Await %q", constant.StringVal(tv.Value))
		}
		return "resume.Await"
	}
	return "resume." + fn.Name()
}

// sharesName reports whether st may take the name of the journaled point
// first called at prev: the sleeps of a run share resume.Sleep (the
// runtime numbers them); awaits and steps each need a name of their own.
func (s *stepSearch) sharesName(st *Step, prev token.Pos) bool {
	if st.wait != waitSleep {
		return false
	}
	for _, o := range s.w.Steps {
		if o.call.Pos() == prev {
			return o.wait == waitSleep
		}
	}
	return false
}

// reservedName refuses a step or await named like the runtime's own
// journal names (resume.Sleep, resume.*), which a replay would take for
// them; it reports whether it refused.
func (s *stepSearch) reservedName(st *Step) bool {
	if st.wait == waitSleep || !strings.HasPrefix(st.Name, "resume.") {
		return false
	}
	s.ds.errorf(st.call.Pos(), "%s: names starting with \"resume.\" are the runtime's own journal names (%s names the run's sleeps): choose another name", s.what(st), sleepStepName)
	return true
}

// duplicateName reports st, whose name the call at prev already took.
func (s *stepSearch) duplicateName(st *Step, prev token.Pos) {
	at := s.m.posString(prev, s.ds)
	var other *Step
	for _, o := range s.w.Steps {
		if o.call.Pos() == prev {
			other = o
		}
	}
	if st.wait == waitNone && (other == nil || other.wait == waitNone) {
		s.ds.errorf(st.call.Pos(), "step name %s is already used by the call at %s: add //resume:step name=NAME at the end of one call's line to tell them apart", st.Name, at)
		return
	}
	s.ds.errorf(st.call.Pos(), "%s: name %s is already used by the call at %s: steps and awaits share the run's journal names; give the await another event name, or the step another name (//resume:step name=NAME)", s.what(st), st.Name, at)
}

func (s *stepSearch) what(st *Step) string {
	if st.wait != waitNone {
		return st.waitWhat()
	}
	return st.what()
}

// deferredWait refuses a wait, or the call of a helper that reaches one,
// in a deferred call: it would run while the function returns, also when
// a step failed or the run is being suspended, where the journal cannot
// order it. It reports whether it refused.
func (s *stepSearch) deferredWait(call *ast.CallExpr, st *Step, callee *types.Func, fr *frame) bool {
	if s.deferred == 0 {
		return false
	}
	const why = "in a deferred call: it would run as the function returns, also after a failed step or while the run is being suspended, where the journal cannot order a wait; wait in the body before returning instead"
	if st != nil {
		if st.wait == waitNone {
			return false
		}
		s.ds.errorf(call.Pos(), "%s is called %s%s", st.waitWhat(), why, fr.via())
		return true
	}
	if callee == nil {
		return false
	}
	if s.m.waitGraph == nil {
		s.m.waitGraph = s.m.newGraph(s.m.isWaitCall)
	}
	witness := s.m.waitGraph.StepCall(callee)
	if witness == nil {
		return false
	}
	fn, _ := typeutil.Callee(s.m.pkg.TypesInfo, witness).(*types.Func)
	s.ds.errorf(call.Pos(), "call of %s, which runs %s, is %s%s", displayName(callee), s.m.waitNameAt(witness, fn), why, fr.via())
	return true
}

// waitValueUse refuses the use of a wait as a function value: whoever
// calls the value waits outside the workflow's step list. It reports
// whether fn is a wait.
func (s *stepSearch) waitValueUse(id *ast.Ident, fn *types.Func, fr *frame) bool {
	if waitOf(fn) == waitNone {
		return false
	}
	s.ds.errorf(id.Pos(), "resume.%s is used here as a value: a wait is a journaled point of the workflow, and the generator only sees a direct call; call resume.%s directly in the workflow body or in a helper it calls%s", fn.Name(), fn.Name(), fr.via())
	return true
}

// newGraph builds a call graph of the package's non-test files in which
// the calls isStep accepts are the step calls.
func (m *packageModel) newGraph(isStep func(*ast.CallExpr) bool) *callgraph.Graph {
	var files []*ast.File
	for _, f := range m.pkg.Syntax {
		if !isTestFile(m.pkg.Fset.File(f.Pos()).Name()) {
			files = append(files, f)
		}
	}
	return callgraph.New(files, m.pkg.TypesInfo, m.pkg.Types, isStep)
}

// refuseStepWaits refuses a wait called directly in the body of a function
// of the package declared //resume:step: a step is one journaled call,
// executed again on retry or resume, and cannot hold journaled points of
// its own. (A wait in a function such a body calls is not looked for.)
func (m *packageModel) refuseStepWaits(ds *diagnostics) {
	for _, f := range m.pkg.Syntax {
		if isTestFile(m.pkg.Fset.File(f.Pos()).Name()) {
			continue
		}
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			fn, _ := m.pkg.TypesInfo.Defs[fd.Name].(*types.Func)
			if _, isStep := m.stepDecls[fn]; fn == nil || !isStep || m.workflowFuncs[fn] {
				continue
			}
			ast.Inspect(fd.Body, func(n ast.Node) bool {
				if call, ok := n.(*ast.CallExpr); ok && m.isWaitCall(call) {
					wfn := typeutil.Callee(m.pkg.TypesInfo, call).(*types.Func)
					ds.errorf(call.Pos(), "%s is called in step %s: a step is one journaled call, executed again when it is retried or the run resumes, so it cannot wait durably; wait in the workflow body before or after the step, or use time.Sleep inside the step", m.waitNameAt(call, wfn), displayName(fn))
				}
				return true
			})
		}
	}
}
