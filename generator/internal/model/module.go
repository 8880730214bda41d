package model

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"slices"
	"sort"
	"strings"

	"github.com/resumegen/resumegen/generator/internal/calls"
	"github.com/resumegen/resumegen/generator/internal/runtimeapi"
)

// Module is the models of the packages read from source (see
// load.Module): the workflows' packages and the packages of the module
// they import. A workflow's step search follows calls into any of them by
// types; a helper of another package than the workflow's gets one shared
// copy in its own package (see Helper), which Module builds once.
type Module struct {
	// Calls is the call analysis of all of them.
	Calls *calls.Analysis
	pkgs  map[*types.Package]*Package
	// shared are the shared copies built, by function; a nil entry says
	// the function cannot be copied (why in uncopyable).
	shared     map[*types.Func]*Helper
	uncopyable map[*types.Func]Uncopyable
	// needs are, by the package of a shared copy, the import paths of the
	// packages whose modelled workflows reach it; recorded the same for
	// packages not modelled, from the copies' generated file (Keep).
	needs, recorded map[*Package]map[string]map[*Helper]bool
}

// NewModule makes the models of pkgs, whose call analysis is an; no
// workflow is modelled until [Package.Build].
func NewModule(an *calls.Analysis, pkgs ...calls.Package) *Module {
	m := &Module{Calls: an, pkgs: map[*types.Package]*Package{}, shared: map[*types.Func]*Helper{}, uncopyable: map[*types.Func]Uncopyable{},
		needs: map[*Package]map[string]map[*Helper]bool{}, recorded: map[*Package]map[string]map[*Helper]bool{}}
	for _, p := range pkgs {
		m.pkgs[p.Load.Types] = &Package{Load: p.Load, Directives: p.Directives, Calls: an, Module: m, Reached: map[*ast.FuncDecl]bool{}}
	}
	return m
}

// Package returns the model of the package whose types are t, or nil
// when it was not read from source.
func (m *Module) Package(t *types.Package) *Package { return m.pkgs[t] }

// Packages lists the models, by import path.
func (m *Module) Packages() []*Package {
	out := make([]*Package, 0, len(m.pkgs))
	for _, p := range m.pkgs {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Load.PkgPath < out[j].Load.PkgPath })
	return out
}

// Shared lists the shared copies to write in the package: of its helpers
// that workflows of other packages reach (see [Package.Dependents]), and
// of every function of the package such a copy calls, by position.
func (p *Package) Shared() []*Helper {
	var out []*Helper
	seen := map[*Helper]bool{}
	var add func(h *Helper)
	add = func(h *Helper) {
		if h == nil || seen[h] {
			return
		}
		seen[h] = true
		if h.Pkg == p {
			out = append(out, h)
		}
		for _, hc := range sortedCalls(h.Calls) {
			add(hc.Helper)
		}
	}
	for _, byFn := range p.Module.needs[p] {
		for h := range byFn {
			add(h)
		}
	}
	for _, byFn := range p.Module.recorded[p] {
		for h := range byFn {
			add(h)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Decl.Pos() < out[j].Decl.Pos() })
	return out
}

// Dependents says which packages' workflows call the package's shared
// copies, and which ones (by Display name, sorted): those modelled in this
// run, and those a generated file of the package records (see
// [Package.Keep]). The generated file records it, so that a later run
// that does not model a package keeps the copies it calls.
func (p *Package) Dependents() map[string][]string {
	out := map[string][]string{}
	for _, m := range []map[*Package]map[string]map[*Helper]bool{p.Module.needs, p.Module.recorded} {
		for dep, byFn := range m[p] {
			for h := range byFn {
				if !slices.Contains(out[dep], h.Display) {
					out[dep] = append(out[dep], h.Display)
				}
			}
		}
	}
	for _, names := range out {
		sort.Strings(names)
	}
	return out
}

// need records that the workflows of the package at import path dep call
// the shared copy h.
func (m *Module) need(into map[*Package]map[string]map[*Helper]bool, dep string, h *Helper) {
	if into[h.Pkg] == nil {
		into[h.Pkg] = map[string]map[*Helper]bool{}
	}
	if into[h.Pkg][dep] == nil {
		into[h.Pkg][dep] = map[*Helper]bool{}
	}
	into[h.Pkg][dep][h] = true
}

// Keep records that the workflows of dep, a package this run does not
// model, call the helpers of p named names (F, or Type.M), as p's
// generated file records it: their shared copies are kept, as long as
// they still reach a journaled call and can be copied.
func (p *Package) Keep(dep string, names []string) {
	for _, name := range names {
		fn := p.lookupFunc(name)
		if fn == nil || p.Calls.Steps.StepCall(fn) == nil {
			continue
		}
		if h, _ := p.Module.sharedCopy(fn); h != nil {
			p.Module.need(p.Module.recorded, dep, h)
		}
	}
}

// ForgetKept drops what Keep recorded, for a new round of it.
func (m *Module) ForgetKept() { m.recorded = map[*Package]map[string]map[*Helper]bool{} }

// lookupFunc returns the function or method of p named F or Type.M, or
// nil.
func (p *Package) lookupFunc(name string) *types.Func {
	scope := p.Load.Types.Scope()
	typ, method, isMethod := strings.Cut(name, ".")
	if !isMethod {
		fn, _ := scope.Lookup(name).(*types.Func)
		return fn
	}
	tn, ok := scope.Lookup(typ).(*types.TypeName)
	if !ok {
		return nil
	}
	obj, _, _ := types.LookupFieldOrMethod(types.NewPointer(tn.Type()), true, p.Load.Types, method)
	fn, _ := obj.(*types.Func)
	return fn
}

