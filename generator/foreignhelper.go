package generator

import (
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// srcPackage is another package of the module as its source reads, for
// foreignReach: other packages are loaded from export data, without
// syntax or types of their bodies.
type srcPackage struct {
	pkg   *types.Package
	files []*ast.File
	funcs map[string][]*ast.FuncDecl // by name; methods by method name
	steps map[string]bool            // names declared //resume:step
	flows map[string]bool            // functions declared //resume:workflow
}

// foreignReach says how fn, a function or method of another package of
// the module that is not a step, may reach a step ("calls step Notify"),
// or "" when it cannot. The answer comes from source and names, since the
// bodies of other packages are not type-checked here, and errs on the side
// of refusing:
//
//   - a call in fn's body marked with a trailing //resume:step, or of a
//     function or method whose name its package declares //resume:step
//     (an interface method too), reaches a step;
//   - a call of a function of the same package (by name), of any method
//     of that package with the called method's name, or of a function of
//     another package of the module (pkg.F) is followed, recursively.
//
// Calls through function values and interface methods without a
// directive are not followed in other packages.
func (m *packageModel) foreignReach(fn *types.Func) string {
	if m.foreignReached == nil {
		m.foreignReached = map[*ast.FuncDecl]string{}
		m.srcPackages = map[*types.Package]*srcPackage{}
	}
	sp := m.srcPackage(fn.Pkg())
	if sp == nil {
		return ""
	}
	for _, d := range sp.funcs[fn.Name()] {
		if (d.Recv != nil) == (fn.Type().(*types.Signature).Recv() != nil) {
			if r := m.declReach(sp, d); r != "" {
				return r
			}
		}
	}
	return ""
}

// declReach is foreignReach for one declaration of sp.
func (m *packageModel) declReach(sp *srcPackage, d *ast.FuncDecl) string {
	if r, ok := m.foreignReached[d]; ok {
		return r
	}
	m.foreignReached[d] = "" // while on the way: a recursive call adds nothing
	file := sp.fileOf(d)
	r := ""
	ast.Inspect(d.Body, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok || r != "" {
			return r == ""
		}
		r = m.callReach(sp, file, call)
		return r == ""
	})
	if r == "" && hasDirective(file, d) {
		r = "calls a step marked at its call site"
	}
	if r == "" {
		// Not cached: in a cycle, "" may only mean the answer was still
		// being computed for a function on the way here.
		delete(m.foreignReached, d)
	} else {
		m.foreignReached[d] = r
	}
	return r
}

// callReach is declReach for one call in a body of sp.
func (m *packageModel) callReach(sp *srcPackage, file *ast.File, call *ast.CallExpr) string {
	switch f := ast.Unparen(call.Fun).(type) {
	case *ast.Ident:
		return m.nameReach(sp, f.Name, false)
	case *ast.IndexExpr: // resume.Await[T](...)
		return m.callReach(sp, file, &ast.CallExpr{Fun: f.X})
	case *ast.SelectorExpr:
		if x, ok := f.X.(*ast.Ident); ok {
			if imp := importedAs(sp.pkg, file, x.Name); imp != nil {
				if imp.Path() == resumePath && waitByName(f.Sel.Name) != waitNone {
					return foreignWaitPrefix + f.Sel.Name
				}
				if other := m.srcPackage(imp); other != nil {
					return m.nameReach(other, f.Sel.Name, false)
				}
				return ""
			}
		}
		return m.nameReach(sp, f.Sel.Name, true)
	}
	return ""
}

// nameReach reports how a call of name (a method's name when method) in
// sp may reach a step.
func (m *packageModel) nameReach(sp *srcPackage, name string, method bool) string {
	if sp.steps[name] {
		return "calls step " + name
	}
	if !method && sp.flows[name] {
		return "calls workflow " + name + " (a child run)"
	}
	for _, d := range sp.funcs[name] {
		if (d.Recv != nil) != method {
			continue
		}
		if r := m.declReach(sp, d); r != "" {
			return r
		}
	}
	return ""
}

