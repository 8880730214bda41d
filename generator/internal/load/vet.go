package load

import (
	"bufio"
	"bytes"
	"go/ast"
	"go/build"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// ForVet makes the Package of the package go vet's analyzer is given
// (its files, as the build compiles them, and their types), with the
// packages of its module that it imports read from source beside it, as
// Load reads them for the generator: go vet hands an analyzer export data
// of its imports only, and the checks follow calls into the module's
// packages by types. When the package declares no workflow, or its module
// cannot be read (no go.mod above it, a package that does not type-check),
// its Module holds itself alone.
//
// The imports are parsed into fset and type-checked in dependency order;
// the package's own files are type-checked again against them, so that
// one universe of types holds them all. What they import from outside the
// module comes from the export data the analyzer was given (pkg's
// imports and theirs), or, for a package the export data does not name,
// from source.
func ForVet(fset *token.FileSet, files []*ast.File, pkg *types.Package, info *types.Info) *Package {
	lp := &Package{PkgPath: pkg.Path(), Name: pkg.Name(), Fset: fset, Types: pkg, TypesInfo: info}
	for _, f := range files {
		switch name := fset.File(f.Pos()).Name(); {
		case IsGeneratedAST(fset, f):
			lp.Generated = append(lp.Generated, f)
		case IsTestFile(name):
			lp.TestFiles = append(lp.TestFiles, f)
		default:
			lp.Files = append(lp.Files, f)
		}
	}
	lp.Module = NewModule("", "", lp)
	if len(lp.Files) == 0 || !declaresWorkflow(lp.Files) {
		return lp
	}
	dir := filepath.Dir(fset.File(lp.Files[0].Pos()).Name())
	lp.Dir = dir
	v := newVetLoader(fset, dir, pkg)
	if v == nil {
		return lp
	}
	lp.ModuleDir = v.modDir
	lp.Module = NewModule(v.modPath, v.modDir, lp)
	var module []*Package
	for _, imp := range pkg.Imports() {
		if v.inModule(imp.Path()) {
			if p := v.load(imp.Path()); p != nil {
				module = append(module, p)
			}
		}
	}
	if len(module) == 0 || v.failed {
		return lp // the module's path tells the checks not to judge its packages by name
	}
	// The package itself again, against the module's source types.
	again := newInfo()
	tc := &types.Config{Importer: v, Error: func(error) { v.failed = true }, FakeImportC: true}
	checked, _ := tc.Check(pkg.Path(), fset, files, again)
	if v.failed || checked == nil {
		return lp
	}
	lp.Types, lp.TypesInfo = checked, again
	all := append([]*Package{lp}, v.packages()...)
	lp.Module = NewModule(v.modPath, v.modDir, all...)
	return lp
}

// declaresWorkflow reports whether one of files declares a workflow.
func declaresWorkflow(files []*ast.File) bool {
	for _, f := range files {
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Doc != nil && hasWorkflowDirective(fd.Doc) {
				return true
			}
		}
	}
	return false
}

func newInfo() *types.Info {
	return &types.Info{
		Types:        map[ast.Expr]types.TypeAndValue{},
		Defs:         map[*ast.Ident]types.Object{},
		Uses:         map[*ast.Ident]types.Object{},
		Implicits:    map[ast.Node]types.Object{},
		Instances:    map[*ast.Ident]types.Instance{},
		Scopes:       map[ast.Node]*types.Scope{},
		Selections:   map[*ast.SelectorExpr]*types.Selection{},
		FileVersions: map[*ast.File]string{},
	}
}

// vetLoader reads the packages of one module from source for ForVet.
type vetLoader struct {
	fset *token.FileSet
	// modPath and modDir are the module's path and root; with modPath ""
	// (a GOPATH-like tree, as analysistest lays out) every import path
	// with a directory below modDir is the module's.
	modPath, modDir string
	exported        map[string]*types.Package // export data, by import path
	source          types.Importer            // what the export data lacks
	done            map[string]*Package
	busy            map[string]bool
	failed          bool
}

