package generator

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// testModule is a temporary module shared by the tests of this package:
// each case is a package in a directory of its own, the module requires
// resumegen and replaces it with this repository, so generated code builds
// against the real runtime.
var testModule string

// testEnv is the environment of the go command in testModule: no network,
// no workspace, go.mod updated as needed.
var testEnv []string

func TestMain(m *testing.M) {
	dir, err := setupTestModule()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	testModule = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func setupTestModule() (string, error) {
	root, err := filepath.Abs("..")
	if err != nil {
		return "", err
	}
	dir, err := os.MkdirTemp("", "resumegen-test-")
	if err != nil {
		return "", err
	}
	gomod := fmt.Sprintf("module example.com/golden\n\ngo 1.24\n\nrequire github.com/resumegen/resumegen v0.0.0\n\nreplace github.com/resumegen/resumegen => %s\n", root)
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte(gomod), 0o644); err != nil {
		return "", err
	}
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, "go.sum"), sum, 0o644); err != nil {
		return "", err
	}
	testEnv = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off", "GOPROXY=off")
	return dir, nil
}

// writeFiles writes files (name → content) below dir.
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// goCmd runs the go command in dir of the test module.
func goCmd(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = testEnv
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// generateIn runs the generator on the package in dir.
func generateIn(t *testing.T, dir string) *Result {
	t.Helper()
	res, err := Generate(Config{Dir: dir, Patterns: []string{"."}, Env: testEnv})
	if err != nil {
		t.Fatal(err)
	}
	return res
}
