package check

import (
	"go/ast"
	"go/token"
	"go/types"

	"golang.org/x/tools/go/types/typeutil"
)

// MapOrder refuses, in a workflow body and the helpers it calls, outside
// steps, a range over a map or over an iterator yielding in map order
// (maps.Keys, maps.Values, maps.All, collected or not) whose body may
// depend on the order (see orderFree), unless it holds a journaled call,
// which Placement refuses. A //resume:allow makes it a reviewed exception.
var MapOrder = &Check{
	Name: "maporder",
	Doc:  "no loop over a map whose outcome depends on its random order, outside steps",
	Run: func(p *Pass) {
		walkBodies(p, func(nd *nondet, n ast.Node) {
			if r, ok := n.(*ast.RangeStmt); ok && !nd.journaled.holds(r) {
				nd.mapRange(r)
			}
		})
	},
}

// mapRange refuses a range over a map, or over an iterator yielding in map
// order, whose body may depend on the order (see orderFree).
func (nd *nondet) mapRange(r *ast.RangeStmt) {
	info := nd.in.Info()
	t := info.TypeOf(r.X)
	if t == nil {
		return
	}
	what := ""
	if fn := unorderedSeq(info, r.X); fn != "" {
		what = "range over " + fn
	} else if _, ok := t.Underlying().(*types.Map); ok {
		what = "range over a map"
	}
	if what == "" || nd.orderFree(r) {
		return
	}
	nd.report(r.Pos(), what, "iterates in random order, so code that depends on the order does something else when the run resumes",
		"range over sorted keys (slices.Sorted(maps.Keys(m))); a loop that only counts, sums integers, or sets or deletes the entry of its own key is fine")
}

// unorderedSeq names the call of x that yields a map's entries in map
// order (maps.Keys, maps.Values, maps.All, or slices.Collect or
// slices.AppendSeq of one), or returns "".
func unorderedSeq(info *types.Info, x ast.Expr) string {
	call, ok := ast.Unparen(x).(*ast.CallExpr)
	if !ok {
		return ""
	}
	fn, ok := typeutil.Callee(info, call).(*types.Func)
	if !ok || fn.Pkg() == nil {
		return ""
	}
	name := fn.Pkg().Path() + "." + fn.Name()
	switch name {
	case "maps.Keys", "maps.Values", "maps.All":
		return name
	case "slices.Collect", "slices.AppendSeq":
		if len(call.Args) > 0 {
			if inner := unorderedSeq(info, call.Args[len(call.Args)-1]); inner != "" {
				return name + "(" + inner + ")"
			}
		}
	}
	return ""
}

// orderFree reports whether the body of the range r gives the same outcome
// in any order: each statement counts or sums integers (x++, x--, x += e,
// x -= e, x |= e, x &= e, x ^= e on an integer variable), sets the entry
// of the range's own key in a map (m2[k] = e), deletes it (delete(m, k)),
// appends to a local slice that the next statement after the loop naming
// it sorts (sort.Strings(s), slices.SortFunc(s, cmp), ...), or continues,
// possibly under an if without else whose condition, like every
// expression, calls nothing but len, cap and conversions.
func (nd *nondet) orderFree(r *ast.RangeStmt) bool {
	info := nd.in.Info()
	var appended []*types.Var
	key, _ := r.Key.(*ast.Ident)
	var keyObj types.Object
	if key != nil && key.Name != "_" {
		keyObj = info.ObjectOf(key)
	}
	var stmts func(list []ast.Stmt) bool
	stmt := func(s ast.Stmt) bool {
		switch s := s.(type) {
		case *ast.IncDecStmt:
			return isIntegerVar(info, s.X)
		case *ast.AssignStmt:
			if len(s.Lhs) != 1 || len(s.Rhs) != 1 {
				return false
			}
			if s.Tok == token.ASSIGN {
				if v := selfAppend(info, s); v != nil {
					appended = append(appended, v)
					return true
				}
			}
			if !pure(info, s.Rhs[0]) {
				return false
			}
			switch s.Tok {
			case token.ADD_ASSIGN, token.SUB_ASSIGN, token.OR_ASSIGN, token.AND_ASSIGN, token.XOR_ASSIGN:
				return isIntegerVar(info, s.Lhs[0])
			case token.ASSIGN:
				ix, ok := s.Lhs[0].(*ast.IndexExpr)
				if !ok || keyObj == nil || !pure(info, ix.X) {
					return false
				}
				_, isMap := info.TypeOf(ix.X).Underlying().(*types.Map)
				id, ok := ast.Unparen(ix.Index).(*ast.Ident)
				return isMap && ok && info.ObjectOf(id) == keyObj
			}
			return false
		case *ast.ExprStmt:
			call, ok := s.X.(*ast.CallExpr)
			if !ok || len(call.Args) != 2 || keyObj == nil {
				return false
			}
			b, ok := typeutil.Callee(info, call).(*types.Builtin)
			id, isID := ast.Unparen(call.Args[1]).(*ast.Ident)
			return ok && b.Name() == "delete" && isID && info.ObjectOf(id) == keyObj && pure(info, call.Args[0])
		case *ast.BranchStmt:
			return s.Tok == token.CONTINUE && s.Label == nil
		case *ast.IfStmt:
			return s.Init == nil && s.Else == nil && pure(info, s.Cond) && stmts(s.Body.List)
		case *ast.EmptyStmt:
			return true
		}
		return false
	}
	stmts = func(list []ast.Stmt) bool {
		for _, s := range list {
			if !stmt(s) {
				return false
			}
		}
		return true
	}
	if !stmts(r.Body.List) {
		return false
	}
	for _, v := range appended {
		if !nd.sortedAfter(r, v) {
			return false
		}
	}
	return true
}

