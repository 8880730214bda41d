// Package pipetest type-checks Go source in process for the tests of the
// generator's stages, and runs the stages on it: a model or a check is
// tested on a few lines of Go without the go command. Imports resolve
// from source, the standard library and this module's packages alike, so
// a test may import the runtime (resume.Sleep) as a user's package does.
package pipetest

import (
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/resumegen/resumegen/generator/internal/calls"
	"github.com/resumegen/resumegen/generator/internal/check"
	"github.com/resumegen/resumegen/generator/internal/diag"
	"github.com/resumegen/resumegen/generator/internal/directive"
	"github.com/resumegen/resumegen/generator/internal/load"
	"github.com/resumegen/resumegen/generator/internal/model"
)

// env is one file set and one source importer shared by every test of a
// process, so that a package's dependencies are parsed once.
var env = struct {
	sync.Mutex
	fset *token.FileSet
	imp  types.Importer
}{}

// Load type-checks src, the one file p.go of package path
// example.com/p, and returns it as the later stages read it. A type error
// fails the test.
func Load(t testing.TB, src string) *load.Package {
	t.Helper()
	env.Lock()
	defer env.Unlock()
	if env.fset == nil {
		env.fset = token.NewFileSet()
		env.imp = importer.ForCompiler(env.fset, "source", nil)
	}
	f, err := parser.ParseFile(env.fset, "p.go", src, parser.ParseComments)
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	info := &types.Info{
		Types: map[ast.Expr]types.TypeAndValue{}, Defs: map[*ast.Ident]types.Object{},
		Uses: map[*ast.Ident]types.Object{}, Implicits: map[ast.Node]types.Object{},
		Selections: map[*ast.SelectorExpr]*types.Selection{}, Scopes: map[ast.Node]*types.Scope{},
		Instances: map[*ast.Ident]types.Instance{}, FileVersions: map[*ast.File]string{},
	}
	conf := types.Config{Importer: env.imp}
	pkg, err := conf.Check("example.com/p", env.fset, []*ast.File{f}, info)
	if err != nil {
		t.Fatalf("type-check: %v", err)
	}
	return &load.Package{PkgPath: pkg.Path(), Name: pkg.Name(), Fset: env.fset, Files: []*ast.File{f}, Types: pkg, TypesInfo: info,
		Sources: map[string][]byte{"p.go": []byte(src)}}
}

// Model runs the directive, call and model stages on src (see Load); what
// the directive stage reports fails the test.
func Model(t testing.TB, src string) *model.Package {
	t.Helper()
	return Build(t, Load(t, src))
}

// Build runs the directive, call and model stages on pkg, a package of
// Load that the test may have changed (its Priors); what the directive
// stage reports fails the test.
func Build(t testing.TB, pkg *load.Package) *model.Package {
	t.Helper()
	ds := diag.New(pkg.Fset, "")
	dirs := directive.Scan(pkg, ds)
	for _, d := range ds.Items() {
		t.Errorf("directive stage: %s", d)
	}
	srcs := []calls.Package{{Load: pkg, Directives: dirs}}
	return model.NewModule(calls.New(srcs...), srcs...).Package(pkg.Types).Build()
}

// Run runs the checks on the model of src and returns their refusals and
// warnings, sorted.
func Run(t testing.TB, checks []*check.Check, src string) (errors, warnings []diag.Diagnostic) {
	t.Helper()
	m := Model(t, src)
	ds, ws := diag.New(m.Load.Fset, ""), diag.New(m.Load.Fset, "")
	check.Run(checks, []*model.Package{m}, ds, ws, false)
	return ds.Sorted(), ws.Sorted()
}

