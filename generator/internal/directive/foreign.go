package directive

import (
	"bytes"
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"strings"
)

// Foreign reads the directives of declarations in packages the generator
// did not read from source: those of other modules (and, in a test, any
// other package), loaded from export data, without syntax. A declaring
// file is found through the object's position and parsed alone, once,
// and the directive read from the declaration's doc comment. A malformed
// directive there is left to that package's own check. The calls stage
// reads the same parsed files (see [Foreign.Parse]). The packages of the
// main module are read from source instead (see [Link]).
type Foreign struct {
	// fset resolves the positions of objects loaded from export data.
	fset *token.FileSet
	// moduleDir limits what is read: only files below it.
	moduleDir string
	// Fset holds the positions of the files parsed here.
	Fset   *token.FileSet
	parsed map[string]*ast.File
	// marked says whether a file holds the text of a directive.
	marked map[string]bool
	steps  map[*types.Func]*StepOptions
	flows  map[*types.Func]*Directive
}

// NewForeign returns a reader of the directives of packages outside
// GOROOT, whose objects have positions in fset; moduleDir is the root of
// the main module, "" when unknown.
func NewForeign(fset *token.FileSet, moduleDir string) *Foreign {
	return &Foreign{fset: fset, moduleDir: moduleDir, Fset: token.NewFileSet(), parsed: map[string]*ast.File{},
		marked: map[string]bool{}, steps: map[*types.Func]*StepOptions{}, flows: map[*types.Func]*Directive{}}
}

// Step returns the options of a //resume:step on the declaration of fn,
// declared in another package of the module, or nil.
func (f *Foreign) Step(fn *types.Func) *StepOptions {
	if o, ok := f.steps[fn]; ok {
		return o
	}
	var o *StepOptions
	if d := f.directive(fn, "step"); d != nil {
		opts := d.Step
		opts.RenamedPos = token.NoPos // a position in another file set
		o = &opts
	}
	f.steps[fn] = o
	return o
}

// Workflow returns the //resume:workflow on the declaration of fn, a
// function declared in another package of the module, or nil: a call of
// it from a workflow is a child run.
func (f *Foreign) Workflow(fn *types.Func) *Directive {
	if fn.Type().(*types.Signature).Recv() != nil {
		return nil
	}
	if d, ok := f.flows[fn]; ok {
		return d
	}
	d := f.directive(fn, "workflow")
	f.flows[fn] = d
	return d
}

// directive returns the first well-formed directive with the verb in the
// doc comment of fn's declaration, or nil.
func (f *Foreign) directive(fn *types.Func, verb string) *Directive {
	doc := f.doc(fn)
	if doc == nil {
		return nil
	}
	for _, c := range doc.List {
		if !IsDirective(c.Text) {
			continue
		}
		if d, err := Parse(c, false); err == nil && d.Verb == verb {
			d.Pos = token.NoPos
			return &d
		}
	}
	return nil
}

// doc returns the doc comment of the declaration of fn, or nil.
func (f *Foreign) doc(fn *types.Func) *ast.CommentGroup {
	pos := f.fset.Position(fn.Pos())
	name := pos.Filename
	if !f.Readable(name) || !f.hasMark(name) {
		return nil
	}
	file := f.Parse(name)
	if file == nil {
		return nil
	}
	return declDoc(f.Fset, file, fn, pos.Line)
}

// Readable reports whether the file is one the generator reads the
// directives of: a Go file outside GOROOT (of this module or another).
func (f *Foreign) Readable(name string) bool {
	return filepath.IsAbs(name) && strings.HasSuffix(name, ".go") && !Within(name, build.Default.GOROOT)
}

// ModuleDir is the root of the module whose files are read, or "".
func (f *Foreign) ModuleDir() string { return f.moduleDir }

// ObjectFile is the file declaring obj, a package-level object loaded
// from export data.
func (f *Foreign) ObjectFile(obj types.Object) string { return f.fset.Position(obj.Pos()).Filename }

// hasMark reports whether the file holds the text "resume:", which every
// directive holds: one without it is not parsed for directives.
func (f *Foreign) hasMark(name string) bool {
	m, ok := f.marked[name]
	if !ok {
		src, err := os.ReadFile(name)
		m = err == nil && bytes.Contains(src, []byte("resume:"))
		f.marked[name] = m
	}
	return m
}

// Parse parses a file of another package once, with comments, or returns
// nil when it does not parse at all. A file without the text "resume:"
// holds no directive and is parsed without comments.
func (f *Foreign) Parse(name string) *ast.File {
	file, ok := f.parsed[name]
	if !ok {
		mode := parser.SkipObjectResolution
		src, err := os.ReadFile(name)
		if err != nil {
			f.parsed[name] = nil
			return nil
		}
		if bytes.Contains(src, []byte("resume:")) {
			mode |= parser.ParseComments
		}
		file, _ = parser.ParseFile(f.Fset, name, src, mode)
		f.parsed[name] = file
	}
	return file
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

// DocHasVerb reports whether doc holds the directive //resume:VERB.
func DocHasVerb(doc *ast.CommentGroup, verb string) bool {
	if doc == nil {
		return false
	}
	for _, c := range doc.List {
		if c.Text == Prefix+verb || strings.HasPrefix(c.Text, Prefix+verb+" ") {
			return true
		}
	}
	return false
}

// Within reports whether path lies in dir.
func Within(path, dir string) bool {
	if dir == "" {
		return false
	}
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}
