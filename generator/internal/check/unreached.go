package check

import (
	"go/ast"
	"go/types"

	"github.com/resumegen/resumegen/generator/internal/model"
)

// Unreached refuses a call-site directive in a function that no
// workflow's step search walked and that no workflow of another package
// can reach: it would mark nothing. A function that a workflow calls
// where the step search may not follow it (in a go statement, a closure,
// a select, a map range or a deferred call, or a generic helper, a method
// expression or a promoted method), and what that function calls, is
// left out: the placement check refuses the call, and once it is fixed
// the directive marks its call. So is a function another package can call
// (an exported function or method of a package other than main, or one
// such a function calls): a workflow of a package this run does not model
// may call it, and the directive marks its call there.
var Unreached = &Check{
	Name: "unreached",
	Doc:  "a call-site directive in a function no workflow body reaches marks nothing",
	Run: func(p *Pass) {
		for _, pkg := range p.Packages {
			var refused, exposed map[*ast.FuncDecl]bool
			for _, ib := range pkg.Directives.InBodies {
				if pkg.Reached[ib.Func] {
					continue
				}
				if refused == nil {
					refused, exposed = refusedCallees(pkg), exposedFuncs(pkg)
				}
				if !refused[ib.Func] && !exposed[ib.Func] {
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

// exposedFuncs are the function declarations of pkg that another package
// can reach: its exported functions and methods (none in package main),
// and the functions of the package they call, directly or not.
func exposedFuncs(pkg *model.Package) map[*ast.FuncDecl]bool {
	out := map[*ast.FuncDecl]bool{}
	if pkg.Load.Name == "main" {
		return out
	}
	graph := pkg.Calls.Steps
	var visit func(fd *ast.FuncDecl)
	visit = func(fd *ast.FuncDecl) {
		if fd == nil || fd.Body == nil || out[fd] {
			return
		}
		out[fd] = true
		ast.Inspect(fd.Body, func(n ast.Node) bool {
			if call, ok := n.(*ast.CallExpr); ok {
				if fn := graph.Callee(call); fn != nil && fn.Pkg() == pkg.Load.Types {
					visit(graph.Decl(fn))
				}
			}
			return true
		})
	}
	for _, f := range pkg.Load.Files {
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Name.IsExported() {
				if fn, ok := pkg.Load.TypesInfo.Defs[fd.Name].(*types.Func); ok && fn.Exported() {
					visit(fd)
				}
			}
		}
	}
	return out
}
