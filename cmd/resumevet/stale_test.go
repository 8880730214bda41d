package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/resumegen/resumegen/generator"
)

// TestVetStale generates a module's code, then edits the workflow's body
// without regenerating: go vet -vettool=resumevet fails, naming the
// workflow, the generated file and go generate. Regenerating makes it
// pass again.
func TestVetStale(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a binary and runs go vet")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	tool := filepath.Join(tmp, "resumevet")
	if out, err := exec.Command("go", "build", "-o", tool, ".").CombinedOutput(); err != nil {
		t.Fatalf("build resumevet: %v\n%s", err, out)
	}
	mod := filepath.Join(tmp, "mod")
	src := `package vetme

import "context"

//resume:workflow
func W(ctx context.Context) error {
	return S(ctx)
}

//resume:step
func S(ctx context.Context) error { return nil }
`
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	write := func(name, content string) {
		t.Helper()
		if err := os.MkdirAll(mod, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(mod, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module example.com/vetme\n\ngo 1.24\n\nrequire github.com/resumegen/resumegen v0.0.0\n\nreplace github.com/resumegen/resumegen => "+root+"\n")
	write("go.sum", string(sum))
	write("w.go", src)
	env := append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod", "GOPROXY=off")
	generate := func() {
		t.Helper()
		res, err := generator.Generate(generator.Config{Dir: mod, Env: env})
		if err != nil || len(res.Diagnostics) > 0 {
			t.Fatalf("generate: %v %v", err, res.Diagnostics)
		}
		if _, err := res.Write(); err != nil {
			t.Fatal(err)
		}
	}
	vet := func() (string, error) {
		cmd := exec.Command("go", "vet", "-vettool="+tool, "./...")
		cmd.Dir, cmd.Env = mod, env
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	generate()
	if out, err := vet(); err != nil {
		t.Fatalf("go vet of freshly generated code failed: %v\n%s", err, out)
	}
	write("w.go", strings.Replace(src, "\treturn S(ctx)", "\tprintln(\"unreviewed\")\n\treturn S(ctx)", 1))
	out, err := vet()
	if err == nil {
		t.Fatalf("go vet passed on a stale generated body:\n%s", out)
	}
	for _, want := range []string{"w.go:6:6: workflow W: w_resume.go is stale: the body of W changed since go generate", "run go generate"} {
		if !strings.Contains(out, want) {
			t.Errorf("go vet output lacks %q:\n%s", want, out)
		}
	}
	write("w.go", strings.Replace(src, "\treturn S(ctx)", "\tif err := T(ctx); err != nil {\n\t\treturn err\n\t}\n\treturn S(ctx)", 1)+"\n//resume:step\nfunc T(ctx context.Context) error { return nil }\n")
	if out, err := vet(); err == nil || !strings.Contains(out, "is stale: it was generated for version") {
		t.Errorf("a new step without go generate: go vet %v:\n%s", err, out)
	}
	generate()
	if out, err := vet(); err != nil {
		t.Errorf("go vet after go generate: %v\n%s", err, out)
	}
}
