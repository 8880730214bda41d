package check

import (
	"go/ast"

	"github.com/resumegen/resumegen/generator/internal/model"
)

// Unreached refuses a call-site directive in a function that no
// workflow's step search walked: it would mark nothing. A function that a
// workflow calls where the step search may not follow it (in a go
// statement, a closure, a select, a map range or a deferred call, or a
// generic helper, a method expression or a promoted method), and what
// that function calls, is left out: the placement check refuses the call,
// and once it is fixed the directive marks its call.
var Unreached = &Check{
	Name: "unreached",
	Doc:  "a call-site directive in a function no workflow body reaches marks nothing",
	Run: func(p *Pass) {
		for _, pkg := range p.Packages {
			refused := refusedCallees(pkg)
			for _, ib := range pkg.Directives.InBodies {
				if !pkg.Reached[ib.Func] && !refused[ib.Func] {
					p.Errorf(ib.Directive.Pos, "%s: directive inside %s, which is neither a //resume:workflow nor a function a workflow body calls: a call-site directive only marks calls in a workflow body or in the helpers it calls", ib.Directive.Text, ib.Func.Name.Name)
				}
			}
		}
	},
}

// refusedCallees are the declarations of the functions whose calls the
// step search did not follow (model.Workflow.Blocked), and of the
// functions of the package they call, directly or not.
func refusedCallees(pkg *model.Package) map[*ast.FuncDecl]bool {
	refused := map[*ast.FuncDecl]bool{}
	var add func(decl *ast.FuncDecl)
	add = func(decl *ast.FuncDecl) {
		if decl == nil || decl.Body == nil || refused[decl] {
			return
		}
		refused[decl] = true
		ast.Inspect(decl.Body, func(n ast.Node) bool {
			if call, ok := n.(*ast.CallExpr); ok {
				if callee := pkg.Calls.Steps.Callee(call); callee != nil {
					add(pkg.Calls.Steps.Decl(callee))
				}
			}
			return true
		})
	}
	for _, w := range pkg.Workflows {
		for _, hc := range w.Blocked {
			add(pkg.Calls.Steps.Decl(hc.Callee))
		}
	}
	return refused
}
