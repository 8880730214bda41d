package check

import (
	"go/ast"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/resumegen/resumegen/generator/internal/load"
	"github.com/resumegen/resumegen/generator/internal/model"
)

// Stale refuses, under go vet, a workflow whose generated code was made
// from other source than the package now holds: its version (a step
// added, removed, renamed or retyped, a journaled type changed) or the
// fingerprint of the body and helpers it copied differ from what its
// generated file records, or its generated file lacks it. The runtime
// refuses to run such a body too (resume.ErrStale); vet says so before a
// deploy. The generator itself does not run it: it is about to rewrite
// the generated files, which it reads as empty. A package that was never
// generated is left alone: nothing in it can run a stale body.
var Stale = &Check{
	Name: "stale",
	Doc:  "the generated code was made from the source as it is",
	Run: func(p *Pass) {
		if !p.Vet {
			return
		}
		for _, pkg := range p.Packages {
			generated := map[string]*ast.File{}
			for _, f := range pkg.Load.Generated {
				generated[pkg.Load.Fset.File(f.Pos()).Name()] = f
			}
			for _, w := range pkg.Workflows {
				if !w.BadRecv {
					stale(p, w, generated)
				}
			}
		}
	},
}

func stale(p *Pass, w *model.Workflow, generated map[string]*ast.File) {
	out := strings.TrimSuffix(w.Source, ".go") + load.GeneratedSuffix
	f := generated[out]
	if f == nil {
		return // never generated: the runtime says so at the first start
	}
	name := filepath.Base(out)
	version, fp, found := recorded(f, w)
	switch {
	case !found:
		p.Errorf(w.Decl.Name.Pos(), "workflow %s has no generated code in %s: run go generate", w.Name, name)
	case version != w.Version:
		p.Errorf(w.Decl.Name.Pos(), "workflow %s: %s is stale: it was generated for version %s, and the steps now make version %s (a step, its signature, policy, key or journaled type changed): run go generate", w.Name, name, version, w.Version)
	case w.FingerprintErr == nil && fp != w.Fingerprint:
		p.Errorf(w.Decl.Name.Pos(), "workflow %s: %s is stale: %s changed since go generate, and the generated file holds an old copy, which the runtime refuses to run: run go generate", w.Name, name, copied(w))
	}
}

// copied names what the generated code of w copies, for a message:
// "the body of Onboard", "the body of Onboard or of notifyAll".
func copied(w *model.Workflow) string {
	var names []string
	for _, d := range w.SourceDecls {
		names = append(names, d.Name)
	}
	return "the body of " + strings.Join(names, " or of ")
}

// recorded reads, from the generated file f, the version constant of w
// and the fingerprint in its definition's Source.
func recorded(f *ast.File, w *model.Workflow) (version, fp string, found bool) {
	ast.Inspect(f, func(n ast.Node) bool {
		spec, ok := n.(*ast.ValueSpec)
		if !ok || len(spec.Names) != 1 || len(spec.Values) != 1 {
			return true
		}
		switch spec.Names[0].Name {
		case w.VersionName():
			version = stringLit(spec.Values[0])
		case w.DefName():
			found = true
			ast.Inspect(spec.Values[0], func(n ast.Node) bool {
				if kv, ok := n.(*ast.KeyValueExpr); ok {
					if id, ok := kv.Key.(*ast.Ident); ok && id.Name == "Fingerprint" {
						fp = stringLit(kv.Value)
					}
				}
				return true
			})
		}
		return false
	})
	return version, fp, found && version != ""
}

func stringLit(e ast.Expr) string {
	lit, ok := e.(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return ""
	}
	s, err := strconv.Unquote(lit.Value)
	if err != nil {
		return ""
	}
	return s
}
