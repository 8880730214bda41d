package check

import "github.com/resumegen/resumegen/generator/internal/model"

// GeneratedNames refuses a workflow whose generated identifiers (its
// definition, version, body, graph, run handle, step wrappers and their
// out types, helper copies, and its file's embedded source) collide with
// the package's declarations or with another workflow's, and the same for
// the shared copies of the package's helpers and their wrappers. go vet does not run it: there the generated declarations
// are compiled into the package.
var GeneratedNames = &Check{
	Name:          "generatednames",
	Doc:           "the generated code's identifiers collide with nothing",
	GeneratorOnly: true,
	Run: func(p *Pass) {
		for _, pkg := range p.Packages {
			taken := map[string]string{} // generated identifier → workflow
			scope := pkg.Load.Types.Scope()
			files := map[string]string{} // source file → its source variable
			for _, w := range pkg.Workflows {
				if w.BadRecv {
					continue
				}
				names := w.GeneratedNames()
				if _, done := files[w.Source]; !done {
					// One variable per generated file, declared with its
					// first workflow.
					files[w.Source] = model.SourceVarName(w.Source)
					names = append(names, files[w.Source])
				}
				for _, n := range names {
					if obj := scope.Lookup(n); obj != nil {
						p.Errorf(w.Decl.Name.Pos(), "workflow %s: generated identifier %s collides with the declaration at %s; rename one of them", w.Name, n, p.PosString(obj.Pos()))
					} else if other, dup := taken[n]; dup {
						p.Errorf(w.Decl.Name.Pos(), "workflow %s: generated identifier %s is also generated for workflow %s; rename a workflow or a step (name=)", w.Name, n, other)
					}
					taken[n] = w.Name
				}
			}
			sharedNames(p, pkg, taken)
		}
	},
}

// sharedNames refuses a shared copy of the package (or one of its
// wrappers, or their out types) whose identifier collides with a
// declaration of the package or another generated identifier.
func sharedNames(p *Pass, pkg *model.Package, taken map[string]string) {
	scope := pkg.Load.Types.Scope()
	for _, h := range pkg.Shared() {
		names := []string{h.CopyName}
		for _, site := range h.Sites {
			names = append(names, site.Step.Wrapper)
			if site.Step.NeedsOut() {
				names = append(names, site.Step.OutTypeName())
			}
		}
		for _, n := range names {
			if obj := scope.Lookup(n); obj != nil {
				p.Errorf(h.Decl.Name.Pos(), "%s: the generated identifier %s of its shared copy collides with the declaration at %s; rename one of them", h.Display, n, p.PosString(obj.Pos()))
			} else if other, dup := taken[n]; dup {
				p.Errorf(h.Decl.Name.Pos(), "%s: the generated identifier %s of its shared copy is also generated for %s; rename one of them", h.Display, n, other)
			}
			taken[n] = h.Display
		}
	}
}

// NoSteps warns of a workflow without steps: nothing it does is journaled.
// go vet does not run it (it reports no warnings).
var NoSteps = &Check{
	Name:          "nosteps",
	Doc:           "a workflow without steps journals nothing",
	GeneratorOnly: true,
	Run: func(p *Pass) {
		p.workflows(func(pkg *model.Package, w *model.Workflow) {
			if len(w.Steps) == 0 {
				p.Warnf(w.Decl.Name.Pos(), "workflow %s has no steps: nothing it does is journaled, so a resumed run does all of it again; mark what must run once with //resume:step, or drop //resume:workflow", w.Name)
			}
		})
	},
}
