package generator

import (
	"fmt"
	"go/token"
	"go/types"
	"slices"
	"strings"
)

// resolveIdentities gives the package's workflows their identities
// (name=, else Package.Name, with Package.Name as an alias when name= is
// set) and resolves old-version-of=: an old version takes the identity
// and aliases of its current workflow. It refuses an old version whose
// target is missing, not a workflow or itself old, and one that has the
// same version as its target or as another old version of it. Versions
// must be computed.
func (m *packageModel) resolveIdentities(ds *diagnostics) {
	byName := map[string]*Workflow{}
	for _, w := range m.workflows {
		byName[w.Name] = w
		w.ID = w.Package + "." + w.Name
		if name := w.directive.wf.name; name != "" && name != w.ID {
			w.Aliases = []string{w.ID}
			w.ID = name
		}
	}
	for _, w := range m.workflows {
		if w.directive.wf.oldOf == "" {
			continue
		}
		t := m.oldTarget(w, byName, ds)
		if t == nil {
			continue
		}
		w.Old, w.OldVersionOf = true, t.Name
		w.ID, w.Aliases = t.ID, slices.Clone(t.Aliases)
	}
	m.refuseRedundantOld(ds)
}

// oldTarget returns the current workflow that w is an old version of, or
// nil after reporting why there is none.
func (m *packageModel) oldTarget(w *Workflow, byName map[string]*Workflow, ds *diagnostics) *Workflow {
	d := w.directive
	name := d.wf.oldOf
	t := byName[name]
	switch {
	case t == w:
		ds.errorf(d.pos, "%s: %s cannot be an old version of itself: name the current workflow, whose identity this old version takes", d.text, w.Name)
	case t != nil && t.directive.wf.oldOf != "":
		ds.errorf(d.pos, "%s: %s is itself an old version (of %s): name the current workflow, old-version-of=%s", d.text, name, t.directive.wf.oldOf, t.directive.wf.oldOf)
	case t != nil:
		return t
	case m.declares(name):
		ds.errorf(d.pos, "%s: %s is not a //resume:workflow: old-version-of= names the current workflow of this package whose old version %s keeps", d.text, name, w.Name)
	default:
		ds.errorf(d.pos, "%s: package %s has no workflow %s: old-version-of= names the current workflow, in the same package, whose old version %s keeps", d.text, m.pkg.Name, name, w.Name)
	}
	return nil
}

// declares reports whether the package declares a function or method
// named name (F or Type.Method).
func (m *packageModel) declares(name string) bool {
	typ, method, isMethod := strings.Cut(name, ".")
	obj := m.pkg.Types.Scope().Lookup(typ)
	if !isMethod {
		_, ok := obj.(*types.Func)
		return ok
	}
	tn, ok := obj.(*types.TypeName)
	if !ok {
		return false
	}
	found, _, _ := types.LookupFieldOrMethod(tn.Type(), true, m.pkg.Types, method)
	_, ok = found.(*types.Func)
	return ok
}

// refuseRedundantOld refuses an old version with the version of its
// current workflow or of an earlier old version of it: nothing can be
// pinned to a version only it has, so it would never run.
func (m *packageModel) refuseRedundantOld(ds *diagnostics) {
	byVersion := map[[2]string]*Workflow{} // current workflow's Go name, version
	for _, w := range m.workflows {
		if !w.Old {
			byVersion[[2]string{w.Name, w.Version}] = w
		}
	}
	for _, w := range m.workflows {
		if !w.Old {
			continue
		}
		k := [2]string{w.OldVersionOf, w.Version}
		other := byVersion[k]
		switch {
		case other == nil:
			byVersion[k] = w
		case !other.Old:
			ds.errorf(w.directive.pos, "%s: %s has the same steps as %s (version %s): delete it, nothing is pinned to a version only it has", w.directive.text, w.Name, other.Name, w.Version)
		default:
			msg := "%s: old versions %s and %s of %s have the same steps (version %s): delete one, they keep the same runs"
			ds.errorf(other.directive.pos, msg, other.directive.text, other.Name, w.Name, w.OldVersionOf, w.Version)
			ds.errorf(w.directive.pos, msg, w.directive.text, other.Name, w.Name, w.OldVersionOf, w.Version)
		}
	}
}

// checkIdentities refuses two workflows that claim one identity in the
// journal, as their identity or as an alias, reporting it at both. Old
// versions share their current workflow's identity and are left out.
func checkIdentities(ws []*Workflow, ds *diagnostics) {
	owner := map[string]*Workflow{}
	for _, w := range ws {
		if w.Old || w.ID == "" {
			continue
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
			ds.errorf(first.directive.pos, "%s: %s", first.directive.text, clashMessage(first, w, id, ds))
			ds.errorf(w.directive.pos, "%s: %s", w.directive.text, clashMessage(w, first, id, ds))
		}
	}
}

// clashMessage says that w and other both claim id in the journal.
func clashMessage(w, other *Workflow, id string, ds *diagnostics) string {
	role := func(x *Workflow) string {
		if x.ID == id {
			return "identity"
		}
		return "earlier identity (import-path name)"
	}
	p := ds.fset.Position(other.directive.pos)
	return fmt.Sprintf("workflow %s's %s %s is also the %s of workflow %s (%s:%d:%d): the journal could not tell their runs apart; give one of them another name=",
		w.Name, role(w), id, role(other), other.Name, ds.rel(p.Filename), p.Line, p.Column)
}

// checkRenames refuses renamed-from= names that would make journaled rows
// count for the wrong step: the step's own name, another step's name, or a
// name two steps claim. It then records each step's Key and RenamedFrom.
func checkRenames(w *Workflow, ds *diagnostics) {
	current := map[string]bool{}
	for _, s := range w.Steps {
		current[s.Name] = true
	}
	claimedBy := map[string]string{}
	for _, s := range w.Steps {
		if s.key != nil {
			s.Key = s.opts.key
		}
		s.RenamedFrom = s.opts.renamed
		pos := s.opts.renamedPos
		if pos == token.NoPos {
			pos = s.call.Pos()
		}
		for _, old := range s.opts.renamed {
			switch {
			case old == s.Name:
				ds.errorf(pos, "renamed-from=%s: %s is step %s's own name: renamed-from= lists the names the step had before; drop it", old, old, s.Name)
			case current[old]:
				ds.errorf(pos, "renamed-from=%s on step %s: %s is the name of another step of workflow %s, whose rows are that step's: drop renamed-from=%s, or rename that step too", old, s.Name, old, w.Name, old)
			case claimedBy[old] != "" && claimedBy[old] != s.Name:
				ds.errorf(pos, "renamed-from=%s on steps %s and %s of workflow %s: rows named %s can count for one step only; keep it on the step that had the name", old, claimedBy[old], s.Name, w.Name, old)
			default:
				claimedBy[old] = s.Name
			}
		}
	}
}
