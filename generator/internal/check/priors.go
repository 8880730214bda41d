package check

import (
	"go/token"
)

// Priors warns about a generated file of the package that does not parse
// (a merge conflict, a hand edit), from which the generator reads the
// versions its workflows descend from (resume.WorkflowDef.Lineage): the
// versions it cannot read are missing from the lineage it writes, and
// workers of the new code leave runs of those versions alone. It is a
// warning, as a broken generated file never blocks regeneration; the fix
// is to repair the file first. go vet does not run it.
var Priors = &Check{
	Name:          "priors",
	Doc:           "the generated files that record the workflows' lineage parse",
	GeneratorOnly: true,
	Run: func(p *Pass) {
		for _, pkg := range p.Packages {
			for _, prob := range pkg.Load.PriorProblems {
				pos := token.NoPos
				for _, f := range pkg.Load.Generated {
					if pkg.Load.Fset.File(f.Pos()).Name() == prob.File {
						pos = f.Package
					}
				}
				p.Warnf(pos, "%s: %v: the versions it records as its workflows' lineage cannot all be read, and the regenerated file would lose those it cannot: "+
					"workers of the new code would leave runs of them alone; repair the file (resolve a merge conflict keeping both sides' Lineage lines) and run resumegen again",
					p.Rel(prob.File), prob.Err)
			}
		}
	},
}
