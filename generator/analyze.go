package generator

import (
	"go/ast"
	"go/token"
	"go/types"

	"github.com/resumegen/resumegen/generator/internal/check"
	"github.com/resumegen/resumegen/generator/internal/diag"
	"github.com/resumegen/resumegen/generator/internal/load"
	"github.com/resumegen/resumegen/generator/internal/model"
)

// Check runs the generator's checks on one type-checked package and calls
// report for each problem, in no particular order; it generates and
// writes nothing. It is the core of the go/analysis Analyzer in package
// github.com/resumegen/resumegen/generator/resumecheck, so that go vet
// reports what resumegen refuses.
//
// Files that resumegen generated (see the header) are skipped, and the
// checks about the generated code itself (its identifiers colliding with
// the package's) are left to the generator: in a package that was already
// generated they are the generated declarations themselves.
func Check(fset *token.FileSet, files []*ast.File, pkg *types.Package, info *types.Info, report func(pos token.Pos, msg string)) {
	lp := &load.Package{PkgPath: pkg.Path(), Name: pkg.Name(), Fset: fset, Types: pkg, TypesInfo: info}
	for _, f := range files {
		switch name := fset.File(f.Pos()).Name(); {
		case load.IsGeneratedAST(fset, f):
			lp.Generated = append(lp.Generated, f)
		case load.IsTestFile(name):
			lp.TestFiles = append(lp.TestFiles, f)
		default:
			lp.Files = append(lp.Files, f)
		}
	}
	ds := diag.New(fset, "")
	m := analyze(lp, ds)
	check.Run(check.All, []*model.Package{m}, ds, diag.New(fset, ""), true)
	for _, d := range ds.Items() {
		report(d.At, d.Message)
	}
}
