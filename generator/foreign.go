package generator

import (
	"go/ast"
	"go/build"
	"go/token"
	"go/types"
	"path/filepath"
	"strings"
)

// foreignStep returns the options of a //resume:step on the declaration of
// fn when fn is declared in another package of the user's module, and nil
// otherwise. Other packages are loaded from export data, without syntax:
// the declaring file is found through fn's position and parsed alone (once
// per file), and the directive is read from the declaration's doc comment.
// A malformed directive there is left to that package's own check.
func (m *packageModel) foreignStep(fn *types.Func) *stepOptions {
	if fn.Pkg() == nil || fn.Pkg() == m.pkg.Types {
		return nil
	}
	if o, ok := m.foreign[fn]; ok {
		return o
	}
	o := m.readForeignStep(fn)
	m.foreign[fn] = o
	return o
}

func (m *packageModel) readForeignStep(fn *types.Func) *stepOptions {
	doc := m.foreignDoc(fn)
	if doc == nil {
		return nil
	}
	for _, c := range doc.List {
		if !isDirective(c.Text) {
			continue
		}
		if d, err := parseDirective(c, false); err == nil && d.verb == "step" {
			o := d.opts
			o.renamedPos = token.NoPos // a position in another file set
			return &o
		}
	}
	return nil
}

// foreignWorkflow reports whether fn, a function declared in another
// package of the user's module, is marked //resume:workflow: a call of it
// from a workflow is a child run. It reads the directive from source like
// [packageModel.foreignStep].
func (m *packageModel) foreignWorkflow(fn *types.Func) bool {
	if fn.Pkg() == nil || fn.Pkg() == m.pkg.Types || fn.Type().(*types.Signature).Recv() != nil {
		return false
	}
	if wf, ok := m.foreignWF[fn]; ok {
		return wf
	}
	wf := false
	if doc := m.foreignDoc(fn); doc != nil {
		for _, c := range doc.List {
			if isDirective(c.Text) {
				if d, err := parseDirective(c, false); err == nil && d.verb == "workflow" {
					wf = true
					if d.wf.oldOf != "" {
						m.oldFuncs[fn] = d.wf.oldOf
					}
				}
			}
		}
	}
	m.foreignWF[fn] = wf
	return wf
}

// foreignDoc returns the doc comment of the declaration of fn, declared in
// another package of the module, parsing its file alone (once), or nil.
func (m *packageModel) foreignDoc(fn *types.Func) *ast.CommentGroup {
	pos := m.pkg.Fset.Position(fn.Pos())
	name := pos.Filename
	if !filepath.IsAbs(name) || !strings.HasSuffix(name, ".go") || within(name, build.Default.GOROOT) {
		return nil
	}
	if m.pkg.ModuleDir != "" && !within(name, m.pkg.ModuleDir) {
		return nil
	}
	f := m.parseForeign(name)
	if f == nil {
		return nil
	}
	return declDoc(m.foreignFset, f, fn, pos.Line)
}

// declDoc finds the doc comment of fn's declaration in f: a function or
// method declaration, or an interface method, named like fn on fn's line.
// The line tells apart methods of the same name on different types.
func declDoc(fset *token.FileSet, f *ast.File, fn *types.Func, line int) *ast.CommentGroup {
	var doc *ast.CommentGroup
	lineOf := func(p token.Pos) int { return fset.Position(p).Line }
	ast.Inspect(f, func(n ast.Node) bool {
		if doc != nil {
			return false
		}
		switch n := n.(type) {
		case *ast.FuncDecl:
			if n.Name.Name == fn.Name() && lineOf(n.Name.Pos()) == line {
				doc = n.Doc
			}
			return false
		case *ast.Field:
			if len(n.Names) > 0 && n.Names[0].Name == fn.Name() && lineOf(n.Names[0].Pos()) == line {
				if _, ok := n.Type.(*ast.FuncType); ok {
					doc = n.Doc
				}
			}
		}
		return true
	})
	return doc
}

// within reports whether path lies in dir.
func within(path, dir string) bool {
	if dir == "" {
		return false
	}
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}
