package generator

import (
	"go/types"
	"sort"
)

// checkWorkflow refuses a workflow whose signature the runtime cannot
// drive: the first parameter must be a context.Context, the results error
// or (T, error), and the input and result types must be journalable.
func (m *packageModel) checkWorkflow(w *Workflow, ds *diagnostics) {
	pos := w.decl.Name.Pos()
	self := m.pkg.Types
	if w.sig.TypeParams().Len() > 0 {
		ds.errorf(pos, "workflow %s: a workflow cannot be generic: its journaled input and output need one type, and its version one step list; declare a workflow per type you run it with, each calling the steps with its own types", w.Name)
		return // its type parameters are not types JSON can be checked for
	}
	params := w.sig.Params()
	if params.Len() == 0 || !isContext(params.At(0).Type()) {
		ds.errorf(pos, "workflow %s: the first parameter must be a context.Context (the run's context)", w.Name)
	}
	for i := 1; i < params.Len(); i++ {
		t := params.At(i).Type()
		if w.sig.Variadic() && i == params.Len()-1 {
			t = t.(*types.Slice).Elem()
		}
		if err := journalable(t, nameQualifier(m.pkg.Types)); err != nil {
			ds.errorf(pos, "workflow %s: parameter type %s cannot be journaled as JSON (it is the run's input): %v", w.Name, typeString(t, self), err)
		}
	}
	res := w.sig.Results()
	if !resultsOK(res) {
		ds.errorf(pos, "workflow %s: returns %s; a workflow must return error or (T, error)", w.Name, tupleString(res, nameQualifier(self)))
		return
	}
	if res.Len() == 2 {
		if err := journalable(res.At(0).Type(), nameQualifier(m.pkg.Types)); err != nil {
			ds.errorf(pos, "workflow %s: result type %s cannot be journaled as JSON (it is the run's output): %v", w.Name, typeString(res.At(0).Type(), self), err)
		}
	}
}

// checkPredeclared refuses a workflow whose generated code names a
// predeclared identifier (any, error, nil, int64, ...) that a package-level
// declaration shadows: Go has no other way to name it. A declaration of an
// identical type (type any = interface{}) changes nothing and is allowed.
func (m *packageModel) checkPredeclared(w *Workflow, ds *diagnostics) {
	scope := m.pkg.Types.Scope()
	for _, name := range predeclaredNeeded(w) {
		obj := scope.Lookup(name)
		if obj == nil {
			continue
		}
		if tn, ok := obj.(*types.TypeName); ok && types.Identical(tn.Type(), types.Universe.Lookup(name).Type()) {
			continue
		}
		ds.errorf(w.decl.Name.Pos(), "workflow %s: the generated code needs the predeclared %s, which the package-level %s at %s shadows; rename that declaration", w.Name, name, name, m.posString(obj.Pos(), ds))
	}
}

