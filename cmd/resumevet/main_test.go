package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestVetTool builds resumevet and runs it under go vet -vettool on a
// module with one refused call: vet fails and prints resumegen's message
// at the call's position.
func TestVetTool(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a binary and runs go vet")
	}
	tmp := t.TempDir()
	tool := filepath.Join(tmp, "resumevet")
	if out, err := exec.Command("go", "build", "-o", tool, ".").CombinedOutput(); err != nil {
		t.Fatalf("build resumevet: %v\n%s", err, out)
	}
	mod := filepath.Join(tmp, "mod")
	files := map[string]string{
		"go.mod": "module example.com/vetme\n\ngo 1.24\n",
		"w.go": `package vetme

import (
	"context"
	"time"
)

//resume:workflow
func W(ctx context.Context) error {
	_ = time.Now()
	return S(ctx)
}

//resume:step
func S(ctx context.Context) error { return nil }
`,
	}
	for name, content := range files {
		if err := os.MkdirAll(mod, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(mod, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("go", "vet", "-vettool="+tool, "./...")
	cmd.Dir = mod
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=")
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("go vet passed, want the time.Now diagnostic:\n%s", out)
	}
	if want := "w.go:10:6: time.Now in a workflow body"; !strings.Contains(string(out), want) {
		t.Fatalf("go vet output lacks %q:\n%s", want, out)
	}
}