// selfAppend returns v for s, v = append(v, e...) on a local variable v
// with pure arguments, else nil.
func selfAppend(info *types.Info, s *ast.AssignStmt) *types.Var {
	id, ok := s.Lhs[0].(*ast.Ident)
	call, isCall := ast.Unparen(s.Rhs[0]).(*ast.CallExpr)
	if !ok || !isCall || len(call.Args) < 2 || call.Ellipsis.IsValid() {
		return nil
	}
	if b, ok := typeutil.Callee(info, call).(*types.Builtin); !ok || b.Name() != "append" {
		return nil
	}
	v, ok := info.Uses[id].(*types.Var)
	first, isID := ast.Unparen(call.Args[0]).(*ast.Ident)
	if !ok || !isID || info.Uses[first] != v || v.Parent() == v.Pkg().Scope() {
		return nil
	}
	for _, a := range call.Args[1:] {
		if !pure(info, a) {
			return nil
		}
	}
	return v
}

// sortFuncs are the functions that sort a slice given first, in place.
var sortFuncs = map[string]bool{
	"sort.Strings": true, "sort.Ints": true, "sort.Float64s": true, "sort.Slice": true, "sort.SliceStable": true,
	"slices.Sort": true, "slices.SortFunc": true, "slices.SortStableFunc": true,
}

// sortedAfter reports whether, in the block holding the range r, the
// first statement after r that names v is a call sorting v.
func (nd *nondet) sortedAfter(r *ast.RangeStmt, v *types.Var) bool {
	info := nd.in.Info()
	var block *ast.BlockStmt
	ast.Inspect(nd.in.Decl.Body, func(n ast.Node) bool {
		if b, ok := n.(*ast.BlockStmt); ok {
			for _, s := range b.List {
				if s == r {
					block = b
				}
			}
		}
		return block == nil
	})
	if block == nil {
		return false
	}
	after := false
	for _, s := range block.List {
		if s == r {
			after = true
			continue
		}
		if !after || !names(info, s, v) {
			continue
		}
		es, ok := s.(*ast.ExprStmt)
		if !ok {
			return false
		}
		call, ok := es.X.(*ast.CallExpr)
		if !ok || len(call.Args) == 0 {
			return false
		}
		fn, ok := typeutil.Callee(info, call).(*types.Func)
		first, isID := ast.Unparen(call.Args[0]).(*ast.Ident)
		return ok && fn.Pkg() != nil && sortFuncs[fn.Pkg().Path()+"."+fn.Name()] && isID && info.Uses[first] == v
	}
	return false
}

// names reports whether n refers to v.
func names(info *types.Info, n ast.Node, v *types.Var) bool {
	found := false
	ast.Inspect(n, func(n ast.Node) bool {
		if id, ok := n.(*ast.Ident); ok && info.Uses[id] == v {
			found = true
		}
		return !found
	})
	return found
}

// isIntegerVar reports whether e is a variable of an integer type.
func isIntegerVar(info *types.Info, e ast.Expr) bool {
	if _, ok := ast.Unparen(e).(*ast.Ident); !ok {
		if _, ok := ast.Unparen(e).(*ast.SelectorExpr); !ok {
			return false
		}
	}
	b, ok := info.TypeOf(e).Underlying().(*types.Basic)
	return ok && b.Info()&types.IsInteger != 0
}

// pure reports whether e calls nothing but len, cap and conversions.
func pure(info *types.Info, e ast.Expr) bool {
	ok := true
	ast.Inspect(e, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.CallExpr:
			if tv, isT := info.Types[n.Fun]; isT && tv.IsType() {
				return true
			}
			if b, isB := typeutil.Callee(info, n).(*types.Builtin); isB && (b.Name() == "len" || b.Name() == "cap") {
				return true
			}
			ok = false
		case *ast.FuncLit, *ast.UnaryExpr:
			if u, isU := n.(*ast.UnaryExpr); isU && u.Op != token.ARROW {
				return true
			}
			ok = false
		}
		return ok
	})
	return ok
}
