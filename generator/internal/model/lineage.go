package model

import (
	"path/filepath"
	"slices"
	"strings"

	"github.com/resumegen/resumegen/generator/internal/load"
	"github.com/resumegen/resumegen/runtime/resume"
)

// lineages gives each workflow its Prior (its definition in the package's
// generated files, before this run rewrites them) and its Lineage: the
// versions it descends from, newest first, which the runtime orders
// versions by (resume.WorkflowDef.Lineage). Identities and versions must
// be resolved.
//
// A current workflow's lineage is the version of each recorded current
// definition of its identity (by its ID, or an identity either calls an
// alias: a name= added or changed), followed by the lineage recorded
// there; then the versions its descends-from= names (what no generated
// file of the run records: a workflow moved from another module, a
// generated file lost), and the versions of the old versions of it the
// package keeps (old-version-of=) and recorded ones. The definition in the workflow's
// own generated file comes first, then the others by file: a workflow
// moved to another file, or, its identity kept by name=, to another
// package generated in the same run. Its own version is left out (a
// step list reverted to an earlier one), and the list is cut to
// resume.LineageLimit. An old version's lineage is the one recorded for
// its version, if any, and its own descends-from=. Unchanged code therefore regenerates the same
// lineage, byte for byte; a changed step list prepends the version the
// generated file had.
func (p *Package) lineages() {
	for _, w := range p.Workflows {
		if w.BadRecv || w.Old {
			continue
		}
		priors := p.priorsOf(w)
		for _, pr := range priors {
			if !pr.Old && w.Prior == nil {
				w.Prior = pr
			}
		}
		var out []string
		add := func(vs ...string) {
			for _, v := range vs {
				if v != "" && v != w.Version && !slices.Contains(out, v) {
					out = append(out, v)
				}
			}
		}
		for _, pr := range priors {
			if !pr.Old {
				add(pr.Version)
				add(pr.Lineage...)
			}
		}
		add(w.Directive.Workflow.DescendsFrom...)
		for _, o := range p.Workflows {
			if o.Current == w {
				add(o.Version)
			}
		}
		for _, pr := range priors {
			if pr.Old {
				add(pr.Version)
				add(pr.Lineage...)
			}
		}
		if len(out) > resume.LineageLimit {
			out = out[:resume.LineageLimit]
		}
		w.Lineage = out
	}
	for _, w := range p.Workflows {
		if w.BadRecv || !w.Old || w.Current == nil {
			continue
		}
		var out []string
		for _, pr := range p.priorsOf(w.Current) {
			if pr.Version == w.Version {
				out = slices.Clone(pr.Lineage)
				break
			}
		}
		for _, v := range w.Directive.Workflow.DescendsFrom {
			if !slices.Contains(out, v) {
				out = append(out, v)
			}
		}
		w.Lineage = slices.DeleteFunc(out, func(v string) bool { return v == w.Version })
	}
}

// priorsOf lists the recorded definitions of w's identity: the one in w's
// own generated file first, then by file.
func (p *Package) priorsOf(w *Workflow) []*load.Prior {
	own := strings.TrimSuffix(w.Source, ".go") + load.GeneratedSuffix
	var mine, others []*load.Prior
	for i := range p.Load.Priors {
		pr := &p.Load.Priors[i]
		if !sameIdentity(w, pr) {
			continue
		}
		if filepath.Clean(pr.File) == filepath.Clean(own) {
			mine = append(mine, pr)
		} else {
			others = append(others, pr)
		}
	}
	return append(mine, others...)
}

// sameIdentity reports whether the recorded definition pr is of w's
// identity: the same one, or one of them the other's earlier identity.
func sameIdentity(w *Workflow, pr *load.Prior) bool {
	id := pr.Identity()
	return id == w.ID || slices.Contains(w.Aliases, id) || slices.Contains(pr.Aliases, w.ID)
}