func sortedCalls(calls map[token.Pos]*HelperCall) []*HelperCall {
	out := make([]*HelperCall, 0, len(calls))
	for _, hc := range calls {
		out = append(out, hc)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Call.Lparen < out[j].Call.Lparen })
	return out
}

// sharedCopy returns the shared copy of fn, a function read from source
// that reaches a journaled call, building it (and the copies it calls) at
// its first use; nil, with why, when fn cannot be copied.
func (m *Module) sharedCopy(fn *types.Func) (*Helper, Uncopyable) {
	fn = fn.Origin()
	if h, ok := m.shared[fn]; ok {
		return h, m.uncopyable[fn]
	}
	p := m.pkgs[fn.Pkg()]
	decl := m.Calls.Steps.Decl(fn)
	if p == nil || decl == nil {
		m.shared[fn], m.uncopyable[fn] = nil, Generic
		return nil, Generic
	}
	sig := fn.Type().(*types.Signature)
	if sig.TypeParams().Len() > 0 || (sig.Recv() != nil && sig.RecvTypeParams().Len() > 0) {
		m.shared[fn], m.uncopyable[fn] = nil, Generic
		return nil, Generic
	}
	name := DisplayName(fn)
	prefix := "resume_"
	if fn.Exported() {
		prefix = "Resume_"
	}
	h := &Helper{Fn: fn, Decl: decl, File: p.fileOf(decl), Display: name, CopyName: prefix + SanitizeIdent(name),
		CtxName: contextParam(p.Load.TypesInfo, decl), Pkg: p, Shared: true, Calls: map[token.Pos]*HelperCall{}}
	m.shared[fn] = h // a recursive call finds it
	if why := p.fillShared(h); why != Copyable {
		m.shared[fn], m.uncopyable[fn] = nil, why
		return nil, why
	}
	return h, Copyable
}

// fillShared records the journaled calls and helper calls of the shared
// copy h, a function of p, and says why it cannot be copied, if it cannot.
// Every journaled call in the body gets a wrapper, wherever it stands
// (a workflow reaching one the journal cannot order is refused).
func (p *Package) fillShared(h *Helper) Uncopyable {
	why := Copyable
	names := map[string]int{}
	ast.Inspect(h.Decl.Body, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok || why != Copyable {
			return why == Copyable
		}
		if st := p.stepAt(p.Load.Types, call); st != nil {
			if st.Wait != runtimeapi.NotWait {
				return true // its call stays as written
			}
			if !st.TakesCtx && h.CtxName == "" {
				why = NoContext
				return false
			}
			if st.KeyExpr != nil && st.KeyExpr.Err != nil || st.NoTypeArgs || st.MethodExpr {
				why = BadKey
				return false
			}
			base := "resume_" + SanitizeIdent(h.Display) + "_" + SanitizeIdent(st.Name)
			names[base]++
			st.Wrapper = base
			if n := names[base]; n > 1 {
				st.Wrapper = fmt.Sprintf("%s%d", base, n)
			}
			h.Sites = append(h.Sites, &Site{ID: fmt.Sprintf("%s.%s:%d", p.Load.PkgPath, h.Display, len(h.Sites)), Step: st})
			return true
		}
		callee := p.Calls.Steps.Callee(call)
		if callee == nil || p.Directives.WorkflowOf(callee) != nil || p.Calls.Steps.StepCall(callee) == nil {
			return true
		}
		hc := &HelperCall{Call: call, Callee: callee, Witness: p.Calls.Steps.StepCall(callee)}
		if !p.copyableCall(hc) {
			return true // a workflow reaching it is refused
		}
		other, _ := p.Module.sharedCopy(callee)
		if other == nil {
			return true
		}
		hc.Helper = other
		h.Calls[call.Lparen] = hc
		return true
	})
	return why
}

// copyableCall fills in how the call hc of a helper is routed to its
// copy (Method, Addr, Deref), or records why it cannot be (a method
// expression, a method promoted through an embedded field) and reports
// false.
func (p *Package) copyableCall(hc *HelperCall) bool {
	sig := hc.Callee.Type().(*types.Signature)
	if sig.TypeParams().Len() > 0 || (sig.Recv() != nil && sig.RecvTypeParams().Len() > 0) {
		hc.Uncopyable = Generic
		return false
	}
	sel, ok := ast.Unparen(hc.Call.Fun).(*ast.SelectorExpr)
	if !ok {
		return true
	}
	selection := p.Load.TypesInfo.Selections[sel]
	if selection == nil {
		if sig.Recv() == nil {
			return true // pkg.F
		}
		hc.Uncopyable = MethodExpression
		return false
	}
	if selection.Kind() != types.MethodVal {
		hc.Uncopyable = MethodExpression
		return false
	}
	if len(selection.Index()) > 1 {
		hc.Uncopyable, hc.Embedded = ViaEmbedded, embeddedPath(selection)
		return false
	}
	_, recvPtr := sig.Recv().Type().(*types.Pointer)
	_, xPtr := p.Load.TypesInfo.TypeOf(sel.X).Underlying().(*types.Pointer)
	hc.Method, hc.Addr, hc.Deref = true, recvPtr && !xPtr, !recvPtr && xPtr
	return true
}

// SiteAt returns the shared copy's site of the call with this Lparen, or
// nil.
func (h *Helper) SiteAt(lparen token.Pos) *Site {
	for _, s := range h.Sites {
		if s.Step.Call.Lparen == lparen {
			return s
		}
	}
	return nil
}

// QualifiedName is fn's name as messages about another package name it:
// pkg.F, pkg.Type.M; F or Type.M in self.
func QualifiedName(fn *types.Func, self *types.Package) string {
	name := DisplayName(fn)
	if fn.Pkg() != nil && fn.Pkg() != self {
		name = fn.Pkg().Name() + "." + name
	}
	return name
}
