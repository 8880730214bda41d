package generator

import (
	"go/ast"
	"go/token"
	"go/types"

	"github.com/resumegen/resumegen/generator/internal/calls"
	"github.com/resumegen/resumegen/generator/internal/check"
	"github.com/resumegen/resumegen/generator/internal/diag"
	"github.com/resumegen/resumegen/generator/internal/directive"
	"github.com/resumegen/resumegen/generator/internal/load"
	"github.com/resumegen/resumegen/generator/internal/model"
)

// Check runs the generator's checks on one type-checked package and calls
// report for each problem, in no particular order; it generates and
// writes nothing. It is the core of the go/analysis Analyzer in package
// github.com/resumegen/resumegen/generator/resumecheck, so that go vet
// reports what resumegen refuses.
//
// The packages of the module that a package declaring workflows imports
// are parsed and type-checked from source beside it (see load.ForVet), so
// that vet follows calls into them as the generator does. Files that
// resumegen generated (see the header) are skipped, and the
// checks about the generated code itself (its identifiers colliding with
// the package's) are left to the generator: in a package that was already
// generated they are the generated declarations themselves.
func Check(fset *token.FileSet, files []*ast.File, pkg *types.Package, info *types.Info, report func(pos token.Pos, msg string)) {
	// The module's packages it imports are read from source beside it, as
	// the generator reads them: the checks follow calls into them by types.
	lp := load.ForVet(fset, files, pkg, info)
	ds := diag.New(fset, "")
	m := analyze(lp, ds)
	check.Run(check.All, []*model.Package{m}, ds, diag.New(fset, ""), true)
	for _, d := range ds.Items() {
		report(d.At, d.Message)
	}
}

// analyze runs the stages between loading and checking on one package
// and the other packages of the module read from source beside it
// (lp.Module): their directives, their call analysis, and lp's model.
// Only lp's diagnostics are reported.
func analyze(lp *load.Package, ds *diag.List) *model.Package {
	srcs := []calls.Package{{Load: lp, Directives: directive.Scan(lp, ds)}}
	for _, other := range lp.Module.Packages() {
		if other.Types != lp.Types {
			srcs = append(srcs, calls.Package{Load: other, Directives: directive.Scan(other, diag.New(other.Fset, ""))})
		}
	}
	return model.NewModule(calls.New(srcs...), srcs...).Package(lp.Types).Build()
}
