package emit

import (
	"go/ast"
	"go/token"
	"reflect"
)

var (
	objectType = reflect.TypeOf((*ast.Object)(nil))
	scopeType  = reflect.TypeOf((*ast.Scope)(nil))
	posType    = reflect.TypeOf(token.NoPos)
)

// placeAt returns a copy of an expression parsed on its own (a key=EXPR)
// with every position set to pos, so that printing it inside a copied body
// keeps it on pos's line, before any comment that follows pos.
func placeAt(e ast.Expr, pos token.Pos) ast.Expr {
	c := copyAST(e)
	var clear func(v reflect.Value)
	clear = func(v reflect.Value) {
		switch v.Kind() {
		case reflect.Pointer, reflect.Interface:
			if !v.IsNil() {
				clear(v.Elem())
			}
		case reflect.Struct:
			for i := 0; i < v.NumField(); i++ {
				if f := v.Field(i); f.CanSet() {
					if f.Type() == posType {
						if f.Int() != 0 { // NoPos means absent (Ellipsis)
							f.SetInt(int64(pos))
						}
					} else {
						clear(f)
					}
				}
			}
		case reflect.Slice:
			for i := 0; i < v.Len(); i++ {
				clear(v.Index(i))
			}
		}
	}
	clear(reflect.ValueOf(c))
	return c
}

// copyAST returns a deep copy of an AST node with the same positions, so
// that the loaded AST (shared with types.Info) is never mutated. The
// deprecated ast.Object and ast.Scope links are dropped: the generator
// resolves identifiers through types.Info on the original.
func copyAST[N ast.Node](n N) N {
	return copyValue(reflect.ValueOf(n)).Interface().(N)
}

func copyValue(v reflect.Value) reflect.Value {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return v
		}
		if v.Type() == objectType || v.Type() == scopeType {
			return reflect.Zero(v.Type())
		}
		n := reflect.New(v.Type().Elem())
		n.Elem().Set(copyValue(v.Elem()))
		return n
	case reflect.Struct:
		n := reflect.New(v.Type()).Elem()
		for i := 0; i < v.NumField(); i++ {
			if f := n.Field(i); f.CanSet() {
				f.Set(copyValue(v.Field(i)))
			}
		}
		return n
	case reflect.Slice:
		if v.IsNil() {
			return v
		}
		n := reflect.MakeSlice(v.Type(), v.Len(), v.Len())
		for i := 0; i < v.Len(); i++ {
			n.Index(i).Set(copyValue(v.Index(i)))
		}
		return n
	case reflect.Interface:
		if v.IsNil() {
			return v
		}
		n := reflect.New(v.Type()).Elem()
		n.Set(copyValue(v.Elem()))
		return n
	}
	return v
}
