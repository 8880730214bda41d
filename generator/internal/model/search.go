package model

import (
	"go/ast"
	"go/token"
	"go/types"
	"slices"
	"strings"

	"golang.org/x/tools/go/types/typeutil"

	"github.com/resumegen/resumegen/generator/internal/runtimeapi"
)

// search is the walk of one workflow's body and of the helpers it calls,
// in source order, that finds the workflow's journaled calls.
type search struct {
	p *Package
	w *Workflow
	// first is the call site that took each step name.
	first map[string]*Step
	// entered holds the helpers walked: each once per workflow, at its
	// first call, so a step inside a helper is one step however many
	// times the helper is called, numbered at run time like a loop's.
	entered map[*types.Func]bool
	// deferred counts the deferred calls the walk is in: a step there is
	// Deferred (resume.StepDef.Deferred: it executes while a stopping run
	// unwinds).
	deferred int
	// helperSteps are, per helper walked, the steps its walk found (its
	// own and those of the helpers it entered first), for markDeferred.
	helperSteps map[*types.Func][]*Step
	// inMap counts the resume.Map literals the walk is in: a call there
	// needs key=, and a wait is refused.
	inMap int
}

// place is where in a body the walk is: why the journal could not order
// a journaled call there (Ordered when it can), outermost reason first.
type place struct {
	where  Where
	detail string
}

// in keeps the outermost reason.
func (pl place) in(where Where, detail string) place {
	if pl.where != Ordered {
		return pl
	}
	return place{where, detail}
}

// findSteps walks the workflow's body in source order and records every
// journaled call: a call of a step, a workflow or a wait, or a call
// carrying a trailing //resume:step. It follows the body's calls of the
// functions and methods of the packages read from source (see enter).
func (p *Package) findSteps(w *Workflow) {
	s := &search{p: p, w: w, first: map[string]*Step{}, entered: map[*types.Func]bool{}, helperSteps: map[*types.Func][]*Step{}}
	w.HelperCalls = map[token.Pos]*HelperCall{}
	w.callAt = map[token.Pos]*Step{}
	body := &Func{Decl: w.Decl, Pkg: p, Workflow: w.Name}
	w.Funcs = append(w.Funcs, body)
	p.Reached[w.Decl] = true
	s.walk(w.Decl.Body, place{}, body)
}

// walk records the journaled calls of n, in source order, in the function
// fr, at pl.
func (s *search) walk(n ast.Node, pl place, fr *Func) {
	ast.Inspect(n, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.GoStmt:
			s.walk(n.Call, pl.in(InGo, ""), fr)
			return false
		case *ast.DeferStmt:
			// A deferred call runs when the function returns, after the
			// calls deferred later (last in, first out): a fixed order on
			// a fixed path, which a replay takes again, so a deferred step
			// (a saga's compensation) is journaled and replayed in it. Its
			// arguments are evaluated here, as Go does.
			s.deferred++
			s.walk(n.Call, pl, fr)
			s.deferred--
			return false
		case *ast.FuncLit:
			s.walk(n.Body, pl.in(InFuncLit, ""), fr)
			return false
		case *ast.SelectStmt:
			s.walk(n.Body, pl.in(InSelect, ""), fr)
			return false
		case *ast.RangeStmt:
			if where, detail := fr.Pkg.rangeWhere(fr.Decl.Body, n); where != Ordered {
				for _, x := range []ast.Expr{n.Key, n.Value, n.X} {
					if x != nil {
						s.walk(x, pl, fr)
					}
				}
				s.walk(n.Body, pl.in(where, detail), fr)
				return false
			}
		case *ast.CallExpr:
			return s.call(n, pl, fr)
		}
		return true
	})
}

