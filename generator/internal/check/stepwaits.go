package check

import (
	"go/ast"
	"go/types"

	"golang.org/x/tools/go/types/typeutil"

	"github.com/resumegen/resumegen/generator/internal/model"
	"github.com/resumegen/resumegen/generator/internal/runtimeapi"
)

// StepWaits refuses a wait called directly in the body of a function of
// the package declared //resume:step: a step is one journaled call,
// executed again on retry or resume, and cannot hold journaled points of
// its own. (A wait in a function such a body calls is not looked for.)
var StepWaits = &Check{
	Name: "stepwaits",
	Doc:  "a step's own body cannot wait durably",
	Run: func(p *Pass) {
		for _, pkg := range p.Packages {
			info := pkg.Load.TypesInfo
			for _, f := range pkg.Load.Files {
				for _, d := range f.Decls {
					fd, ok := d.(*ast.FuncDecl)
					if !ok || fd.Body == nil {
						continue
					}
					fn, _ := info.Defs[fd.Name].(*types.Func)
					if _, isStep := pkg.Directives.Steps[fn]; fn == nil || !isStep {
						continue
					}
					ast.Inspect(fd.Body, func(n ast.Node) bool {
						call, ok := n.(*ast.CallExpr)
						if !ok {
							return true
						}
						if wfn, _ := typeutil.Callee(info, call).(*types.Func); runtimeapi.WaitOf(wfn) != runtimeapi.NotWait {
							p.Errorf(call.Pos(), "%s is called in step %s: a step is one journaled call, executed again when it is retried or the run resumes, so it cannot wait durably; wait in the workflow body before or after the step, or use time.Sleep inside the step", pkg.WaitNameAt(call, wfn), model.DisplayName(fn))
						}
						return true
					})
				}
			}
		}
	},
}
