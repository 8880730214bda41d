package check

import "go/ast"

// Concurrency refuses, in a workflow body and the helpers it calls,
// outside steps, a go statement and a select of more than one case
// (counting default), unless it holds a journaled call, which Placement
// refuses: the scheduler decides what they do, and a resume may see it
// decide otherwise.
var Concurrency = &Check{
	Name: "concurrency",
	Doc:  "no goroutines or select outside steps",
	Run: func(p *Pass) {
		walkBodies(p, func(nd *nondet, n ast.Node) {
			switch n := n.(type) {
			case *ast.GoStmt:
				if !nd.journaled.holds(n) {
					nd.report(n.Pos(), "go statement", "starts a goroutine, which runs concurrently with the body in no fixed order, so what it does may differ when the run resumes",
						"do the concurrent work inside a step (it may start goroutines and wait for them), call it directly, or run child workflows in parallel with resume.Map (docs/reference.md, Fan-out)")
				}
			case *ast.SelectStmt:
				if !nd.journaled.holds(n) && len(n.Body.List) > 1 {
					nd.report(n.Pos(), "select", "picks a ready case at random, so it may take another one when the run resumes",
						"receive in a step and branch on what it returns, or wait with resume.Await[T](ctx, NAME, timeout)")
				}
			}
		})
	},
}