// Module type-checks the files of several packages of the module
// example.com/p, by path ("p.go" is package example.com/p, "util/u.go"
// package example.com/p/util), imports among them resolved from source,
// and returns the model of example.com/p with the others read beside it,
// as the loader reads the main module's packages. A type error, or what
// the directive stage reports, fails the test.
func Module(t testing.TB, files map[string]string) *model.Package {
	t.Helper()
	env.Lock()
	defer env.Unlock()
	if env.fset == nil {
		env.fset = token.NewFileSet()
		env.imp = importer.ForCompiler(env.fset, "source", nil)
	}
	byPkg := map[string][]*ast.File{}
	var names []string
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		f, err := parser.ParseFile(env.fset, name, files[name], parser.ParseComments)
		if err != nil {
			t.Fatalf("parse %s: %v", name, err)
		}
		path := pathOf(name)
		byPkg[path] = append(byPkg[path], f)
	}
	loaded := map[string]*load.Package{}
	var check func(path string) (*types.Package, error)
	imp := importerFunc(func(path string) (*types.Package, error) {
		if _, ok := byPkg[path]; ok {
			return check(path)
		}
		return env.imp.Import(path)
	})
	check = func(path string) (*types.Package, error) {
		if lp := loaded[path]; lp != nil {
			return lp.Types, nil
		}
		info := &types.Info{
			Types: map[ast.Expr]types.TypeAndValue{}, Defs: map[*ast.Ident]types.Object{},
			Uses: map[*ast.Ident]types.Object{}, Implicits: map[ast.Node]types.Object{},
			Selections: map[*ast.SelectorExpr]*types.Selection{}, Scopes: map[ast.Node]*types.Scope{},
			Instances: map[*ast.Ident]types.Instance{}, FileVersions: map[*ast.File]string{},
		}
		pkg, err := (&types.Config{Importer: imp}).Check(path, env.fset, byPkg[path], info)
		if err != nil {
			t.Fatalf("type-check %s: %v", path, err)
		}
		sources := map[string][]byte{}
		for name, src := range files {
			if pathOf(name) == path {
				sources[filepath.Base(name)] = []byte(src)
			}
		}
		loaded[path] = &load.Package{PkgPath: path, Name: pkg.Name(), Fset: env.fset, Files: byPkg[path], Types: pkg, TypesInfo: info, Sources: sources}
		return pkg, nil
	}
	var pkgs []*load.Package
	var paths []string
	for path := range byPkg {
		paths = append(paths, path)
	}
	sort.Strings(paths)
	for _, path := range paths {
		check(path)
	}
	for _, path := range paths {
		pkgs = append(pkgs, loaded[path])
	}
	load.NewModule("example.com/p", "", pkgs...)
	ds := diag.New(env.fset, "")
	var srcs []calls.Package
	for _, lp := range pkgs {
		srcs = append(srcs, calls.Package{Load: lp, Directives: directive.Scan(lp, ds)})
	}
	for _, d := range ds.Items() {
		t.Errorf("directive stage: %s", d)
	}
	return model.NewModule(calls.New(srcs...), srcs...).Package(loaded["example.com/p"].Types).Build()
}

// pathOf is the import path of the package of Module's file name.
func pathOf(name string) string {
	if dir := filepath.ToSlash(filepath.Dir(name)); dir != "." {
		return "example.com/p/" + dir
	}
	return "example.com/p"
}

type importerFunc func(path string) (*types.Package, error)

// Import imports path by calling f.
func (f importerFunc) Import(path string) (*types.Package, error) { return f(path) }

// RunChecks runs the checks on m and returns their refusals and
// warnings, sorted, and what they found.
func RunChecks(t testing.TB, checks []*check.Check, m *model.Package) (errors, warnings []diag.Diagnostic, found check.Result) {
	t.Helper()
	ds, ws := diag.New(m.Load.Fset, ""), diag.New(m.Load.Fset, "")
	found = check.Run(checks, []*model.Package{m}, ds, ws, false)
	return ds.Sorted(), ws.Sorted(), found
}

// WantModule is Want for the packages of Module: the want comments of
// every file count, and the check runs on the model of example.com/p.
func WantModule(t *testing.T, c *check.Check, files map[string]string) {
	t.Helper()
	m := Module(t, files)
	ds, ws := diag.New(m.Load.Fset, ""), diag.New(m.Load.Fset, "")
	check.Run([]*check.Check{c}, []*model.Package{m}, ds, ws, false)
	wants := map[string]map[int][]*regexp.Regexp{}
	for name, src := range files {
		wants[name] = parseWants(t, name, src)
	}
	matchWants(t, c, ds.Sorted(), func(d diag.Diagnostic) string { return d.Pos.Filename }, wants)
}

