package model

import (
	"go/ast"
	"go/types"
	"path/filepath"
	"sort"

	"github.com/resumegen/resumegen/generator/internal/calls"
	"github.com/resumegen/resumegen/generator/internal/directive"
	"github.com/resumegen/resumegen/generator/internal/jsontype"
	"github.com/resumegen/resumegen/generator/internal/load"
	"github.com/resumegen/resumegen/internal/fingerprint"
)

// Build models the workflows of pkg, whose directives are dirs and whose
// call analysis is an.
func Build(pkg *load.Package, dirs *directive.Set, an *calls.Analysis) *Package {
	p := &Package{Load: pkg, Directives: dirs, Calls: an, Reached: map[*ast.FuncDecl]bool{}}
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
// (its body and its helpers') and their fingerprint.
func (p *Package) fingerprint(w *Workflow) {
	w.SourceDecls = []fingerprint.Decl{{File: filepath.Base(w.Source), Name: w.Name}}
	dirs := map[string]string{filepath.Base(w.Source): w.Source}
	for _, h := range w.Helpers {
		file := p.Load.Fset.File(h.Decl.Pos()).Name()
		dirs[filepath.Base(file)] = file
		w.SourceDecls = append(w.SourceDecls, fingerprint.Decl{File: filepath.Base(file), Name: h.Display})
	}
	w.Fingerprint, w.FingerprintErr = fingerprint.Of(func(name string) ([]byte, error) {
		return p.Load.ReadSource(dirs[name])
	}, w.SourceDecls)
}

// name gives each step of w its wrapper's name; helpers got theirs when
// the search created them.
func (p *Package) name(w *Workflow) {
	for _, s := range w.Calls {
		if s.Wait == 0 { // a wait's call is not rewritten
			s.Wrapper = "resume" + SanitizeIdent(w.Name) + "_" + SanitizeIdent(s.Name)
		}
	}
}

// GeneratedNames are the package-level identifiers the generated code
// declares for w, in the order the collision check reports them.
func (w *Workflow) GeneratedNames() []string {
	names := []string{w.DefName(), w.VersionName(), w.BodyName(), w.GraphName()}
	for _, s := range w.Steps {
		if s.Wait != 0 {
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
