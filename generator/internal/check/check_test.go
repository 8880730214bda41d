package check_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/resumegen/resumegen/generator/internal/check"
	"github.com/resumegen/resumegen/generator/internal/diag"
	"github.com/resumegen/resumegen/generator/internal/model"
	"github.com/resumegen/resumegen/generator/internal/pipetest"
)

// run runs checks on the model of src as Generate does (vet false) or as
// go vet does, and returns the model, the refusals, the warnings and the
// result.
func run(t *testing.T, checks []*check.Check, src string, vet bool) (*model.Package, []diag.Diagnostic, []diag.Diagnostic, check.Result) {
	t.Helper()
	m := pipetest.Model(t, src)
	ds, ws := diag.New(m.Load.Fset, ""), diag.New(m.Load.Fset, "")
	res := check.Run(checks, []*model.Package{m}, ds, ws, vet)
	return m, ds.Sorted(), ws.Sorted(), res
}

// workflow returns the workflow of m named name.
func workflow(t *testing.T, m *model.Package, name string) *model.Workflow {
	t.Helper()
	for _, w := range m.Workflows {
		if w.Name == name {
			return w
		}
	}
	t.Fatalf("no workflow %s", name)
	return nil
}

// A //resume:allow turns each non-determinism of its line into a reviewed
// exception of the workflow, in the order the step search meets them (the
// body, a helper at its call, the body again), with its reason; one in a
// helper counts for every workflow reaching it. Nothing is refused.
func TestAllowIsException(t *testing.T) {
	m, errs, _, res := run(t, []*check.Check{check.Nondeterministic}, `package p

import (
	"context"
	"math/rand"
	"os"
	"time"
)

//resume:workflow
func A(ctx context.Context) error {
	t := time.Now() //resume:allow nondeterministic reason="only logged"
	_ = env(ctx)
	_ = time.Since(t) + time.Duration(rand.Intn(3)) //resume:allow nondeterministic reason="jitter"
	return S(ctx)
}

//resume:workflow
func B(ctx context.Context) error { return env(ctx) }

func env(ctx context.Context) error {
	_ = os.Getenv("HOME") //resume:allow nondeterministic reason="shown only"
	return S(ctx)
}

//resume:step
func S(ctx context.Context) error { return nil }
`, false)
	for _, d := range errs {
		t.Errorf("unexpected refusal: %s", d)
	}
	want := map[string]string{
		"A": "[{nondeterministic time.Now only logged} {nondeterministic os.Getenv shown only} " +
			"{nondeterministic time.Since jitter} {nondeterministic rand.Intn jitter}]",
		"B": "[{nondeterministic os.Getenv shown only}]",
	}
	for name, w := range want {
		if got := fmt.Sprint(res.Exceptions[workflow(t, m, name)]); got != w {
			t.Errorf("exceptions of %s = %s, want %s", name, got, w)
		}
	}
}

// A //resume:allow at the end of the line of a helper's call allows what
// the helper reaches only when every way from the body to it crosses an
// allow: the step search enters the helper once, at its first call, and
// a later plain call of it is refused all the same (it was accepted
// before: the walk saw the first call alone). Each allow on the way is
// listed, none is called unused, and a call marked //resume:step is a
// way that is journaled.
func TestAllowAtEveryCall(t *testing.T) {
	src := func(second string) string {
		return `package p

import (
	"context"
	"time"
)

//resume:workflow
func W(ctx context.Context) error {
	_ = stamp() //resume:allow nondeterministic reason="logged"
	` + second + `
	return S(ctx)
}

func stamp() time.Time { return now() }

func now() time.Time { return time.Now() }

//resume:step
func S(ctx context.Context) error { return nil }
`
	}
	m, errs, _, res := run(t, []*check.Check{check.Nondeterministic}, src(`_ = stamp() //resume:allow nondeterministic reason="shown"`), false)
	if len(errs) > 0 {
		t.Errorf("both calls allowed: refused %v", errs)
	}
	if got, want := fmt.Sprint(res.Exceptions[workflow(t, m, "W")]), "[{nondeterministic time.Now logged} {nondeterministic time.Now shown}]"; got != want {
		t.Errorf("exceptions = %s, want %s", got, want)
	}
	m, errs, _, res = run(t, []*check.Check{check.Nondeterministic}, src(`_ = stamp() //resume:step name=Stamp`), false)
	if len(errs) > 0 || len(res.Exceptions[workflow(t, m, "W")]) != 1 {
		t.Errorf("one call allowed, one a step: refused %v, exceptions %v", errs, res.Exceptions[workflow(t, m, "W")])
	}
	_, errs, _, _ = run(t, []*check.Check{check.Nondeterministic}, src(`_ = stamp()`), false)
	if len(errs) != 1 || errs[0].Pos.Line != 17 || !strings.HasPrefix(errs[0].Message, "time.Now in now, called from workflow W along W → stamp → now → time.Now, gives another value") {
		t.Errorf("the second call plain: refusals %v, want time.Now at p.go:17 alone", errs)
	}
}

