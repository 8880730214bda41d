package generator

import (
	"go/ast"
	"go/token"
	"go/types"
	"strings"
)

// analyze runs every check on one type-checked package: directives,
// workflow signatures, step placement, non-determinism and JSON round
// trips, recording problems in ds. It computes each workflow's JSON shape
// and version.
func analyze(pkg *typedPackage, ds *diagnostics) *packageModel {
	m := buildModel(pkg, ds)
	for _, w := range m.workflows {
		m.checkWorkflow(w, ds)
		m.checkPredeclared(w, ds)
		w.errorIDs = collectErrorIdentities(w.errorScopes(), m.pkg.Types, ds)
		w.Shape = m.workflowShape(w)
		w.Version = versionOf(w)
		checkRenames(w, ds)
	}
	m.resolveIdentities(ds)
	return m
}

// Check runs the generator's checks on one type-checked package and calls
// report for each problem, in no particular order; it generates and
// writes nothing. It is the core of the go/analysis Analyzer in package
// github.com/resumegen/resumegen/generator/resumecheck, so that go vet
// reports what resumegen refuses.
//
// Files that resumegen generated (see the header) are skipped, and the
// check that generated identifiers do not collide with the package's is
// left to the generator: in a package that was already generated they are
// the generated declarations themselves.
func Check(fset *token.FileSet, files []*ast.File, pkg *types.Package, info *types.Info, report func(pos token.Pos, msg string)) {
	var own []*ast.File
	for _, f := range files {
		if !isGeneratedAST(fset, f) {
			own = append(own, f)
		}
	}
	ds := &diagnostics{fset: fset}
	m := analyze(&typedPackage{PkgPath: pkg.Path(), Name: pkg.Name(), Fset: fset, Syntax: own, Types: pkg, TypesInfo: info}, ds)
	checkIdentities(m.workflows, ds)
	for _, d := range ds.list {
		report(d.pos, d.Message)
	}
}

// isGeneratedAST reports whether a parsed file is resumegen output: its
// name ends in _resume.go and its first comment is our header.
func isGeneratedAST(fset *token.FileSet, f *ast.File) bool {
	name := fset.File(f.Pos()).Name()
	if !strings.HasSuffix(name, generatedSuffix) || len(f.Comments) == 0 {
		return false
	}
	first := f.Comments[0].List[0]
	return fset.Position(first.Slash).Line == 1 && first.Text == generatedHeader
}