func newVetLoader(fset *token.FileSet, dir string, pkg *types.Package) *vetLoader {
	v := &vetLoader{fset: fset, exported: map[string]*types.Package{}, done: map[string]*Package{}, busy: map[string]bool{}}
	if modDir, modPath := findModule(dir); modDir != "" && (pkg.Path() == modPath || strings.HasPrefix(pkg.Path(), modPath+"/")) {
		v.modDir, v.modPath = modDir, modPath
	} else if rel := filepath.FromSlash(pkg.Path()); strings.HasSuffix(dir, string(filepath.Separator)+rel) {
		v.modDir = strings.TrimSuffix(dir, string(filepath.Separator)+rel)
	} else {
		return nil
	}
	var walk func(p *types.Package)
	walk = func(p *types.Package) {
		if _, ok := v.exported[p.Path()]; ok {
			return
		}
		v.exported[p.Path()] = p
		for _, imp := range p.Imports() {
			walk(imp)
		}
	}
	for _, imp := range pkg.Imports() {
		walk(imp)
	}
	return v
}

// findModule returns the root and path of the module holding dir, or "".
func findModule(dir string) (root, path string) {
	for d := dir; ; d = filepath.Dir(d) {
		if b, err := os.ReadFile(filepath.Join(d, "go.mod")); err == nil {
			sc := bufio.NewScanner(bytes.NewReader(b))
			for sc.Scan() {
				if f := strings.Fields(sc.Text()); len(f) >= 2 && f[0] == "module" {
					return d, strings.Trim(f[1], `"`)
				}
			}
			return "", ""
		}
		if filepath.Dir(d) == d {
			return "", ""
		}
	}
}

// inModule reports whether the package at path is one of the module's
// the generator reads (not the runtime's).
func (v *vetLoader) inModule(path string) bool {
	if IsRuntimePath(path) {
		return false
	}
	if v.modPath != "" {
		return path == v.modPath || strings.HasPrefix(path, v.modPath+"/")
	}
	st, err := os.Stat(v.dirOf(path))
	return err == nil && st.IsDir()
}

func (v *vetLoader) dirOf(path string) string {
	rel := path
	if v.modPath != "" {
		rel = strings.TrimPrefix(strings.TrimPrefix(path, v.modPath), "/")
	}
	return filepath.Join(v.modDir, filepath.FromSlash(rel))
}

// Import resolves an import of a package type-checked here.
func (v *vetLoader) Import(path string) (*types.Package, error) {
	if v.inModule(path) {
		if p := v.load(path); p != nil {
			return p.Types, nil
		}
		v.failed = true
	}
	if p := v.exported[path]; p != nil {
		return p, nil
	}
	if v.source == nil {
		v.source = importer.ForCompiler(v.fset, "source", nil)
	}
	return v.source.Import(path)
}

// load parses and type-checks the module's package at path, once, and
// returns it, or nil when it does not load.
func (v *vetLoader) load(path string) *Package {
	if p, ok := v.done[path]; ok {
		return p
	}
	if v.busy[path] {
		v.failed = true // an import cycle is the compiler's to report
		return nil
	}
	v.busy[path] = true
	defer delete(v.busy, path)
	dir := v.dirOf(path)
	bp, err := build.Default.ImportDir(dir, 0)
	if err != nil {
		v.done[path] = nil
		return nil
	}
	var files []*ast.File
	lp := &Package{PkgPath: path, Name: bp.Name, Fset: v.fset, Dir: dir, ModuleDir: v.modDir}
	for _, name := range bp.GoFiles {
		f, err := parser.ParseFile(v.fset, filepath.Join(dir, name), nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			v.failed = true
			v.done[path] = nil
			return nil
		}
		files = append(files, f)
		if IsGeneratedAST(v.fset, f) {
			lp.Generated = append(lp.Generated, f)
		} else {
			lp.Files = append(lp.Files, f)
		}
	}
	info := newInfo()
	failed := false
	tc := &types.Config{Importer: v, Error: func(error) { failed = true }, FakeImportC: true}
	t, _ := tc.Check(path, v.fset, files, info)
	if failed || t == nil {
		v.failed = true
		v.done[path] = nil
		return nil
	}
	lp.Types, lp.TypesInfo = t, info
	v.done[path] = lp
	return lp
}

// packages lists the packages loaded, by import path.
func (v *vetLoader) packages() []*Package {
	var out []*Package
	for _, p := range v.done {
		if p != nil {
			out = append(out, p)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].PkgPath < out[j].PkgPath })
	return out
}
