package model

import "slices"

// resolveIdentities gives the package's workflows their identities
// (name=, else Package.Name, with Package.Name as an alias when name= is
// set) and resolves old-version-of=: an old version takes the identity
// and aliases of its current workflow, when old-version-of= names another
// workflow of the package that is not itself old (the identity check
// refuses the others). Versions must be computed.
func (p *Package) resolveIdentities() {
	byName := map[string]*Workflow{}
	for _, w := range p.Workflows {
		byName[w.Name] = w
		w.ID = w.Package + "." + w.Name
		if name := w.Directive.Workflow.Name; name != "" && name != w.ID {
			w.Aliases = []string{w.ID}
			w.ID = name
		}
	}
	for _, w := range p.Workflows {
		name := w.Directive.Workflow.OldOf
		if name == "" {
			continue
		}
		t := byName[name]
		if t == nil || t == w || t.Directive.Workflow.OldOf != "" {
			continue
		}
		w.Current = t
		w.Old, w.OldVersionOf = true, t.Name
		w.ID, w.Aliases = t.ID, slices.Clone(t.Aliases)
	}
}
