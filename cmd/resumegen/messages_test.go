package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMessages runs the command in-process on two fixture modules: a
// workflow without steps is generated with a warning on stderr and exit
// status 0; a module that does not require the runtime gets the go get to
// run, exit status 1 and no file.
func TestMessages(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	const empty = "package flow\n\nimport \"context\"\n\n//resume:workflow\nfunc Empty(ctx context.Context) error { return nil }\n"
	t.Setenv("GOFLAGS", "-mod=mod")
	t.Setenv("GOWORK", "off")
	t.Setenv("GOPROXY", "off")
	run1 := func(t *testing.T, dir string) (int, string) {
		t.Helper()
		t.Chdir(dir)
		var stdout, stderr bytes.Buffer
		code := run([]string{"./..."}, &stdout, &stderr)
		return code, stderr.String()
	}

	t.Run("warning", func(t *testing.T) {
		mod := t.TempDir()
		write(t, filepath.Join(mod, "go.sum"), string(sum))
		write(t, filepath.Join(mod, "go.mod"), fmt.Sprintf("module example.com/fixture\n\ngo 1.24\n\nrequire github.com/resumegen/resumegen v0.0.0\n\nreplace github.com/resumegen/resumegen => %s\n", root))
		write(t, filepath.Join(mod, "flow", "flow.go"), empty)
		code, stderr := run1(t, mod)
		if code != 0 {
			t.Errorf("exit status %d, want 0; stderr:\n%s", code, stderr)
		}
		if want := "flow/flow.go:6:6: warning: workflow Empty has no steps"; !strings.HasPrefix(stderr, want) {
			t.Errorf("stderr %q, want it to start with %q", stderr, want)
		}
		if _, err := os.Stat(filepath.Join(mod, "flow", "flow_resume.go")); err != nil {
			t.Errorf("not generated: %v", err)
		}
	})

	t.Run("no requirement", func(t *testing.T) {
		mod := t.TempDir()
		write(t, filepath.Join(mod, "go.mod"), "module example.com/bare\n\ngo 1.24\n")
		write(t, filepath.Join(mod, "flow", "flow.go"), empty)
		code, stderr := run1(t, mod)
		if code != 1 {
			t.Errorf("exit status %d, want 1", code)
		}
		if want := "run `go get github.com/resumegen/resumegen/runtime/resume`"; !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
		if _, err := os.Stat(filepath.Join(mod, "flow", "flow_resume.go")); !os.IsNotExist(err) {
			t.Errorf("a file was written that cannot build (stat: %v)", err)
		}
	})
}
