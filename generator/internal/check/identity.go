package check

import (
	"fmt"
	"go/types"
	"strings"

	"github.com/resumegen/resumegen/generator/internal/model"
)

// OldVersions refuses an old-version-of= that names no current workflow
// of the package (missing, not a workflow, itself, or itself an old
// version), and an old version with the version of its current workflow
// or of another old version of it: nothing can be pinned to a version
// only it has, so it would never run.
var OldVersions = &Check{
	Name: "oldversions",
	Doc:  "an old version names its current workflow and keeps a version only it has",
	Run: func(p *Pass) {
		for _, pkg := range p.Packages {
			byName := map[string]*model.Workflow{}
			for _, w := range pkg.Workflows {
				if !w.BadRecv {
					byName[w.Name] = w
				}
			}
			for _, w := range pkg.Workflows {
				if !w.BadRecv && w.Directive.Workflow.OldOf != "" {
					oldTarget(p, pkg, w, byName)
				}
			}
			redundantOld(p, pkg)
		}
	},
}

// oldTarget reports why old-version-of= on w names no current workflow.
func oldTarget(p *Pass, pkg *model.Package, w *model.Workflow, byName map[string]*model.Workflow) {
	d := w.Directive
	name := d.Workflow.OldOf
	t := byName[name]
	switch {
	case t == w:
		p.Errorf(d.Pos, "%s: %s cannot be an old version of itself: name the current workflow, whose identity this old version takes", d.Text, w.Name)
	case t != nil && t.Directive.Workflow.OldOf != "":
		p.Errorf(d.Pos, "%s: %s is itself an old version (of %s): name the current workflow, old-version-of=%s", d.Text, name, t.Directive.Workflow.OldOf, t.Directive.Workflow.OldOf)
	case t != nil:
	case declares(pkg.Load.Types, name):
		p.Errorf(d.Pos, "%s: %s is not a //resume:workflow: old-version-of= names the current workflow of this package whose old version %s keeps", d.Text, name, w.Name)
	default:
		p.Errorf(d.Pos, "%s: package %s has no workflow %s: old-version-of= names the current workflow, in the same package, whose old version %s keeps", d.Text, pkg.Load.Name, name, w.Name)
	}
}

// declares reports whether the package declares a function or method
// named name (F or Type.Method).
func declares(pkg *types.Package, name string) bool {
	typ, method, isMethod := strings.Cut(name, ".")
	obj := pkg.Scope().Lookup(typ)
	if !isMethod {
		_, ok := obj.(*types.Func)
		return ok
	}
	tn, ok := obj.(*types.TypeName)
	if !ok {
		return false
	}
	found, _, _ := types.LookupFieldOrMethod(tn.Type(), true, pkg, method)
	_, ok = found.(*types.Func)
	return ok
}

// redundantOld refuses an old version with the version of its current
// workflow or of an earlier old version of it.
func redundantOld(p *Pass, pkg *model.Package) {
	byVersion := map[[2]string]*model.Workflow{} // current workflow's Go name, version
	for _, w := range pkg.Workflows {
		if !w.Old && !w.BadRecv {
			byVersion[[2]string{w.Name, w.Version}] = w
		}
	}
	for _, w := range pkg.Workflows {
		if !w.Old {
			continue
		}
		k := [2]string{w.OldVersionOf, w.Version}
		other := byVersion[k]
		switch {
		case other == nil:
			byVersion[k] = w
		case !other.Old:
			p.Errorf(w.Directive.Pos, "%s: %s has the same steps as %s (version %s): delete it, nothing is pinned to a version only it has", w.Directive.Text, w.Name, other.Name, w.Version)
		default:
			msg := "%s: old versions %s and %s of %s have the same steps (version %s): delete one, they keep the same runs"
			p.Errorf(other.Directive.Pos, msg, other.Directive.Text, other.Name, w.Name, w.OldVersionOf, w.Version)
			p.Errorf(w.Directive.Pos, msg, w.Directive.Text, other.Name, w.Name, w.OldVersionOf, w.Version)
		}
	}
}

// Identities refuses two workflows, of any packages of the run, that
// claim one identity in the journal, as their identity or as an alias,
// reporting it at both. Old versions share their current workflow's
// identity and are left out.
var Identities = &Check{
	Name: "identities",
	Doc:  "each workflow has an identity in the journal of its own",
	Run: func(p *Pass) {
		owner := map[string]*model.Workflow{}
		p.workflows(func(pkg *model.Package, w *model.Workflow) {
			if w.Old || w.ID == "" {
				return
			}
			for _, id := range append([]string{w.ID}, w.Aliases...) {
				first := owner[id]
				if first == nil {
					owner[id] = w
					continue
				}
				if first == w {
					continue
				}
				p.Errorf(first.Directive.Pos, "%s: %s", first.Directive.Text, clashMessage(p, first, w, id))
				p.Errorf(w.Directive.Pos, "%s: %s", w.Directive.Text, clashMessage(p, w, first, id))
			}
		})
	},
}

// clashMessage says that w and other both claim id in the journal.
func clashMessage(p *Pass, w, other *model.Workflow, id string) string {
	role := func(x *model.Workflow) string {
		if x.ID == id {
			return "identity"
		}
		return "earlier identity (import-path name)"
	}
	pos := other.Pkg().Load.Fset.Position(other.Directive.Pos)
	return fmt.Sprintf("workflow %s's %s %s is also the %s of workflow %s (%s:%d:%d): the journal could not tell their runs apart; give one of them another name=",
		w.Name, role(w), id, role(other), other.Name, p.Rel(pos.Filename), pos.Line, pos.Column)
}
