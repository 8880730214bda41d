package graph

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/printer"
	"go/token"
	"strings"
	"testing"
)

// fakeSource says the calls of functions whose names start with an upper
// case letter are steps (Child*, Sleep and Await of their kinds; a name
// ending in Once or Tx of that policy), and the calls of the file's other
// functions enter them as helpers.
type fakeSource struct {
	fset  *token.FileSet
	funcs map[string]*ast.FuncDecl
	keys  map[string]string // step name -> key=
}

func (s *fakeSource) Step(call *ast.CallExpr) (Call, bool) {
	id, ok := call.Fun.(*ast.Ident)
	if !ok || id.Name == "" || id.Name[0] < 'A' || id.Name[0] > 'Z' {
		return Call{}, false
	}
	c := Call{Name: id.Name, Policy: "default", Key: s.keys[id.Name]}
	switch {
	case strings.HasPrefix(id.Name, "Child"):
		c.Kind = Child
	case id.Name == "Sleep":
		c.Kind = Sleep
	case id.Name == "Await":
		c.Kind = Await
	case strings.HasSuffix(id.Name, "Once"):
		c.Policy = "once"
	case strings.HasSuffix(id.Name, "Tx"):
		c.Policy = "tx"
	}
	return c, true
}

func (s *fakeSource) Helper(call *ast.CallExpr) (string, *ast.BlockStmt) {
	if id, ok := call.Fun.(*ast.Ident); ok {
		if d := s.funcs[id.Name]; d != nil {
			return id.Name, d.Body
		}
	}
	return "", nil
}

func (s *fakeSource) Text(n ast.Node) string {
	var buf bytes.Buffer
	printer.Fprint(&buf, s.fset, n)
	return buf.String()
}

// draw draws the graph of function wf of src.
func draw(t *testing.T, src, wf string, keys map[string]string) string {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "x.go", "package x\n"+src, 0)
	if err != nil {
		t.Fatal(err)
	}
	s := &fakeSource{fset: fset, funcs: map[string]*ast.FuncDecl{}, keys: keys}
	for _, d := range f.Decls {
		if fd, ok := d.(*ast.FuncDecl); ok && fd.Name.Name[0] >= 'a' {
			s.funcs[fd.Name.Name] = fd
		}
	}
	for _, d := range f.Decls {
		if fd, ok := d.(*ast.FuncDecl); ok && fd.Name.Name == wf {
			return Mermaid(wf, fd.Body, s)
		}
	}
	t.Fatalf("no function %s", wf)
	return ""
}

