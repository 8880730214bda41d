package generator

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOtherModule generates a workflow calling code of another module (a
// replace directive's): a function of it declared //resume:step is a
// step, with its directive's options, and a function of it that calls
// such a step is refused with the way out, since the generator does not
// read other modules' code by types and cannot journal their steps.
func TestOtherModule(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	writeFiles(t, dir, map[string]string{
		"go.sum":     string(sum),
		"go.mod":     fmt.Sprintf("module example.com/app\n\ngo 1.24\n\nrequire (\n\tgithub.com/resumegen/resumegen v0.0.0\n\texample.com/lib v0.0.0\n)\n\nreplace github.com/resumegen/resumegen => %s\n\nreplace example.com/lib => ./lib\n", root),
		"lib/go.mod": "module example.com/lib\n\ngo 1.24\n",
		"lib/lib.go": `package lib

import "context"

// Send is a step another module declares.
//
//resume:step once
func Send(ctx context.Context, to string) error { return nil }

// SendAll calls it for each recipient.
func SendAll(ctx context.Context, to []string) error {
	for _, t := range to {
		if err := Send(ctx, t); err != nil {
			return err
		}
	}
	return nil
}
`,
		"app.go": `package app

import (
	"context"

	"example.com/lib"
)

//resume:workflow
func W(ctx context.Context, to []string) error {
	if err := lib.Send(ctx, "ops"); err != nil {
		return err
	}
	return lib.SendAll(ctx, to)
}
`,
	})
	res, err := Generate(Config{Dir: dir, Patterns: []string{"."}, Env: testEnv})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range res.Diagnostics {
		got = append(got, d.String())
	}
	want := "app.go:14:9: lib.SendAll is a function of another module that calls step Send: the generator follows calls into the packages of the main module only, so that step would not be journaled; mark this call //resume:step to journal it as one step, or move the helper into this module"
	if len(got) != 1 || got[0] != want {
		t.Fatalf("diagnostics:\n%s\nwant:\n%s", strings.Join(got, "\n"), want)
	}
	var steps []string
	for _, w := range res.Workflows {
		for _, s := range w.Steps {
			steps = append(steps, s.Name+" "+s.Policy)
		}
	}
	if strings.Join(steps, ", ") != "Send once" {
		t.Errorf("steps = %v, want [Send once]: another module's declared step is a step", steps)
	}
}
