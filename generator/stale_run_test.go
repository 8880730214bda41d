package generator

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// staleSource is a workflow with a helper that reaches a step, run once.
const staleSource = `package main

import (
	"context"
	"fmt"

	"github.com/resumegen/resumegen/runtime/resume"
)

// Greet greets twice.
//
//resume:workflow
func Greet(ctx context.Context, id string) (string, error) {
	if err := Say(ctx, "hello "+id); err != nil {
		return "", err
	}
	return "done", twice(ctx, id)
}

func twice(ctx context.Context, id string) error {
	return Say(ctx, "again "+id) //resume:step name=Again
}

func unrelated() int { return 1 }

//resume:step
func Say(ctx context.Context, msg string) error {
	logEffect("Say " + msg)
	return nil
}

func main() {
	ctx := context.Background()
	out, err := resume.Run(ctx, newEngine(ctx), "r-1", Greet, "e-1")
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	fmt.Println(out)
}
`

// TestStaleBodyRefused edits a generated program's source without
// regenerating and rebuilds it: an edit of the workflow's body or of a
// helper it copied makes the first start fail, naming the file and go
// generate, before any step runs; an edit of a comment, of the layout or
// of a function the generated code does not copy runs as before.
func TestStaleBodyRefused(t *testing.T) {
	buildProgram(t, "stalebody", staleSource)
	dir := filepath.Join(testModule, "stalebody")
	for _, tc := range []struct {
		name, old, new string
		stale          bool
	}{
		{"a print in the body", "\treturn \"done\", twice(ctx, id)", "\tfmt.Println(\"new\")\n\treturn \"done\", twice(ctx, id)", true},
		{"a new step call", "\treturn \"done\", twice(ctx, id)", "\t_ = Say(ctx, \"bye\")\n\treturn \"done\", twice(ctx, id)", true},
		{"the helper's body", `"again "+id`, `"again, "+id`, true},
		{"a call-site directive", "//resume:step name=Again", "//resume:step name=Again once", true},
		{"a comment", "// Greet greets twice.", "// Greet greets, twice.", false},
		{"the layout", `if err := Say(ctx, "hello "+id); err != nil {`, `if err := Say(ctx,
		"hello "+id,
	); err != nil {`, false},
		{"another function", "return 1 }", "return 2 }", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := strings.Replace(staleSource, tc.old, tc.new, 1)
			if src == staleSource {
				t.Fatal("the edit changes nothing")
			}
			writeFiles(t, dir, map[string]string{"main.go": src})
			t.Cleanup(func() { writeFiles(t, dir, map[string]string{"main.go": staleSource}) })
			bin := filepath.Join(t.TempDir(), "stalebody")
			goCmd(t, dir, "build", "-o", bin, ".") // no go generate
			db, effects := filepath.Join(t.TempDir(), "s.db"), filepath.Join(t.TempDir(), "effects")
			out, killed, err := runProgram(bin, db, effects)
			if killed || err != nil {
				t.Fatalf("run: %q, killed %v, %v", out, killed, err)
			}
			ran, _ := os.ReadFile(effects)
			if !tc.stale {
				if strings.TrimSpace(out) != "done" {
					t.Fatalf("an edit the generated code does not copy stopped the run: %q", out)
				}
				return
			}
			for _, want := range []string{"generated code is stale", "main.go changed since go generate", "main_resume.go would run an old copy", "run go generate"} {
				if !strings.Contains(out, want) {
					t.Errorf("output %q lacks %q", out, want)
				}
			}
			if len(ran) > 0 {
				t.Errorf("steps ran from a stale body: %q", ran)
			}
		})
	}
}
