package model

import (
	"go/ast"
	"go/token"
)

// Inspect calls visit for each node of the workflow's body and of the
// functions the step search entered from it, in the order the search
// walked them: depth first, in source order, each function entered once,
// right after the call that entered it (its receiver and arguments
// first). in is the function whose body holds the node.
func (w *Workflow) Inspect(visit func(n ast.Node, in *Func)) {
	entries := map[token.Pos]*Func{}
	for _, f := range w.Funcs[1:] {
		entries[f.EnteredAt] = f
	}
	var inspect func(f *Func)
	inspect = func(f *Func) {
		var stack []ast.Node
		ast.Inspect(f.Decl.Body, func(n ast.Node) bool {
			if n == nil {
				top := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				if call, ok := top.(*ast.CallExpr); ok {
					if g := entries[call.Lparen]; g != nil {
						inspect(g)
					}
				}
				return true
			}
			stack = append(stack, n)
			visit(n, f)
			return true
		})
	}
	if len(w.Funcs) > 0 {
		inspect(w.Funcs[0])
	}
}

// CallAt returns the journaled call the step search recorded at the
// call with this Lparen, or nil.
func (w *Workflow) CallAt(lparen token.Pos) *Step { return w.callAt[lparen] }
