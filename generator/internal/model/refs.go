package model

import (
	"fmt"
	"go/ast"
	"go/types"

	"github.com/resumegen/resumegen/generator/internal/calls"
	"github.com/resumegen/resumegen/generator/internal/jsontype"
)

// stepRefs records the parameters of s's callee (after the context, not
// pointers: see stepTypes) through which the step may change what the
// body hands it, as the callee's code says (calls.Analysis.ParamUse), and
// journals the slices and maps it writes into when JSON carries them
// whole: the wrapper journals them after the call and writes them back on
// replay, which restores what the first execution wrote. What cannot be
// journaled so is refused by the checks (see check.StepRefs).
func (p *Package) stepRefs(s *Step, self *types.Package) {
	q := NameQualifier(self)
	params := s.Sig.Params()
	fn := s.Fn.Origin()
	for i := 0; i < params.Len(); i++ {
		if i == 0 && s.TakesCtx {
			continue
		}
		t := params.At(i).Type()
		if s.Sig.Variadic() && i == params.Len()-1 {
			if !s.Call.Ellipsis.IsValid() {
				continue // a slice the call makes: the body holds no other reference to it
			}
		}
		kind, ok := refKind(t, fn.Pkg())
		if !ok {
			continue
		}
		if arg := s.argument(i); arg != nil && p.fresh(arg) {
			continue // a value the call makes: the body holds no other reference to it
		}
		use, unread := p.paramUse(fn, i)
		r := Ref{Index: i, Type: t, Kind: kind, Use: use, Unread: unread}
		if !use.Any() {
			continue
		}
		if (kind == RefSlice || kind == RefMap) && use.Writes && !use.Appends && !use.Chan && !use.Calls && !r.Unread && !s.Child {
			if elemOK(t) {
				if r.Err = jsontype.RoundTrip(t, q); r.Err == nil {
					s.RefArgs = append(s.RefArgs, i)
					s.Shape = append(s.Shape, jsontype.Shape(fmt.Sprintf("out arg %d", i+1), t, q)...)
				}
			}
		}
		s.Refs = append(s.Refs, r)
	}
}

// paramUse is what fn may do through its i-th parameter, and whether that
// is unknown because its body is not read: another module's function, or
// an interface method that no method read from source implements (one
// that some do gets what they may do).
func (p *Package) paramUse(fn *types.Func, i int) (calls.Use, bool) {
	if p.Calls.Steps.Decl(fn) != nil {
		return p.Calls.ParamUse(fn, i), false
	}
	if u, known := calls.StdUse(fn, i); known {
		return u, false // the standard library's tables say
	}
	if calls.IsInterfaceMethod(fn) && p.Calls.Implemented(fn) {
		return p.Calls.ParamUse(fn, i), false
	}
	return calls.Unknown, true
}

// fresh reports whether arg is a value the call makes, which nothing else
// refers to: a composite literal, a make or new, a conversion of a string
// ([]byte(s)), nil.
func (p *Package) fresh(arg ast.Expr) bool {
	info := p.Load.TypesInfo
	switch a := ast.Unparen(arg).(type) {
	case *ast.CompositeLit:
		return true
	case *ast.Ident:
		return info.Types[a].IsNil()
	case *ast.CallExpr:
		if b, ok := info.Uses[calleeIdent(a.Fun)].(*types.Builtin); ok {
			return b.Name() == "make" || b.Name() == "new"
		}
		if tv, ok := info.Types[a.Fun]; ok && tv.IsType() && len(a.Args) == 1 {
			if b, ok := info.TypeOf(a.Args[0]).Underlying().(*types.Basic); ok && b.Info()&types.IsString != 0 {
				return true
			}
		}
	}
	return false
}

func calleeIdent(e ast.Expr) *ast.Ident {
	id, _ := ast.Unparen(e).(*ast.Ident)
	return id
}

// elemOK reports whether the writes into a slice or map of type t can be
// restored from a copy: its elements hold no reference of their own
// (a slice of pointers would be restored to other pointees).
func elemOK(t types.Type) bool {
	switch u := t.Underlying().(type) {
	case *types.Slice:
		return !sharesState(u.Elem())
	case *types.Map:
		return !sharesState(u.Elem())
	}
	return false
}

// refKind says what kind of reference a parameter of type t is, if it is
// one (a pointer is not: see stepTypes).
func refKind(t types.Type, from *types.Package) (RefKind, bool) {
	switch t.Underlying().(type) {
	case *types.Slice:
		return RefSlice, true
	case *types.Map:
		return RefMap, true
	case *types.Chan:
		return RefChan, true
	case *types.Signature:
		return RefFunc, true
	case *types.Interface:
		if isWriter(t) {
			return RefWriter, true
		}
	case *types.Struct, *types.Array:
		if calls.SharesState(t, from) {
			return RefHolder, true
		}
	}
	return 0, false
}

// writer is io.Writer's method set.
var writer = types.NewInterfaceType([]*types.Func{
	types.NewFunc(0, nil, "Write", types.NewSignatureType(nil, nil, nil,
		types.NewTuple(types.NewParam(0, nil, "p", types.NewSlice(types.Typ[types.Byte]))),
		types.NewTuple(types.NewParam(0, nil, "n", types.Typ[types.Int]), types.NewParam(0, nil, "err", types.Universe.Lookup("error").Type())), false)),
}, nil).Complete()

// isWriter reports whether the interface t has io.Writer's Write.
func isWriter(t types.Type) bool { return types.Implements(t, writer) }

// sharesState reports whether a value of t shares state with what it was
// copied from, for the step's callee fn (see calls.SharesState).
func sharesState(t types.Type) bool { return calls.SharesState(t, nil) }

// fillOwned sets Owned on the step's Refs, once the search knows the
// function holding the call (In).
func (s *Step) fillOwned() {
	for i := range s.Refs {
		if arg := s.argument(s.Refs[i].Index); arg != nil {
			s.Refs[i].Owned = s.In.Pkg.owned(arg, s.In)
		}
	}
}

// argument is the call's argument for the callee's i-th parameter (the
// receiver and an omitted context aside), or nil.
func (s *Step) argument(i int) ast.Expr {
	if i < len(s.Call.Args) {
		return s.Call.Args[i]
	}
	return nil
}

// owned reports whether arg, an argument of a call in fr, is the body's
// own state: a function literal, a method value, or rooted at a local
// variable or parameter of the function holding the call.
func (p *Package) owned(arg ast.Expr, fr *Func) bool {
	info := p.Load.TypesInfo
	switch a := ast.Unparen(arg).(type) {
	case *ast.FuncLit:
		return true
	case *ast.SelectorExpr:
		if s := info.Selections[a]; s != nil && s.Kind() == types.MethodVal {
			return true
		}
	case *ast.UnaryExpr:
		arg = a.X
	}
	for {
		switch x := ast.Unparen(arg).(type) {
		case *ast.Ident:
			v, ok := info.Uses[x].(*types.Var)
			return ok && v.Pkg() != nil && v.Parent() != v.Pkg().Scope() && fr != nil && fr.Decl != nil &&
				fr.Decl.Pos() <= v.Pos() && v.Pos() < fr.Decl.End()
		case *ast.SelectorExpr:
			if info.Selections[x] == nil {
				return false // pkg.V
			}
			arg = x.X
		case *ast.IndexExpr:
			arg = x.X
		case *ast.SliceExpr:
			arg = x.X
		case *ast.StarExpr:
			arg = x.X
		default:
			return false
		}
	}
}
