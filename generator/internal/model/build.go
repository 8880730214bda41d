package model

import (
	"go/types"
	"path/filepath"
	"sort"

	"github.com/resumegen/resumegen/generator/internal/jsontype"
	"github.com/resumegen/resumegen/generator/internal/load"
	"github.com/resumegen/resumegen/internal/fingerprint"
)

// Build models the workflows of the package, once, and returns p.
func (p *Package) Build() *Package {
	if p.built {
		return p
	}
	p.built = true
	pkg, dirs := p.Load, p.Directives
	for _, d := range dirs.Workflows {
		w := &Workflow{
			Package: pkg.PkgPath, Name: d.Decl.Name.Name, Fn: d.Fn, Decl: d.Decl, File: d.File, Source: d.Filename,
			Sig: d.Fn.Type().(*types.Signature), Directive: d.Directive, pkg: p,
		}
		if recv := w.Sig.Recv(); recv != nil {
			named, _ := jsontype.Deref(types.Unalias(recv.Type())).(*types.Named)
			if named == nil || named.TypeParams().Len() > 0 {
				w.BadRecv = true
			} else {
				// Its journal name is Type.Method, as a step's.
				w.Name, w.Recv = named.Obj().Name()+"."+d.Decl.Name.Name, recv.Type()
			}
		}
		p.Workflows = append(p.Workflows, w)
	}
	sort.SliceStable(p.Workflows, func(i, j int) bool {
		a, b := p.Workflows[i], p.Workflows[j]
		if a.Source != b.Source {
			return a.Source < b.Source
		}
		return a.Decl.Pos() < b.Decl.Pos()
	})
	for _, w := range p.Workflows {
		if w.BadRecv {
			continue
		}
		p.findSteps(w)
		for _, h := range w.Shared {
			p.Module.need(p.Module.needs, p.Load.PkgPath, h)
		}
	}
	for _, w := range p.Workflows {
		if w.BadRecv {
			continue
		}
		p.collectErrorTests(w)
		if w.Sig.TypeParams().Len() == 0 {
			w.Shape = p.workflowShape(w)
		}
		for _, s := range w.Steps {
			if s.KeyExpr != nil {
				s.Key = s.Opts.Key
			}
			s.RenamedFrom = s.Opts.Renamed
		}
		w.Version = VersionOf(w)
	}
	p.resolveIdentities()
	p.lineages()
	for _, w := range p.Workflows {
		if w.BadRecv {
			continue
		}
		p.describe(w)
		p.name(w)
		p.fingerprint(w)
	}
	return p
}

// fingerprint records the declarations the generated code of w copies
// (its body and its helpers', then the shared copies' of other packages)
// and their fingerprint.
func (p *Package) fingerprint(w *Workflow) {
	w.SourceDecls = []SourceDecl{{File: filepath.Base(w.Source), Name: w.Name}}
	paths := map[string]string{fingerprint.FileKey("", filepath.Base(w.Source)): w.Source}
	readers := map[string]*load.Package{}
	add := func(h *Helper) {
		file := p.Load.Fset.File(h.Decl.Pos()).Name()
		d := SourceDecl{File: filepath.Base(file), Name: h.Display}
		if h.Pkg != p {
			d.Package = h.Pkg.Load.PkgPath
		}
		key := fingerprint.FileKey(d.Package, d.File)
		paths[key], readers[key] = file, h.Pkg.Load
		w.SourceDecls = append(w.SourceDecls, d)
	}
	for _, h := range w.Helpers {
		add(h)
	}
	for _, h := range w.Shared {
		add(h)
	}
	decls := make([]fingerprint.Decl, len(w.SourceDecls))
	for i, d := range w.SourceDecls {
		decls[i] = fingerprint.Decl{File: fingerprint.FileKey(d.Package, d.File), Name: d.Name}
	}
	w.Fingerprint, w.FingerprintErr = fingerprint.Of(func(key string) ([]byte, error) {
		if r := readers[key]; r != nil {
			return r.ReadSource(paths[key])
		}
		return p.Load.ReadSource(paths[key])
	}, decls)
}

// SourceDecl is a declaration the generated code of a workflow copies:
// by file base name and name (F, or Type.M), and the import path of its
// package when it is not the workflow's (a shared copy's).
type SourceDecl struct {
	Package, File, Name string
}

// name gives each step of w its wrapper's name; helpers got theirs when
// the search created them.
func (p *Package) name(w *Workflow) {
	for _, s := range w.Calls {
		// A wait's call is not rewritten; a shared copy's call goes to the
		// copy's wrapper.
		if s.Wait == 0 && s.Shared == nil {
			s.Wrapper = "resume" + SanitizeIdent(w.Name) + "_" + SanitizeIdent(s.Name)
		}
	}
}

// GeneratedNames are the package-level identifiers the generated code
// declares for w, in the order the collision check reports them.
func (w *Workflow) GeneratedNames() []string {
	names := []string{w.DefName(), w.VersionName(), w.BodyName(), w.GraphName()}
	if !w.Old {
		names = append(names, w.HandleName())
	}
	for _, s := range w.Steps {
		if s.Wait != 0 || s.Shared != nil {
			continue
		}
		names = append(names, s.Wrapper)
		if s.NeedsOut() {
			names = append(names, s.OutTypeName())
		}
	}
	for _, h := range w.Helpers {
		names = append(names, h.CopyName)
	}
	return names
}
