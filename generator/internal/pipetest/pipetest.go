// Package pipetest type-checks Go source in process for the tests of the
// generator's stages, and runs the stages on it: a model or a check is
// tested on a few lines of Go without the go command. Imports resolve
// from source, the standard library and this module's packages alike, so
// a test may import the runtime (resume.Sleep) as a user's package does.
package pipetest

import (
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"regexp"
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
	return &load.Package{PkgPath: pkg.Path(), Name: pkg.Name(), Fset: env.fset, Files: []*ast.File{f}, Types: pkg, TypesInfo: info}
}

// Model runs the directive, call and model stages on src (see Load); what
// the directive stage reports fails the test.
func Model(t testing.TB, src string) *model.Package {
	t.Helper()
	pkg := Load(t, src)
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

var wantRE = regexp.MustCompile(`// want(next)? (".*")\s*$`)

// Want runs one check on src and compares its refusals with the
// `// want "regexp"` comments of src, analysistest's convention: each
// refusal must match the want of its line, and each want must be matched.
// On a line ending with a directive, whose comment a want cannot follow,
// write the want on the line before as `// wantnext "regexp"`.
func Want(t *testing.T, c *check.Check, src string) {
	t.Helper()
	wants := map[int]*regexp.Regexp{}
	for i, line := range strings.Split(src, "\n") {
		m := wantRE.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		pat, err := strconv.Unquote(m[2])
		if err != nil {
			t.Fatalf("line %d: bad want %s: %v", i+1, m[2], err)
		}
		line := i + 1
		if m[1] != "" {
			line++
		}
		wants[line] = regexp.MustCompile(pat)
	}
	errs, _ := Run(t, []*check.Check{c}, src)
	matched := map[int]bool{}
	for _, d := range errs {
		re := wants[d.Pos.Line]
		if re == nil || !re.MatchString(d.Message) {
			t.Errorf("%s: unexpected diagnostic of %s: %s", d.Pos, c.Name, d.Message)
			continue
		}
		matched[d.Pos.Line] = true
	}
	var lines []int
	for l := range wants {
		lines = append(lines, l)
	}
	sort.Ints(lines)
	for _, l := range lines {
		if !matched[l] {
			t.Errorf("p.go:%d: no diagnostic of %s matching %q", l, c.Name, wants[l])
		}
	}
}
