package model

import (
	"go/ast"
	"go/token"
	"go/types"
	"strings"
)

// CalleeIdent is the identifier naming the function in a call's Fun: F,
// pkg.F, F[T] or pkg.F[T1, T2].
func CalleeIdent(fun ast.Expr) *ast.Ident {
	switch f := ast.Unparen(fun).(type) {
	case *ast.Ident:
		return f
	case *ast.SelectorExpr:
		return f.Sel
	case *ast.IndexExpr:
		return CalleeIdent(f.X)
	case *ast.IndexListExpr:
		return CalleeIdent(f.X)
	}
	return nil
}

// TypeArgsString renders type arguments as [T1, T2].
func TypeArgsString(l *types.TypeList, q types.Qualifier) string {
	var b strings.Builder
	b.WriteByte('[')
	for i := 0; i < l.Len(); i++ {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(types.TypeString(l.At(i), q))
	}
	b.WriteByte(']')
	return b.String()
}

// SplitResults splits a step's results into the values the journal
// carries (their indices) and a trailing error: a step may return any
// number of values, with or without an error, which must then be last.
// valid is false when an error stands anywhere else.
func SplitResults(res *types.Tuple) (values []int, hasErr, valid bool) {
	for i := 0; i < res.Len(); i++ {
		if IsError(res.At(i).Type()) {
			if i != res.Len()-1 {
				return nil, false, false
			}
			hasErr = true
			continue
		}
		values = append(values, i)
	}
	return values, hasErr, true
}

// ResultsOK reports whether results are error or (T, error).
func ResultsOK(res *types.Tuple) bool {
	switch res.Len() {
	case 1:
		return IsError(res.At(0).Type())
	case 2:
		return IsError(res.At(1).Type())
	}
	return false
}

// CalleeNames returns the fully qualified callee and the name shown in the
// manifest comment (qualified by package name outside the workflow's own
// package).
func CalleeNames(fn *types.Func, self *types.Package) (qualified, display string) {
	pkgPath, pkgName := "", ""
	if fn.Pkg() != nil {
		pkgPath, pkgName = fn.Pkg().Path(), fn.Pkg().Name()
	}
	local := fn.Name()
	if recv := fn.Type().(*types.Signature).Recv(); recv != nil {
		t := recv.Type()
		ptr := false
		if p, ok := t.(*types.Pointer); ok {
			t, ptr = p.Elem(), true
		}
		typeName := "?"
		if n, ok := t.(*types.Named); ok {
			typeName = n.Obj().Name()
		}
		if ptr {
			local = "(*" + typeName + ")." + fn.Name()
		} else {
			local = typeName + "." + fn.Name()
		}
	}
	qualified = pkgPath + "." + local
	display = local
	if fn.Pkg() != self && pkgName != "" {
		display = pkgName + "." + local
		if len(local) > 0 && local[0] == '(' {
			display = "(*" + pkgName + "." + local[2:]
		}
	}
	return qualified, display
}

// DisplayName is fn's name, Type.Method for a method: a step's default
// name, a helper's name in messages.
func DisplayName(fn *types.Func) string {
	recv := fn.Type().(*types.Signature).Recv()
	if recv == nil {
		return fn.Name()
	}
	t := recv.Type()
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	}
	if n, ok := t.(*types.Named); ok {
		return n.Obj().Name() + "." + fn.Name()
	}
	return fn.Name()
}

// BareSignature is sig without receiver and parameter names, so that the
// printed type does not change when a parameter is renamed.
func BareSignature(sig *types.Signature) *types.Signature {
	strip := func(t *types.Tuple) *types.Tuple {
		vars := make([]*types.Var, t.Len())
		for i := range vars {
			vars[i] = types.NewParam(token.NoPos, nil, "", t.At(i).Type())
		}
		return types.NewTuple(vars...)
	}
	return types.NewSignatureType(nil, nil, nil, strip(sig.Params()), strip(sig.Results()), sig.Variadic())
}

// NameQualifier qualifies types by package name, leaving self unqualified.
func NameQualifier(self *types.Package) types.Qualifier {
	return func(p *types.Package) string {
		if p == self {
			return ""
		}
		return p.Name()
	}
}

// TypeString is t qualified by package name, unqualified in self.
func TypeString(t types.Type, self *types.Package) string {
	return types.TypeString(t, NameQualifier(self))
}

// TupleString renders a result tuple for messages: "nothing", "T",
// "(T, U)".
func TupleString(t *types.Tuple, q types.Qualifier) string {
	if t.Len() == 0 {
		return "nothing"
	}
	s := types.TypeString(t, q)
	if t.Len() == 1 {
		return s[1 : len(s)-1]
	}
	return s
}

// IsContext reports whether t is context.Context.
func IsContext(t types.Type) bool { return isNamed(t, "context", "Context") }

// IsError reports whether t is the predeclared error type.
func IsError(t types.Type) bool { return types.Identical(t, types.Universe.Lookup("error").Type()) }

func isNamed(t types.Type, pkgPath, name string) bool {
	n, ok := types.Unalias(t).(*types.Named)
	return ok && n.Obj().Pkg() != nil && n.Obj().Pkg().Path() == pkgPath && n.Obj().Name() == name
}

// ErrorInterface is the underlying interface of the predeclared error.
var ErrorInterface = types.Universe.Lookup("error").Type().Underlying().(*types.Interface)