// call records one call; it reports whether walk should go on into the
// call's children.
func (s *search) call(n *ast.CallExpr, pl place, fr *Func) bool {
	p, w := s.p, s.w
	if lit, ok := ast.Unparen(n.Fun).(*ast.FuncLit); ok {
		// Called where it is written: its body runs here, once, after
		// the arguments, as if inline.
		for _, a := range n.Args {
			s.walk(a, pl, fr)
		}
		s.walk(lit.Body, pl, fr)
		return false
	}
	if fn, _ := typeutil.Callee(p.Calls.Steps.Info(n.Pos()), n).(*types.Func); runtimeapi.IsMap(fn) {
		// resume.Map calls a literal it is handed here, once per item, in
		// the items' order: its body is walked as a loop body's. Any other
		// argument is walked as such (a function value reaching a step is
		// refused as one).
		for _, a := range n.Args {
			if lit, ok := ast.Unparen(a).(*ast.FuncLit); ok {
				s.inMap++
				s.walk(lit.Body, pl, fr)
				s.inMap--
				continue
			}
			s.walk(a, pl, fr)
		}
		return false
	}
	if st := fr.Pkg.stepAt(w.pkg.Load.Types, n); st != nil {
		st.In, st.Deferred = fr, s.deferred > 0
		st.fillOwned()
		if fr.Shared && st.Wait == runtimeapi.NotWait {
			if h, _ := p.Module.sharedCopy(fr.Fn); h != nil {
				if site := h.SiteAt(n.Lparen); site != nil {
					st.Shared, st.SiteID = site, site.ID
				}
			}
		}
		st.InMap = s.inMap > 0
		w.Calls = append(w.Calls, st)
		w.callAt[n.Lparen] = st
		prev, taken := s.first[st.Name]
		switch {
		case pl.where != Ordered:
			st.Where, st.WhereDetail = pl.where, pl.detail
		case s.inMap > 0 && st.Wait != runtimeapi.NotWait:
			st.Where = InMapWait
		case s.inMap > 0 && st.Opts.Key == "":
			st.Where = InMapNoKey
		case st.Deferred && st.Wait != runtimeapi.NotWait:
			st.Where = InDefer
		case taken && !(st.Wait == runtimeapi.Sleep && prev.Wait == runtimeapi.Sleep):
			// The sleeps of a run share resume.Sleep (the runtime numbers
			// them); awaits and steps each need a name of their own.
			st.Clash = prev
		default:
			if !taken && st.Name != "" {
				s.first[st.Name] = st
			}
			st.Index = len(w.Steps)
			w.Steps = append(w.Steps, st)
		}
		return true
	}
	if callee := p.Calls.Steps.Callee(n); callee != nil && fr.Pkg.Directives.WorkflowOf(callee) == nil {
		// The receiver and the arguments run first, in the caller.
		if sel, ok := ast.Unparen(n.Fun).(*ast.SelectorExpr); ok {
			s.walk(sel.X, pl, fr)
		}
		for _, a := range n.Args {
			s.walk(a, pl, fr)
		}
		if pl.where == Ordered && s.deferred > 0 {
			// A wait in a deferred call would run as the function
			// returns, where the journal cannot order it.
			if witness := p.Calls.Waits.StepCall(callee); witness != nil {
				w.Blocked = append(w.Blocked, &HelperCall{Call: n, Callee: callee, In: fr, Witness: witness, Where: InDefer})
				return false
			}
		}
		s.enter(n, callee, pl, fr)
		return false
	}
	return true
}