func TestShapes(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		keys      map[string]string
		want      string
	}{
		{"sequence with early returns", `
func W() error {
	a, err := Fetch()
	if err != nil {
		return err
	}
	x := a + 1 // plain code: not drawn
	if x > 3 {
		x++
	}
	return Store(x)
}`, nil, `flowchart TD
  n1(["W"])
  n2(["end"])
  n3["Fetch"]
  n4["Store"]
  n1 --> n3
  n3 --> n4
  n3 -->|"err != nil"| n2
  n4 --> n2
`},
		{"fan-out: resume.Map's literal is a loop body", `
func W(items []string) error {
	out, err := resume.Map(ctx, items, func(ctx context.Context, it string) (int, error) {
		return ChildScore(it)
	})
	if err != nil {
		return err
	}
	return Store(out)
}`, map[string]string{"ChildScore": "it"}, `flowchart TD
  n1(["W"])
  n2(["end"])
  n3{{"resume.Map over items"}}
  n4[["ChildScore key=it (child)"]]
  n5["Store"]
  n1 --> n3
  n3 --> n4
  n4 -.-> n3
  n3 -->|"done"| n5
  n3 -->|"done, err != nil"| n2
  n5 --> n2
`},
		{"branch and keyed loop", `
func W(items []string) {
	if len(items) > 10 {
		ChargeOnce()
	} else {
		ChildReview()
	}
	for _, it := range items {
		if it == "" {
			continue
		}
		Notify(it)
	}
	Sleep()
}`, map[string]string{"Notify": "it"}, `flowchart TD
  n1(["W"])
  n2(["end"])
  n3["ChargeOnce (once)"]
  n4[["ChildReview (child)"]]
  n5{{"for _, it := range items"}}
  n6["Notify key=it"]
  n7>"Sleep"]
  n1 -->|"len(items) #gt; 10"| n3
  n1 -->|"else"| n4
  n3 --> n5
  n4 --> n5
  n5 -.->|"it == #quot;#quot;"| n5
  n5 --> n6
  n6 -.-> n5
  n5 -->|"done"| n7
  n7 --> n2
`},
		{"helper, switch and defer", `
func W(k int) {
	defer UndoTx()
	switch k {
	case 1:
		prepare()
	case 2, 3:
		return
	}
	Finish()
}
func prepare() {
	A()
	B()
}`, nil, `flowchart TD
  n1(["W"])
  n2(["end"])
  n5["Finish"]
  n6["defer UndoTx (tx)"]
  subgraph h1["prepare"]
    n3["A"]
    n4["B"]
  end
  n1 -->|"case 1"| n3
  n3 --> n4
  n4 --> n5
  n1 -->|"no case"| n5
  n1 -->|"case 2, 3"| n6
  n5 --> n6
  n6 --> n2
`},
		{"a return before a defer does not run it", `
func W() error {
	if err := Charge(); err != nil {
		return err
	}
	defer func() {
		Refund()
	}()
	return Ship()
}`, nil, `flowchart TD
  n1(["W"])
  n2(["end"])
  n3["Charge"]
  n4["Ship"]
  n5["defer Refund"]
  n1 --> n3
  n3 --> n4
  n4 --> n5
  n5 --> n2
  n3 -->|"err != nil"| n2
`},
		{"a return in a loop runs what earlier iterations deferred", `
func W(legs []string) error {
	for _, l := range legs {
		if err := Reserve(l); err != nil {
			return err
		}
		defer Cancel(l)
	}
	return nil
}`, nil, `flowchart TD
  n1(["W"])
  n2(["end"])
  n3{{"for _, l := range legs"}}
  n4["Reserve"]
  n5["defer Cancel"]
  n1 --> n3
  n3 --> n4
  n4 -.-> n3
  n4 -->|"err != nil"| n5
  n3 -->|"done"| n5
  n5 --> n2
`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, steps := splitSteps(draw(t, tc.src, "W", tc.keys))
			if nodes := strings.Count(got, "\n  n") - strings.Count(got, "-->") - strings.Count(got, "-.->"); len(steps) > nodes {
				t.Errorf("%d step comments for %d nodes", len(steps), nodes)
			}
			if got != tc.want {
				t.Errorf("got\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}

// splitSteps parts a graph into its flowchart and its "%% step" lines.
func splitSteps(g string) (chart string, steps []string) {
	var b strings.Builder
	for _, l := range strings.SplitAfter(g, "\n") {
		if s, ok := strings.CutPrefix(l, "  %% step "); ok {
			steps = append(steps, strings.TrimSuffix(s, "\n"))
			continue
		}
		b.WriteString(l)
	}
	return b.String(), steps
}

// TestStepComments: each step node is named in a comment, a step drawn
// twice (a helper called twice, a deferred step) under each of its nodes.
func TestStepComments(t *testing.T) {
	g, steps := splitSteps(draw(t, `
func W() {
	defer UndoTx()
	h()
	h()
}
func h() {
	A()
	if x {
		return
	}
}`, "W", nil))
	if strings.Count(g, "n3 --> n4\n") != 1 || strings.Count(g, "n4 --> n5\n") != 1 {
		t.Errorf("the two exits of the helper draw the same edge twice or none:\n%s", g)
	}
	want := []string{"n3 A", "n4 A", "n5 UndoTx"}
	if strings.Join(steps, "|") != strings.Join(want, "|") {
		t.Errorf("step comments %q, want %q", steps, want)
	}
}

// TestHostileText: a label holding quotes, markup, pipes or Mermaid's own
// entity mark stays inside its quotes, and a long condition is cut.
func TestHostileText(t *testing.T) {
	got := draw(t, `
func W(s string) {
	if s == "\"]) --> x[<b>|#quot;`+"`"+`" || s == "a very long condition text that goes on" {
		Step()
	}
	for again() {
		Step2()
	}
}
func again() bool { Probe(); return again() }`, "W", nil)
	for _, line := range strings.Split(strings.TrimSpace(got), "\n")[1:] {
		// Outside the quoted labels only ids, shapes and arrows remain.
		parts := strings.Split(line, `"`)
		if len(parts)%2 != 1 {
			t.Fatalf("unbalanced quotes in %q", line)
		}
		for i := 1; i < len(parts); i += 2 {
			if strings.ContainsAny(parts[i], "<>|`") || strings.Contains(strings.ReplaceAll(parts[i], "#35;", ""), "#quot;#") {
				t.Errorf("label %q of line %q is not escaped", parts[i], line)
			}
		}
	}
	if !strings.Contains(got, "…") {
		t.Errorf("the long condition is not cut:\n%s", got)
	}
	if strings.Count(got, `["again"]`) != 1 || !strings.Contains(got, `(["↻ again"])`) {
		t.Errorf("the recursive helper is not drawn once:\n%s", got)
	}
	if again := draw(t, "func W() { if x { A() }; B() }", "W", nil); again != draw(t, "func W() { if x { A() }; B() }", "W", nil) {
		t.Error("two drawings of one source differ")
	}
}

// BenchmarkMermaid draws a workflow of 100 loops of 4 steps under an if.
func BenchmarkMermaid(b *testing.B) {
	var src strings.Builder
	src.WriteString("func W(xs []int) error {\n")
	for i := 0; i < 100; i++ {
		src.WriteString("\tfor _, x := range xs {\n\t\tif x > 1 {\n\t\t\tA(x)\n\t\t\tB(x)\n\t\t} else {\n\t\t\tC(x)\n\t\t}\n\t\tif err := D(x); err != nil {\n\t\t\treturn err\n\t\t}\n\t}\n")
	}
	src.WriteString("\treturn nil\n}\n")
	t := &testing.T{}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if g := draw(t, src.String(), "W", nil); !strings.Contains(g, "flowchart TD") {
			b.Fatal(g)
		}
	}
}
