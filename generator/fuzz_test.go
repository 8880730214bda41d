package generator

import (
	"bytes"
	"go/ast"
	"go/format"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"golang.org/x/tools/txtar"

	"github.com/resumegen/resumegen/generator/internal/check"
	"github.com/resumegen/resumegen/generator/internal/diag"
	"github.com/resumegen/resumegen/generator/internal/emit"
	"github.com/resumegen/resumegen/generator/internal/load"
	"github.com/resumegen/resumegen/generator/internal/model"
)

// fuzzEnv type-checks fuzz inputs in-process: one file set and one source
// importer for the standard library, shared by every input, so that an
// input costs a parse and a type check, not a go list.
var fuzzEnv = struct {
	sync.Mutex
	fset *token.FileSet
	imp  types.Importer
}{}

// FuzzGenerate feeds mutated workflow sources to the checks and the
// emitter, in-process (compiling each output would be too slow; the golden
// tests build theirs). Whatever the input, the generator must not panic,
// and must either report diagnostics or emit files that parse and that
// gofmt leaves unchanged. The seed corpus, every single-file golden input,
// runs in plain go test.
func FuzzGenerate(f *testing.F) {
	archives, err := filepath.Glob("../testdata/golden/*.txtar")
	if err != nil {
		f.Fatal(err)
	}
	for _, path := range archives {
		ar, err := txtar.ParseFile(path)
		if err != nil {
			f.Fatal(err)
		}
		for _, file := range ar.Files {
			if strings.HasSuffix(file.Name, ".go") && !strings.Contains(file.Name, "/") && !strings.HasSuffix(file.Name, load.GeneratedSuffix) {
				f.Add(string(file.Data))
			}
		}
	}
	f.Fuzz(func(t *testing.T, src string) {
		fuzzEnv.Lock()
		defer fuzzEnv.Unlock()
		if fuzzEnv.fset == nil {
			fuzzEnv.fset = token.NewFileSet()
			fuzzEnv.imp = importer.ForCompiler(fuzzEnv.fset, "source", nil)
		}
		fset := fuzzEnv.fset
		file, err := parser.ParseFile(fset, "/fuzz/w.go", src, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return // resumegen reports parse errors as diagnostics
		}
		for _, imp := range file.Imports {
			// Only the standard library is available in-process.
			if p := strings.Trim(imp.Path.Value, "\"`"); strings.Contains(strings.Split(p, "/")[0], ".") {
				return
			}
		}
		info := &types.Info{
			Types: map[ast.Expr]types.TypeAndValue{}, Defs: map[*ast.Ident]types.Object{},
			Uses: map[*ast.Ident]types.Object{}, Implicits: map[ast.Node]types.Object{},
			Selections: map[*ast.SelectorExpr]*types.Selection{}, Scopes: map[ast.Node]*types.Scope{},
			Instances: map[*ast.Ident]types.Instance{}, FileVersions: map[*ast.File]string{},
		}
		conf := types.Config{Importer: fuzzEnv.imp, Error: func(error) {}}
		pkg, err := conf.Check("example.com/fuzz", fset, []*ast.File{file}, info)
		if err != nil {
			return // type errors are diagnostics too
		}
		lp := &load.Package{PkgPath: pkg.Path(), Name: pkg.Name(), Fset: fset, Files: []*ast.File{file}, Types: pkg, TypesInfo: info}
		ds := diag.New(fset, "")
		m := analyze(lp, ds)
		found := check.Run(check.All, []*model.Package{m}, ds, diag.New(fset, ""), false)
		if ds.Len() > 0 {
			for _, d := range ds.Items() {
				if d.Message == "" {
					t.Errorf("empty diagnostic at %v", d.Pos)
				}
			}
			return
		}
		if len(m.Workflows) == 0 {
			return
		}
		out, err := emit.File(emit.Source{Package: m, Name: "w.go", File: file, Workflows: m.Workflows}, found.Exceptions, nil)
		if err != nil {
			t.Fatalf("no diagnostics, but emitting failed: %v\n%s", err, src)
		}
		if _, err := parser.ParseFile(token.NewFileSet(), "w_resume.go", out, parser.ParseComments); err != nil {
			t.Fatalf("generated code does not parse: %v\n%s", err, out)
		}
		again, err := format.Source(out)
		if err != nil || !bytes.Equal(again, out) {
			t.Fatalf("generated code is not gofmt-stable (%v):\n%s", err, out)
		}
	})
}