// predeclaredNeeded lists, sorted, the predeclared identifiers the
// generated code of w names: any, error and nil (its init function), the
// conversion of a key (string, int64, uint64) and those that the types it
// prints name (int, string, error, ...).
func predeclaredNeeded(w *Workflow) []string {
	set := map[string]bool{"any": true, "error": true, "nil": true}
	add := func(name string) { set[name] = true }
	predeclaredIn(w.sig, add)
	for _, s := range w.Steps {
		predeclaredIn(s.sig, add)
		if s.recvType != nil {
			predeclaredIn(s.recvType, add)
		}
		if s.typeArgs != nil {
			for i := 0; i < s.typeArgs.Len(); i++ {
				predeclaredIn(s.typeArgs.At(i), add)
			}
		}
		if s.key != nil {
			predeclaredIn(s.key.typ, add)
			if c := s.key.conversion(); c != "" {
				add(c)
			}
		}
	}
	names := make([]string, 0, len(set))
	for n := range set {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// predeclaredIn calls add with each predeclared identifier that
// types.TypeString writes for t. A named type or alias is written by its
// name, so only its type arguments are looked into.
func predeclaredIn(t types.Type, add func(string)) {
	switch t := t.(type) {
	case *types.Basic:
		if t.Kind() != types.UnsafePointer {
			add(t.Name())
		}
	case *types.Alias:
		if t.Obj().Pkg() == nil {
			add(t.Obj().Name())
		}
		for i := 0; i < t.TypeArgs().Len(); i++ {
			predeclaredIn(t.TypeArgs().At(i), add)
		}
	case *types.Named:
		if t.Obj().Pkg() == nil {
			add(t.Obj().Name())
		}
		for i := 0; i < t.TypeArgs().Len(); i++ {
			predeclaredIn(t.TypeArgs().At(i), add)
		}
	case *types.Pointer:
		predeclaredIn(t.Elem(), add)
	case *types.Slice:
		predeclaredIn(t.Elem(), add)
	case *types.Array:
		predeclaredIn(t.Elem(), add)
	case *types.Map:
		predeclaredIn(t.Key(), add)
		predeclaredIn(t.Elem(), add)
	case *types.Chan:
		predeclaredIn(t.Elem(), add)
	case *types.Tuple:
		for i := 0; i < t.Len(); i++ {
			predeclaredIn(t.At(i).Type(), add)
		}
	case *types.Signature:
		if t.Recv() != nil {
			predeclaredIn(t.Recv().Type(), add)
		}
		predeclaredIn(t.Params(), add)
		predeclaredIn(t.Results(), add)
	case *types.Struct:
		for i := 0; i < t.NumFields(); i++ {
			predeclaredIn(t.Field(i).Type(), add)
		}
	case *types.Interface:
		if t == types.Universe.Lookup("any").Type().Underlying() {
			add("any") // TypeString writes any for it
			return
		}
		for i := 0; i < t.NumEmbeddeds(); i++ {
			predeclaredIn(t.EmbeddedType(i), add)
		}
		for i := 0; i < t.NumExplicitMethods(); i++ {
			sig := t.ExplicitMethod(i).Signature() // not its receiver: t itself
			predeclaredIn(sig.Params(), add)
			predeclaredIn(sig.Results(), add)
		}
	}
}

// generatedNames assigns the identifiers the generated code declares for
// each workflow and refuses collisions with the package's own declarations
// or between workflows.
func (m *packageModel) generatedNames(ds *diagnostics) {
	taken := map[string]string{} // generated identifier → workflow
	scope := m.pkg.Types.Scope()
	for _, w := range m.workflows {
		for _, s := range w.Steps {
			if s.wait == waitNone { // a wait's call is not rewritten
				s.wrapper = "resume" + sanitizeIdent(w.Name) + "_" + sanitizeIdent(s.Name)
			}
		}
		names := []string{defName(w), versionName(w), bodyName(w), graphName(w)}
		for _, s := range w.Steps {
			if s.wait != waitNone {
				continue
			}
			names = append(names, s.wrapper)
			if s.needsOut() {
				names = append(names, outTypeName(s))
			}
		}
		for _, h := range w.helpers {
			names = append(names, h.copyName)
		}
		for _, n := range names {
			if obj := scope.Lookup(n); obj != nil {
				ds.errorf(w.decl.Name.Pos(), "workflow %s: generated identifier %s collides with the declaration at %s; rename one of them", w.Name, n, m.posString(obj.Pos(), ds))
			} else if other, dup := taken[n]; dup {
				ds.errorf(w.decl.Name.Pos(), "workflow %s: generated identifier %s is also generated for workflow %s; rename a workflow or a step (name=)", w.Name, n, other)
			}
			taken[n] = w.Name
		}
	}
}

func defName(w *Workflow) string     { return "resume" + sanitizeIdent(w.Name) }
func versionName(w *Workflow) string { return "resume" + sanitizeIdent(w.Name) + "Version" }
func bodyName(w *Workflow) string    { return "resume" + sanitizeIdent(w.Name) + "Body" }
func graphName(w *Workflow) string   { return "resume" + sanitizeIdent(w.Name) + "Graph" }
