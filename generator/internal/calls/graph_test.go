package calls

import (
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"strings"
	"testing"
)

const src = `package p

type T struct{}

func Step() {}

func direct()     { Step() }
func viaDirect()  { direct() }
func (T) m()      { viaDirect() }
func callsM(t T)  { t.m() }
func ping(n int)  { if n > 0 { pong(n - 1) } }
func pong(n int)  { ping(n); Step() }
func self(n int)  { if n > 0 { self(n - 1) } }
func inLit()      { f := func() { direct() }; _ = f }
func value()      { f := direct; f() }
func plain() int  { return len("x") }
func generic[X any](x X) { direct() }
func useGeneric() { generic(1) }
`

func buildGraph(t *testing.T) (*Graph, *types.Package) {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "p.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	info := &types.Info{Defs: map[*ast.Ident]types.Object{}, Uses: map[*ast.Ident]types.Object{},
		Types: map[ast.Expr]types.TypeAndValue{}, Selections: map[*ast.SelectorExpr]*types.Selection{},
		Instances: map[*ast.Ident]types.Instance{}}
	pkg, err := (&types.Config{}).Check("p", fset, []*ast.File{f}, info)
	if err != nil {
		t.Fatal(err)
	}
	isStep := func(call *ast.CallExpr) bool {
		id, ok := call.Fun.(*ast.Ident)
		return ok && id.Name == "Step"
	}
	return NewGraph([]Source{{Fset: fset, Files: []*ast.File{f}, Info: info}}, isStep), pkg
}

// TestReach checks which functions may reach a step: through functions,
// methods, mutual recursion, a literal's body and a generic function, and
// not through a function value (which the generator refuses elsewhere) or
// plain recursion without a step.
func TestReach(t *testing.T) {
	g, pkg := buildGraph(t)
	var got []string
	for _, fn := range g.Reachers() {
		got = append(got, fn.Name())
	}
	want := "direct viaDirect m callsM ping pong inLit generic useGeneric"
	if strings.Join(got, " ") != want {
		t.Errorf("reachers = %v, want %s", got, want)
	}
	for _, name := range []string{"self", "value", "plain", "Step"} {
		if fn := pkg.Scope().Lookup(name).(*types.Func); g.StepCall(fn) != nil {
			t.Errorf("%s reaches a step, want not", name)
		}
	}
	if g.Decl(pkg.Scope().Lookup("Step").(*types.Func)) == nil {
		t.Error("Step has a body but no declaration")
	}
}