// An allow that silences nothing is refused at the directive: on a line
// without a non-determinism, and on a line whose problem is of another
// kind (placement cannot be allowed, and stays refused). One in a function
// no workflow reaches is left to the unreached check.
func TestAllowUnused(t *testing.T) {
	src := `package p

import (
	"context"
	"time"
)

//resume:workflow
func W(ctx context.Context) error {
	// wantnext "^//resume:allow nondeterministic reason=\"nothing\": nothing on this line needs it: remove the directive$"
	_ = S(ctx) //resume:allow nondeterministic reason="nothing"
	// wantnext "^step S is called in a go statement" "^//resume:allow nondeterministic reason=\"placement\": nothing on this line needs it"
	go S(ctx) //resume:allow nondeterministic reason="placement"
	_ = time.Now() //resume:allow nondeterministic reason="used"
	return nil
}

func unreached() {
	_ = time.Now() //resume:allow nondeterministic reason="never runs"
}

//resume:step
func S(ctx context.Context) error { return nil }
`
	nondetAndPlacement := &check.Check{Name: "nondeterministic+placement", Run: func(p *check.Pass) {
		check.Nondeterministic.Run(p)
		check.Placement.Run(p)
	}}
	pipetest.Want(t, nondetAndPlacement, src)
}

// go vet runs every check but those marked GeneratorOnly: a collision
// with a generated identifier, which vet sees compiled into the package,
// and the warning of a workflow without steps.
func TestVetLeavesOutGeneratorOnly(t *testing.T) {
	src := `package p

import "context"

//resume:workflow
func W(ctx context.Context) error { return nil }

var resumeW int
`
	_, errs, warns, _ := run(t, check.All, src, false)
	if len(errs) != 1 || len(warns) != 1 {
		t.Fatalf("generator: refusals %v, warnings %v; want the collision and the warning", errs, warns)
	}
	_, errs, warns, _ = run(t, check.All, src, true)
	if len(errs)+len(warns) != 0 {
		t.Errorf("vet: refusals %v, warnings %v; want none", errs, warns)
	}
}

// Each check has a name of its own and says what it refuses.
func TestChecksNamed(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range check.All {
		if c.Name == "" || c.Doc == "" || c.Run == nil {
			t.Errorf("check %q: name, doc and run are required", c.Name)
		}
		if seen[c.Name] {
			t.Errorf("two checks named %s", c.Name)
		}
		seen[c.Name] = true
	}
}

// No check depends on another's result: running the list backwards finds
// the same problems (two at one position may come in another order).
func TestOrderIndependent(t *testing.T) {
	src := `package p

import (
	"context"
	"time"
)

var G int

//resume:workflow
func W(ctx context.Context, c chan int) (int, error) {
	G++
	_ = time.Now() //resume:allow nondeterministic reason="logged"
	go S(ctx)
	for k := range map[string]int{} {
		_ = S(ctx) //resume:step key=k
		_ = k
	}
	_ = S(ctx) //resume:step key=1.5
	_ = S(ctx) //resume:step renamed-from=S
	_, _ = Bad(ctx)
	f := S
	_ = f
	return 0, S(ctx)
}

//resume:step
func S(ctx context.Context) error { return nil }

//resume:step
func Bad(ctx context.Context) (chan int, error) { return nil, nil }

func resumeW_S() {}
`
	render := func(checks []*check.Check) []string {
		_, errs, warns, _ := run(t, checks, src, false)
		var out []string
		for _, d := range append(errs, warns...) {
			out = append(out, d.String())
		}
		sort.Strings(out)
		return out
	}
	forward := render(check.All)
	reversed := slices.Clone(check.All)
	slices.Reverse(reversed)
	backward := render(reversed)
	if len(forward) < 8 {
		t.Fatalf("only %d diagnostics: the source no longer exercises the checks: %q", len(forward), forward)
	}
	if !slices.Equal(forward, backward) {
		t.Errorf("forward %q\nbackward %q", forward, backward)
	}
}

// Each check of the list is run by a test file of its own (not only by
// the framework's tests here): adding a check means adding its test.
func TestEveryCheckTested(t *testing.T) {
	fset := token.NewFileSet()
	list, err := parser.ParseFile(fset, "list.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	ast.Inspect(list, func(n ast.Node) bool {
		if vs, ok := n.(*ast.ValueSpec); ok && vs.Names[0].Name == "All" {
			for _, e := range vs.Values[0].(*ast.CompositeLit).Elts {
				names = append(names, e.(*ast.Ident).Name)
			}
		}
		return true
	})
	if len(names) != len(check.All) {
		t.Fatalf("read %d checks from list.go, check.All has %d", len(names), len(check.All))
	}
	files, err := filepath.Glob("*_test.go")
	if err != nil {
		t.Fatal(err)
	}
	tested := map[string]string{}
	for _, name := range files {
		if name == "check_test.go" {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok {
				if x, ok := sel.X.(*ast.Ident); ok && x.Name == "check" {
					tested[sel.Sel.Name] = name
				}
			}
			return true
		})
	}
	for _, n := range names {
		if tested[n] == "" {
			t.Errorf("check.%s has no test: add one beside its file (see pipetest.Want)", n)
		}
	}
}
