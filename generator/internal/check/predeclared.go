package check

import (
	"go/types"
	"sort"

	"github.com/resumegen/resumegen/generator/internal/model"
)

// Predeclared refuses a workflow whose generated code names a predeclared
// identifier (any, error, nil, int64, ...) that a package-level
// declaration shadows: Go has no other way to name it. A declaration of an
// identical type (type any = interface{}) changes nothing and is allowed.
var Predeclared = &Check{
	Name: "predeclared",
	Doc:  "a package-level declaration may not shadow a predeclared identifier the generated code names",
	Run: func(p *Pass) {
		p.workflows(func(pkg *model.Package, w *model.Workflow) { predeclared(p, pkg, w) })
	},
}

func predeclared(p *Pass, pkg *model.Package, w *model.Workflow) {
	scope := pkg.Load.Types.Scope()
	for _, name := range predeclaredNeeded(w) {
		obj := scope.Lookup(name)
		if obj == nil {
			continue
		}
		if tn, ok := obj.(*types.TypeName); ok && types.Identical(tn.Type(), types.Universe.Lookup(name).Type()) {
			continue
		}
		p.Errorf(w.Decl.Name.Pos(), "workflow %s: the generated code needs the predeclared %s, which the package-level %s at %s shadows; rename that declaration", w.Name, name, name, p.PosString(obj.Pos()))
	}
}

// predeclaredNeeded lists, sorted, the predeclared identifiers the
// generated code of w names: any, error and nil (its init function), the
// conversion of a key (string, int64, uint64) and those that the types it
// prints name (int, string, error, ...).
func predeclaredNeeded(w *model.Workflow) []string {
	set := map[string]bool{"any": true, "error": true, "nil": true}
	add := func(name string) { set[name] = true }
	predeclaredIn(w.Sig, add)
	for _, s := range w.Steps {
		if s.Sig != nil {
			predeclaredIn(s.Sig, add)
		}
		if s.RecvType != nil {
			predeclaredIn(s.RecvType, add)
		}
		if s.TypeArgs != nil {
			for i := 0; i < s.TypeArgs.Len(); i++ {
				predeclaredIn(s.TypeArgs.At(i), add)
			}
		}
		if s.KeyExpr != nil && s.KeyExpr.Err == nil {
			predeclaredIn(s.KeyExpr.Type, add)
			if c := s.KeyExpr.Conversion(); c != "" {
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
