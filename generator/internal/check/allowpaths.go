package check

import (
	"go/ast"
	"go/token"

	"github.com/resumegen/resumegen/generator/internal/directive"
	"github.com/resumegen/resumegen/generator/internal/model"
)

// allowPaths is, for one workflow, the calls between the functions its
// step search walked, and which of them a //resume:allow at the end of
// the call's line makes an exception: what lies beyond such a call is
// allowed only when every path from the body to it crosses one. The step
// search enters a function once, at its first call, so the path it
// records (model.Func.From) is not enough: `x := util.Pick(n)
// //resume:allow ...` followed by a plain `util.Pick(n)` must still be
// refused.
type allowPaths struct {
	// calls are the calls of walked functions, by the caller.
	calls map[*ast.FuncDecl][]pathCall
	// free are the functions the body reaches without crossing an allow.
	free map[*ast.FuncDecl]bool
	// order are the walked functions, in the order the search entered
	// them.
	order []*ast.FuncDecl
}

// pathCall is one call of a walked function, at (its Lparen), in a file
// of pkg, to the function to.
type pathCall struct {
	to      *ast.FuncDecl
	pkg     *model.Package
	at      token.Pos
	allowed bool
}

// newAllowPaths collects the calls among the functions w's search walked:
// those it entered by, and every other static call of one of them in a
// walked body, but for journaled calls (what runs under a step is
// journaled whatever it does).
func newAllowPaths(w *model.Workflow) *allowPaths {
	ap := &allowPaths{calls: map[*ast.FuncDecl][]pathCall{}, free: map[*ast.FuncDecl]bool{}}
	walked := map[*ast.FuncDecl]bool{}
	for _, f := range w.Funcs {
		walked[f.Decl] = true
		ap.order = append(ap.order, f.Decl)
	}
	seen := map[token.Pos]bool{}
	add := func(from *model.Func, to *ast.FuncDecl, at token.Pos) {
		if !seen[at] {
			seen[at] = true
			_, allowed := from.Pkg.Directives.Allows[lineOf(from.Pkg, at)]
			ap.calls[from.Decl] = append(ap.calls[from.Decl], pathCall{to: to, pkg: from.Pkg, at: at, allowed: allowed})
		}
	}
	for _, f := range w.Funcs {
		if f.From != nil {
			add(f.From, f.Decl, f.EnteredAt)
		}
		ast.Inspect(f.Decl.Body, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || w.CallAt(call.Lparen) != nil {
				return true
			}
			if _, marked := f.Pkg.Directives.Sites[call.Lparen]; marked {
				return true
			}
			if to := f.Pkg.Calls.Steps.Decl(f.Pkg.Calls.Steps.Callee(call)); to != nil && walked[to] {
				add(f, to, call.Lparen)
			}
			return true
		})
	}
	if len(w.Funcs) > 0 {
		var visit func(d *ast.FuncDecl)
		visit = func(d *ast.FuncDecl) {
			if ap.free[d] {
				return
			}
			ap.free[d] = true
			for _, c := range ap.calls[d] {
				if !c.allowed {
					visit(c.to)
				}
			}
		}
		visit(w.Funcs[0].Decl)
	}
	return ap
}

// lineOf is the line of pos, in a file of pkg, as directives are found by.
func lineOf(pkg *model.Package, pos token.Pos) directive.Line {
	at := pkg.Load.Fset.Position(pos)
	return directive.Line{File: at.Filename, Line: at.Line}
}

// allowedCalls are the calls with a //resume:allow, in walked order, by
// which the body reaches fn without crossing another: calls of fn itself
// or of a function calling it, directly or not.
func (ap *allowPaths) allowedCalls(fn *ast.FuncDecl) []pathCall {
	reaches := map[*ast.FuncDecl]bool{}
	var reach func(d *ast.FuncDecl) bool
	reach = func(d *ast.FuncDecl) bool {
		if d == fn {
			return true
		}
		if r, seen := reaches[d]; seen {
			return r
		}
		reaches[d] = false // a cycle adds nothing
		for _, c := range ap.calls[d] {
			if reach(c.to) {
				reaches[d] = true
			}
		}
		return reaches[d]
	}
	var out []pathCall
	for _, from := range ap.order {
		if !ap.free[from] {
			continue
		}
		for _, c := range ap.calls[from] {
			if c.allowed && reach(c.to) {
				out = append(out, c)
			}
		}
	}
	return out
}