// enter follows the call of callee, a function or method read from source
// declared with a body, into callee's body.
func (s *search) enter(call *ast.CallExpr, callee *types.Func, pl place, fr *Func) {
	p, w := s.p, s.w
	shared := fr.Shared || callee.Pkg() != w.pkg.Load.Types
	if witness := p.Calls.Steps.StepCall(callee); witness != nil {
		if pl.where != Ordered {
			w.Blocked = append(w.Blocked, &HelperCall{Call: call, Callee: callee, In: fr, Witness: witness, Where: pl.where, WhereDetail: pl.detail})
			return
		}
		if !s.helperCall(call, callee, fr, witness, shared) {
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
	decl := p.Calls.Steps.Decl(callee)
	pkg := p.Module.Package(callee.Pkg())
	pkg.Reached[decl] = true
	inner := &Func{Decl: decl, Fn: callee, Pkg: pkg, Workflow: fr.Workflow, Path: append(append([]string(nil), fr.Path...), QualifiedName(callee, w.pkg.Load.Types)),
		EnteredAt: call.Lparen, From: fr, Shared: shared}
	w.Funcs = append(w.Funcs, inner)
	before := len(w.Calls)
	s.walk(decl.Body, place{}, inner)
	s.helperSteps[callee] = w.Calls[before:len(w.Calls):len(w.Calls)]
}

// markDeferred marks Deferred the journaled calls of helper fn, walked
// first from a call that was not deferred and reached again from one, and
// those of the helpers it calls: a helper's step is one step however the
// helper is reached, and one path from a deferred call makes it a
// compensation, which executes while a stopping run unwinds.
func (s *search) markDeferred(fn *types.Func, seen map[*types.Func]bool) {
	if seen[fn] {
		return
	}
	seen[fn] = true
	for _, st := range s.helperSteps[fn] {
		st.Deferred = true
	}
	ast.Inspect(s.p.Calls.Steps.Decl(fn).Body, func(n ast.Node) bool {
		if call, ok := n.(*ast.CallExpr); ok {
			if callee := s.p.Calls.Steps.Callee(call); callee != nil && s.entered[callee] {
				s.markDeferred(callee, seen)
			}
		}
		return true
	})
}

// helperCall records the call of a helper that reaches steps, creating the
// helper's copy at its first call (a copy of the workflow's, or a shared
// one); it reports false, after recording the call as blocked, when the
// generator cannot copy it.
func (s *search) helperCall(call *ast.CallExpr, callee *types.Func, fr *Func, witness *ast.CallExpr, shared bool) bool {
	p, w := s.p, s.w
	hc := &HelperCall{Call: call, Callee: callee, In: fr, Witness: witness}
	if !fr.Pkg.copyableCall(hc) {
		w.Blocked = append(w.Blocked, hc)
		return false
	}
	if shared {
		h, why := p.Module.sharedCopy(callee)
		if h == nil {
			hc.Uncopyable = why
			w.Blocked = append(w.Blocked, hc)
			return false
		}
		hc.Helper = h
		if !slices.Contains(w.Shared, h) {
			w.Shared = append(w.Shared, h)
		}
		w.HelperCalls[call.Lparen] = hc
		return true
	}
	for _, h := range w.Helpers {
		if h.Fn == callee {
			hc.Helper = h
		}
	}
	if hc.Helper == nil {
		decl := p.Calls.Steps.Decl(callee)
		name := DisplayName(callee)
		hc.Helper = &Helper{Fn: callee, Decl: decl, File: p.fileOf(decl), Display: name, Pkg: p,
			CopyName: "resume" + SanitizeIdent(w.Name) + "_" + SanitizeIdent(name), CtxName: contextParam(p.Load.TypesInfo, decl)}
		w.Helpers = append(w.Helpers, hc.Helper)
	}
	w.HelperCalls[call.Lparen] = hc
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

// contextParam is the name of the first named context.Context parameter of
// decl, or "".
func contextParam(info *types.Info, decl *ast.FuncDecl) string {
	for _, f := range decl.Type.Params.List {
		if !IsContext(info.TypeOf(f.Type)) {
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
func (p *Package) fileOf(n ast.Node) *ast.File {
	for _, f := range p.Load.Files {
		if f.FileStart <= n.Pos() && n.Pos() <= f.FileEnd {
			return f
		}
	}
	return nil
}

// rangeWhere says why journaled calls in the body of the range statement r
// of the function body cannot be ordered, or Ordered when they can.
func (p *Package) rangeWhere(body *ast.BlockStmt, r *ast.RangeStmt) (Where, string) {
	t := p.Load.TypesInfo.TypeOf(r.X)
	if t == nil {
		return Ordered, ""
	}
	if fn := p.unorderedSeq(r.X); fn != "" {
		return InMapSeq, fn
	}
	switch t.Underlying().(type) {
	case *types.Map:
		return InMapRange, ""
	case *types.Chan:
		if p.ownedChannel(body, r.X) {
			return Ordered, ""
		}
		return InChanRange, ""
	}
	return Ordered, ""
}

// unorderedSeq names the call of x that yields a map's entries in map
// order (maps.Keys, maps.Values, maps.All, or slices.Collect or
// slices.AppendSeq of one), or returns "". Sorting them
// (slices.Sorted(maps.Keys(m))) gives an order a resume sees again.
func (p *Package) unorderedSeq(x ast.Expr) string {
	call, ok := ast.Unparen(x).(*ast.CallExpr)
	if !ok {
		return ""
	}
	fn, ok := typeutil.Callee(p.Load.TypesInfo, call).(*types.Func)
	if !ok || fn.Pkg() == nil {
		return ""
	}
	name := fn.Pkg().Path() + "." + fn.Name()
	switch name {
	case "maps.Keys", "maps.Values", "maps.All":
		return name
	case "slices.Collect", "slices.AppendSeq":
		if len(call.Args) > 0 {
			if inner := p.unorderedSeq(call.Args[len(call.Args)-1]); inner != "" {
				return name + "(" + inner + ")"
			}
		}
	}
	return ""
}

// ownedChannel reports whether x is a channel the workflow body owns: a
// local variable of the body that the body itself only makes, sends to,
// closes, measures and ranges over. Its values then come from the body's
// own deterministic code, in the body's order, and a resume sees the same
// ones. Any other use (passed to a call, captured by a closure or a go
// statement, assigned elsewhere) may hand it to another sender.
func (p *Package) ownedChannel(body *ast.BlockStmt, x ast.Expr) bool {
	id, ok := ast.Unparen(x).(*ast.Ident)
	if !ok {
		return false
	}
	info := p.Load.TypesInfo
	v, ok := info.Uses[id].(*types.Var)
	if !ok || v.Pos() < body.Pos() || v.Pos() >= body.End() {
		return false
	}
	owned := true
	var stack []ast.Node
	ast.Inspect(body, func(n ast.Node) bool {
		if n == nil {
			stack = stack[:len(stack)-1]
			return true
		}
		defer func() { stack = append(stack, n) }()
		use, ok := n.(*ast.Ident)
		if !ok || (info.Uses[use] != v && info.Defs[use] != v) {
			return true
		}
		if !p.ownedUse(stack, use) {
			owned = false
		}
		return true
	})
	return owned
}

// ownedUse reports whether the use of a channel variable, under the nodes of
// stack (outermost first), is one an owning body makes: its definition by
// make, a send, close, len, cap, or the range over it.
func (p *Package) ownedUse(stack []ast.Node, use *ast.Ident) bool {
	for _, n := range stack {
		switch n.(type) {
		case *ast.FuncLit, *ast.GoStmt, *ast.DeferStmt:
			return false
		}
	}
	if len(stack) == 0 {
		return false
	}
	switch par := stack[len(stack)-1].(type) {
	case *ast.SendStmt:
		return par.Chan == use
	case *ast.RangeStmt:
		return par.X == use
	case *ast.CallExpr:
		if b, ok := typeutil.Callee(p.Load.TypesInfo, par).(*types.Builtin); ok {
			switch b.Name() {
			case "close", "len", "cap":
				return true
			}
		}
		return false
	case *ast.AssignStmt:
		// ch := make(chan T, n) or var-less ch = make(...): the definition.
		if par.Tok != token.DEFINE || len(par.Lhs) != len(par.Rhs) {
			return false
		}
		for i, lhs := range par.Lhs {
			if lhs == use {
				call, ok := ast.Unparen(par.Rhs[i]).(*ast.CallExpr)
				if !ok {
					return false
				}
				b, ok := typeutil.Callee(p.Load.TypesInfo, call).(*types.Builtin)
				return ok && b.Name() == "make"
			}
		}
	}
	return false
}
