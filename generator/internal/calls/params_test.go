package calls

import (
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"sort"
	"strings"
	"testing"
)

const paramsSrc = `package p

import (
	"fmt"
	"io"
	"sort"
	"strings"
)

type Set map[string]bool

func (s Set) Add(k string) { s[k] = true }
func (s Set) Has(k string) bool { return s[k] }

type Req struct {
	ID    string
	Items []int
}

func reads(s []int, m map[string]int, r Req) int { return len(s) + m["a"] + s[0] + r.Items[0] }
func writesElem(s []int)                   { s[0] = 1 }
func writesAlias(s []int)                  { t := s[1:]; t[0]++ }
func writesEntry(m map[string]int)         { m["a"] = 1 }
func deletes(m map[string]int)             { delete(m, "a") }
func appends(s []int) []int                { return append(s, 1) }
func sorts(s []string)                     { sort.Strings(s) }
func joins(s []string) string              { return strings.Join(s, ",") }
func viaHelper(s []int)                    { writesElem(s) }
func viaMethod(s Set)                      { s.Add("x") }
func readsMethod(s Set) bool               { return s.Has("x") }
func field(r Req)                          { r.Items[0] = 2 }
func fieldCopy(r Req)                      { r.ID = "x" }
func sends(ch chan int)                    { ch <- 1 }
func calls(f func())                       { f() }
func writes(w io.Writer)                   { w.Write(nil) }
func prints(w io.Writer)                   { fmt.Fprintln(w, "x") }
func loops(s []int)                        { for i := range s { s[i] = i } }
func recursive(s []int, n int)             { if n > 0 { recursive(s, n-1) } }
func escapes(s []int) any                  { return Req{Items: s} }
func formats(s []int) string               { return fmt.Sprint(s) }
`

func TestParamUse(t *testing.T) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "p.go", paramsSrc, 0)
	if err != nil {
		t.Fatal(err)
	}
	info := &types.Info{Defs: map[*ast.Ident]types.Object{}, Uses: map[*ast.Ident]types.Object{},
		Types: map[ast.Expr]types.TypeAndValue{}, Selections: map[*ast.SelectorExpr]*types.Selection{},
		Instances: map[*ast.Ident]types.Instance{}}
	pkg, err := (&types.Config{Importer: importer.ForCompiler(fset, "source", nil)}).Check("p", fset, []*ast.File{f}, info)
	if err != nil {
		t.Fatal(err)
	}
	a := &Analysis{Steps: NewGraph([]Source{{Fset: fset, Files: []*ast.File{f}, Info: info}}, func(*ast.CallExpr) bool { return false })}
	flags := func(u Use) string {
		var out []string
		for name, on := range map[string]bool{"writes": u.Writes, "appends": u.Appends, "chan": u.Chan, "calls": u.Calls, "writer": u.Writer} {
			if on {
				out = append(out, name)
			}
		}
		sort.Strings(out)
		return strings.Join(out, ",")
	}
	for _, tc := range []struct {
		fn   string
		i    int
		want string
	}{
		{"reads", 0, ""}, {"reads", 1, ""}, {"reads", 2, ""},
		{"writesElem", 0, "writes"},
		{"writesAlias", 0, "writes"},
		{"writesEntry", 0, "writes"},
		{"deletes", 0, "writes"},
		{"appends", 0, "appends"},
		{"sorts", 0, "writes"},
		{"joins", 0, ""},
		{"viaHelper", 0, "writes"},
		{"viaMethod", 0, "writes"},
		{"readsMethod", 0, ""},
		{"field", 0, "writes"},
		{"fieldCopy", 0, ""},
		{"sends", 0, "chan"},
		{"calls", 0, "calls"},
		{"writes", 0, "writer"},
		{"prints", 0, "appends,calls,chan,writer,writes"},
		{"loops", 0, "writes"},
		{"recursive", 0, ""},
		{"escapes", 0, "writes"},
		{"formats", 0, ""},
	} {
		fn := pkg.Scope().Lookup(tc.fn).(*types.Func)
		if got := flags(a.ParamUse(fn, tc.i)); got != tc.want {
			t.Errorf("ParamUse(%s, %d) = %q, want %q (%s)", tc.fn, tc.i, got, tc.want, a.ParamUse(fn, tc.i).Why)
		}
	}
}