var wantRE = regexp.MustCompile(`// want(next)? (".*)$`)

// Want runs one check on src and compares its refusals with the
// `// want "regexp"` comments of src, analysistest's convention: each
// refusal must match a want of its line, and each want must be matched
// by a refusal of its line of its own. A line expecting several refusals
// lists a pattern for each: `// want "first" "second"`. On a line ending
// with a directive, whose comment a want cannot follow, write the want on
// the line before as `// wantnext "regexp"`.
func Want(t *testing.T, c *check.Check, src string) {
	t.Helper()
	wants := parseWants(t, "p.go", src)
	errs, _ := Run(t, []*check.Check{c}, src)
	matchWants(t, c, errs, func(diag.Diagnostic) string { return "p.go" }, map[string]map[int][]*regexp.Regexp{"p.go": wants})
}

// WantWarnings is [Want] for a check that warns: the want comments of
// src must match its warnings, and it must refuse nothing.
func WantWarnings(t *testing.T, c *check.Check, src string) {
	t.Helper()
	wants := parseWants(t, "p.go", src)
	errs, warns := Run(t, []*check.Check{c}, src)
	if len(errs) > 0 {
		t.Errorf("%s refused: %v", c.Name, errs)
	}
	matchWants(t, c, warns, func(diag.Diagnostic) string { return "p.go" }, map[string]map[int][]*regexp.Regexp{"p.go": wants})
}

// parseWants reads the want comments of a file, by line.
func parseWants(t testing.TB, name, src string) map[int][]*regexp.Regexp {
	t.Helper()
	wants := map[int][]*regexp.Regexp{}
	for i, line := range strings.Split(src, "\n") {
		m := wantRE.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		pats, err := patterns(m[2])
		if err != nil {
			t.Fatalf("%s:%d: bad want %s: %v", name, i+1, m[2], err)
		}
		line := i + 1
		if m[1] != "" {
			line++
		}
		wants[line] = append(wants[line], pats...)
	}
	return wants
}

// matchWants compares the refusals with the wants, by file (the file of a
// refusal is file's) and line: each refusal must match a want of its
// line, and each want be matched by a refusal of its own.
func matchWants(t *testing.T, c *check.Check, errs []diag.Diagnostic, file func(diag.Diagnostic) string, wants map[string]map[int][]*regexp.Regexp) {
	t.Helper()
	for _, d := range errs {
		f := file(d)
		pats := wants[f][d.Pos.Line]
		i := slices.IndexFunc(pats, func(re *regexp.Regexp) bool { return re.MatchString(d.Message) })
		if i < 0 {
			t.Errorf("%s: unexpected diagnostic of %s: %s", d.Pos, c.Name, d.Message)
			continue
		}
		wants[f][d.Pos.Line] = slices.Delete(pats, i, i+1)
	}
	var missing []string
	for name, byLine := range wants {
		for l, pats := range byLine {
			for _, re := range pats {
				missing = append(missing, fmt.Sprintf("%s:%d: no diagnostic of %s matching %q", name, l, c.Name, re))
			}
		}
	}
	sort.Strings(missing)
	for _, m := range missing {
		t.Error(m)
	}
}

// patterns parses the Go string literals of a want comment, separated by
// spaces, as regular expressions.
func patterns(s string) ([]*regexp.Regexp, error) {
	var out []*regexp.Regexp
	for s = strings.TrimSpace(s); s != ""; s = strings.TrimSpace(s) {
		lit, err := strconv.QuotedPrefix(s)
		if err != nil {
			return nil, fmt.Errorf("%q: want Go string literals", s)
		}
		pat, _ := strconv.Unquote(lit)
		re, err := regexp.Compile(pat)
		if err != nil {
			return nil, err
		}
		out = append(out, re)
		s = s[len(lit):]
	}
	return out, nil
}