// srcPackage parses the non-test files of pkg's directory, once, when they
// lie in the module (outside GOROOT); else it returns nil.
func (m *packageModel) srcPackage(pkg *types.Package) *srcPackage {
	if sp, ok := m.srcPackages[pkg]; ok {
		return sp
	}
	m.srcPackages[pkg] = nil
	dir := m.packageDir(pkg)
	if dir == "" {
		return nil
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	sp := &srcPackage{pkg: pkg, funcs: map[string][]*ast.FuncDecl{}, steps: map[string]bool{}, flows: map[string]bool{}}
	for _, e := range entries {
		name := filepath.Join(dir, e.Name())
		if e.IsDir() || !strings.HasSuffix(name, ".go") || isTestFile(name) || strings.HasSuffix(name, generatedSuffix) {
			continue
		}
		f := m.parseForeign(name)
		if f == nil || f.Name.Name != pkg.Name() {
			continue
		}
		sp.add(f)
	}
	m.srcPackages[pkg] = sp
	return sp
}

// add indexes the declarations of f.
func (sp *srcPackage) add(f *ast.File) {
	sp.files = append(sp.files, f)
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncDecl:
			if n.Body != nil {
				sp.funcs[n.Name.Name] = append(sp.funcs[n.Name.Name], n)
			}
			if docHasStep(n.Doc) {
				sp.steps[n.Name.Name] = true
			}
			if n.Recv == nil && docHasVerb(n.Doc, "workflow") {
				sp.flows[n.Name.Name] = true
			}
			return false
		case *ast.Field:
			if _, ok := n.Type.(*ast.FuncType); ok && len(n.Names) > 0 && docHasStep(n.Doc) {
				sp.steps[n.Names[0].Name] = true
			}
		}
		return true
	})
}

func (sp *srcPackage) fileOf(d *ast.FuncDecl) *ast.File {
	for _, f := range sp.files {
		if f.FileStart <= d.Pos() && d.Pos() <= f.FileEnd {
			return f
		}
	}
	return nil
}

// packageDir is the directory of pkg's source, found through the position
// of one of its package-level objects, when it lies in the module.
func (m *packageModel) packageDir(pkg *types.Package) string {
	for _, name := range pkg.Scope().Names() {
		file := m.pkg.Fset.Position(pkg.Scope().Lookup(name).Pos()).Filename
		if !filepath.IsAbs(file) || !strings.HasSuffix(file, ".go") || within(file, build.Default.GOROOT) {
			continue
		}
		if m.pkg.ModuleDir != "" && !within(file, m.pkg.ModuleDir) {
			return ""
		}
		return filepath.Dir(file)
	}
	return ""
}

// parseForeign parses a file of another package once.
func (m *packageModel) parseForeign(name string) *ast.File {
	f, ok := m.parsed[name]
	if !ok {
		if m.foreignFset == nil {
			m.foreignFset = token.NewFileSet()
		}
		f, _ = parser.ParseFile(m.foreignFset, name, nil, parser.ParseComments|parser.SkipObjectResolution)
		m.parsed[name] = f
	}
	return f
}

func docHasStep(doc *ast.CommentGroup) bool { return docHasVerb(doc, "step") }

// docHasVerb reports whether doc holds the directive //resume:VERB.
func docHasVerb(doc *ast.CommentGroup, verb string) bool {
	if doc == nil {
		return false
	}
	for _, c := range doc.List {
		if c.Text == directivePrefix+verb || strings.HasPrefix(c.Text, directivePrefix+verb+" ") {
			return true
		}
	}
	return false
}

// hasDirective reports whether a //resume:step comment lies in d's body.
func hasDirective(f *ast.File, d *ast.FuncDecl) bool {
	if f == nil {
		return false
	}
	for _, cg := range f.Comments {
		if cg.Pos() < d.Body.Lbrace || cg.End() > d.Body.Rbrace {
			continue
		}
		for _, c := range cg.List {
			if strings.HasPrefix(c.Text, directivePrefix+"step") {
				return true
			}
		}
	}
	return false
}

// importedAs returns the package that file, a file of pkg, imports under
// name, or nil.
func importedAs(pkg *types.Package, f *ast.File, name string) *types.Package {
	if f == nil {
		return nil
	}
	for _, spec := range f.Imports {
		path, err := strconv.Unquote(spec.Path.Value)
		if err != nil {
			continue
		}
		for _, imp := range pkg.Imports() {
			if imp.Path() != path {
				continue
			}
			local := imp.Name()
			if spec.Name != nil {
				local = spec.Name.Name
			}
			if local == name {
				return imp
			}
		}
	}
	return nil
}
