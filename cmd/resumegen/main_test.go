package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

const flowSource = `package flow

import "context"

//go:generate go tool resumegen

//resume:workflow
func Flow(ctx context.Context, id string) (int, error) {
	n, err := Count(ctx, id)
	if err != nil {
		return 0, err
	}
	return n, Done(ctx, n)
}

//resume:step retry=3 backoff=1s..1m
func Count(ctx context.Context, id string) (int, error) { return len(id), nil }

//resume:step once
func Done(ctx context.Context, n int) error { return nil }
`

// TestCommand builds resumegen and runs it on a fixture module the way a
// user and CI do: generate, -check fresh and stale, -manifest, stale file
// deletion, an error with its position and exit status, and a workflow in
// a test file refused under -check too.
func TestCommand(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "resumegen")
	build := exec.Command("go", "build", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build resumegen: %v\n%s", err, out)
	}

	mod := t.TempDir()
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(mod, "go.sum"), string(sum))
	write(t, filepath.Join(mod, "go.mod"), fmt.Sprintf("module example.com/fixture\n\ngo 1.24\n\nrequire github.com/resumegen/resumegen v0.0.0\n\nreplace github.com/resumegen/resumegen => %s\n", root))
	src := filepath.Join(mod, "flow", "flow.go")
	out := filepath.Join(mod, "flow", "flow_resume.go")
	write(t, src, flowSource)
	env := append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off", "GOPROXY=off")
	resumegen := func(args ...string) (code int, stdout, stderr string) {
		t.Helper()
		cmd := exec.Command(bin, args...)
		cmd.Dir = mod
		cmd.Env = env
		var o, e bytes.Buffer
		cmd.Stdout, cmd.Stderr = &o, &e
		err := cmd.Run()
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode(), o.String(), e.String()
		} else if err != nil {
			t.Fatal(err)
		}
		return 0, o.String(), e.String()
	}

	// Generate, then the output is fresh and builds.
	if code, _, stderr := resumegen("./..."); code != 0 {
		t.Fatalf("generate: exit %d\n%s", code, stderr)
	}
	generated, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	vet := exec.Command("go", "vet", "./...")
	vet.Dir, vet.Env = mod, env
	if b, err := vet.CombinedOutput(); err != nil {
		t.Fatalf("go vet the generated code: %v\n%s", err, b)
	}
	if code, stdout, stderr := resumegen("-check", "./..."); code != 0 || stdout != "" {
		t.Fatalf("-check on fresh output: exit %d\n%s%s", code, stdout, stderr)
	}

	// -manifest prints the workflow as JSON.
	code, stdout, stderr := resumegen("-manifest", "./flow")
	if code != 0 {
		t.Fatalf("-manifest: exit %d\n%s", code, stderr)
	}
	var manifest []struct {
		Package, Workflow, Version, ID string
		Steps                          []struct{ Name, Callee, Signature, Policy string }
	}
	if err := json.Unmarshal([]byte(stdout), &manifest); err != nil {
		t.Fatalf("-manifest output is not JSON: %v\n%s", err, stdout)
	}
	if len(manifest) != 1 || manifest[0].Workflow != "Flow" || manifest[0].Package != "example.com/fixture/flow" ||
		manifest[0].ID != "example.com/fixture/flow.Flow" ||
		len(manifest[0].Steps) != 2 || manifest[0].Steps[1].Policy != "once" ||
		manifest[0].Steps[0].Callee != "example.com/fixture/flow.Count" ||
		manifest[0].Steps[0].Signature != "func(context.Context, string) (int, error)" ||
		!strings.Contains(string(generated), manifest[0].Version) {
		t.Errorf("-manifest:\n%s", stdout)
	}

	// -graph prints the step graph the generated file holds, and
	// excludes the other modes.
	code, stdout, stderr = resumegen("-graph", "./flow")
	wantGraph := "%% example.com/fixture/flow.Flow (version " + manifest[0].Version + ")\n" +
		"flowchart TD\n" +
		"  n1([\"Flow\"])\n  n2([\"end\"])\n  n3[\"Count\"]\n  n4[\"Done (once)\"]\n" +
		"  n1 --> n3\n  n3 --> n4\n  n3 -->|\"err != nil\"| n2\n  n4 --> n2\n" +
		"  %% step n3 Count\n  %% step n4 Done\n"
	if code != 0 || stdout != wantGraph {
		t.Errorf("-graph: exit %d\n%s\nwant\n%s%s", code, stdout, wantGraph, stderr)
	}
	if body, _, _ := strings.Cut(strings.SplitN(wantGraph, "\n", 2)[1], "\x00"); !strings.Contains(string(generated), "const resumeFlowGraph = `"+body+"`") {
		t.Errorf("the generated file does not hold the graph -graph prints:\n%s", generated)
	}
	// Call sites relative to their declaration (lines 9 and 13, Flow's func
	// keyword on line 8): an edit above Flow leaves the file alone.
	if !strings.Contains(string(generated), `Pos: "flow/flow.go:Flow+1"`) || !strings.Contains(string(generated), `Pos: "flow/flow.go:Flow+5"`) {
		t.Errorf("the generated file does not hold the steps' call sites:\n%s", generated)
	}
	if code, _, stderr := resumegen("-graph", "-manifest", "./flow"); code != 2 || !strings.Contains(stderr, "exclude each other") {
		t.Errorf("-graph -manifest: exit %d\n%s", code, stderr)
	}

	// A changed step: -check fails with a diff and writes nothing.
	write(t, src, strings.Replace(flowSource, "//resume:step once", "//resume:step tx", 1))
	code, stdout, _ = resumegen("-check", "./...")
	if code != 1 || !strings.Contains(stdout, "--- a/flow/flow_resume.go") || !strings.Contains(stdout, "+\t\t{Name: \"Done\"") {
		t.Errorf("-check on stale output: exit %d\n%s", code, stdout)
	}
	if now, _ := os.ReadFile(out); !bytes.Equal(now, generated) {
		t.Error("-check changed the generated file")
	}

	// An error: exit 1, file:line:col, nothing written.
	write(t, src, strings.Replace(flowSource, "//resume:step once", "//resume:step once tx", 1))
	code, _, stderr = resumegen("./...")
	if code != 1 || !regexp.MustCompile(`(?m)^flow/flow\.go:19:1: //resume:step once tx: options once and tx exclude each other`).MatchString(stderr) {
		t.Errorf("error case: exit %d\n%s", code, stderr)
	}
	if now, _ := os.ReadFile(out); !bytes.Equal(now, generated) {
		t.Error("a failed run changed the generated file")
	}

	// A workflow in a test file, which resumegen does not load: refused,
	// under -check too, at its position.
	write(t, src, flowSource)
	testFile := filepath.Join(mod, "flow", "flow_test.go")
	write(t, testFile, "package flow\n\nimport \"context\"\n\n//resume:workflow\nfunc Replay(ctx context.Context) error { return Done(ctx, 1) }\n")
	for _, args := range [][]string{{"./..."}, {"-check", "./..."}} {
		code, stdout, stderr := resumegen(args...)
		if code != 1 || stdout != "" || !regexp.MustCompile(`(?m)^flow/flow_test\.go:5:1: //resume:workflow in a _test\.go file is not generated: move Replay to a non-test file`).MatchString(stderr) {
			t.Errorf("resumegen %s with a workflow in a test file: exit %d\n%s%s", strings.Join(args, " "), code, stdout, stderr)
		}
	}
	if now, _ := os.ReadFile(out); !bytes.Equal(now, generated) {
		t.Error("a run refusing a test file's workflow changed the generated file")
	}
	if err := os.Remove(testFile); err != nil {
		t.Fatal(err)
	}

	// The workflow is gone: the output is stale, -check says so, a run
	// deletes it.
	write(t, src, strings.Replace(flowSource, "//resume:workflow\n", "", 1))
	code, stdout, _ = resumegen("-check", "./...")
	if code != 1 || !strings.Contains(stdout, "+++ /dev/null") {
		t.Errorf("-check with a stale file: exit %d\n%s", code, stdout)
	}
	if code, _, stderr := resumegen("./..."); code != 0 {
		t.Fatalf("regenerate: exit %d\n%s", code, stderr)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("stale %s was not deleted: %v", out, err)
	}
}

func write(t testing.TB, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
