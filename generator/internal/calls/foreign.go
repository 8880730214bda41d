package calls

import (
	"go/ast"
	"go/build"
	"go/types"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/resumegen/resumegen/generator/internal/directive"
	"github.com/resumegen/resumegen/generator/internal/load"
	"github.com/resumegen/resumegen/generator/internal/runtimeapi"
)

// ForeignWaitPrefix starts what ForeignReach says of a function of another
// package that calls a wait: "waits with resume.Sleep".
const ForeignWaitPrefix = "waits with resume."

// foreignReach answers ForeignReach from the source of packages of other
// modules, which are loaded from export data, without syntax or types of
// their bodies (the main module's packages are read from source and
// followed by types instead). The answer comes from source and names, and
// errs on the side of refusing:
//
//   - a call in fn's body marked with a trailing //resume:step, or of a
//     function or method whose name its package declares //resume:step
//     (an interface method too), reaches a step;
//   - a call of a function of the same package (by name), of any method
//     of that package with the called method's name, or of a function of
//     another package outside GOROOT (pkg.F) is followed, recursively.
//
// Calls through function values and interface methods without a
// directive are not followed in other packages.
type foreignReach struct {
	src      *directive.Foreign
	reached  map[*ast.FuncDecl]string
	packages map[*types.Package]*srcPackage
}

func newForeignReach(src *directive.Foreign) *foreignReach {
	return &foreignReach{src: src, reached: map[*ast.FuncDecl]string{}, packages: map[*types.Package]*srcPackage{}}
}

// srcPackage is another package of the module as its source reads.
type srcPackage struct {
	pkg   *types.Package
	files []*ast.File
	funcs map[string][]*ast.FuncDecl // by name; methods by method name
	steps map[string]bool            // names declared //resume:step
	flows map[string]bool            // functions declared //resume:workflow
}

func (r *foreignReach) reach(fn *types.Func) string {
	sp := r.srcPackage(fn.Pkg())
	if sp == nil {
		return ""
	}
	for _, d := range sp.funcs[fn.Name()] {
		if (d.Recv != nil) == (fn.Type().(*types.Signature).Recv() != nil) {
			if res := r.declReach(sp, d); res != "" {
				return res
			}
		}
	}
	return ""
}

// declReach is reach for one declaration of sp.
func (r *foreignReach) declReach(sp *srcPackage, d *ast.FuncDecl) string {
	if res, ok := r.reached[d]; ok {
		return res
	}
	r.reached[d] = "" // while on the way: a recursive call adds nothing
	file := sp.fileOf(d)
	res := ""
	ast.Inspect(d.Body, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok || res != "" {
			return res == ""
		}
		res = r.callReach(sp, file, call)
		return res == ""
	})
	if res == "" && hasDirective(file, d) {
		res = "calls a step marked at its call site"
	}
	if res == "" {
		// Not cached: in a cycle, "" may only mean the answer was still
		// being computed for a function on the way here.
		delete(r.reached, d)
	} else {
		r.reached[d] = res
	}
	return res
}

// callReach is declReach for one call in a body of sp.
func (r *foreignReach) callReach(sp *srcPackage, file *ast.File, call *ast.CallExpr) string {
	switch f := ast.Unparen(call.Fun).(type) {
	case *ast.Ident:
		return r.nameReach(sp, f.Name, false)
	case *ast.IndexExpr: // resume.Await[T](...)
		return r.callReach(sp, file, &ast.CallExpr{Fun: f.X})
	case *ast.SelectorExpr:
		if x, ok := f.X.(*ast.Ident); ok {
			if imp := importedAs(sp.pkg, file, x.Name); imp != nil {
				if imp.Path() == runtimeapi.Path && runtimeapi.WaitByName(f.Sel.Name) != runtimeapi.NotWait {
					return ForeignWaitPrefix + f.Sel.Name
				}
				if other := r.srcPackage(imp); other != nil {
					return r.nameReach(other, f.Sel.Name, false)
				}
				return ""
			}
		}
		return r.nameReach(sp, f.Sel.Name, true)
	}
	return ""
}

// nameReach reports how a call of name (a method's name when method) in
// sp may reach a step.
func (r *foreignReach) nameReach(sp *srcPackage, name string, method bool) string {
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
		if res := r.declReach(sp, d); res != "" {
			return res
		}
	}
	return ""
}

// srcPackage parses the non-test files of pkg's directory, once, when they
// lie outside GOROOT and pkg is not the runtime's; else it returns nil.
func (r *foreignReach) srcPackage(pkg *types.Package) *srcPackage {
	if sp, ok := r.packages[pkg]; ok {
		return sp
	}
	r.packages[pkg] = nil
	if load.IsRuntimePath(pkg.Path()) {
		return nil
	}
	dir := r.packageDir(pkg)
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
		if e.IsDir() || !strings.HasSuffix(name, ".go") || load.IsTestFile(name) || strings.HasSuffix(name, load.GeneratedSuffix) {
			continue
		}
		f := r.src.Parse(name)
		if f == nil || f.Name.Name != pkg.Name() {
			continue
		}
		sp.add(f)
	}
	r.packages[pkg] = sp
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
			if directive.DocHasVerb(n.Doc, "step") {
				sp.steps[n.Name.Name] = true
			}
			if n.Recv == nil && directive.DocHasVerb(n.Doc, "workflow") {
				sp.flows[n.Name.Name] = true
			}
			return false
		case *ast.Field:
			if _, ok := n.Type.(*ast.FuncType); ok && len(n.Names) > 0 && directive.DocHasVerb(n.Doc, "step") {
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
// of one of its package-level objects, when it lies outside GOROOT.
func (r *foreignReach) packageDir(pkg *types.Package) string {
	for _, name := range pkg.Scope().Names() {
		file := r.src.ObjectFile(pkg.Scope().Lookup(name))
		if !filepath.IsAbs(file) || !strings.HasSuffix(file, ".go") || directive.Within(file, build.Default.GOROOT) {
			continue
		}
		if !r.src.Readable(file) {
			return ""
		}
		return filepath.Dir(file)
	}
	return ""
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
			if strings.HasPrefix(c.Text, directive.Prefix+"step") {
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
