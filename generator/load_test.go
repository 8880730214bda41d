package generator

import (
	"github.com/resumegen/resumegen/generator/internal/load"

	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLoadErrors checks that packages the generator type-checks itself
// report a broken import at the import, with the reason, and type errors
// at their position, like go build.
func TestLoadErrors(t *testing.T) {
	dir := filepath.Join(testModule, "loaderr")
	writeFiles(t, dir, map[string]string{
		"a/a.go": "package a\n\nimport (\n\t\"context\"\n\n\t\"example.com/golden/loaderr/b\"\n\t\"example.com/nope\"\n)\n\nvar _, _ = b.X, nope.Y\n\nvar z int = \"s\"\n\n//resume:workflow\nfunc W(ctx context.Context) error { return nil }\n",
		"b/b.go": "package b\n\nvar X int = \"s\"\n",
	})
	res, err := Generate(Config{Dir: dir, Patterns: []string{"./a"}, Env: testEnv})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range res.Diagnostics {
		got = append(got, d.String())
	}
	all := strings.Join(got, "\n")
	for _, want := range []string{
		"a/a.go:6:2: could not import example.com/golden/loaderr/b (",
		"a/a.go:7:2: could not import example.com/nope (",
		"a/a.go:12:13: cannot use \"s\"",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("diagnostics lack %q:\n%s", want, all)
		}
	}
	if len(res.Files) != 0 {
		t.Error("files generated for a package with errors")
	}
}

// TestLoadDiamond generates a module shaped as a diamond, with patterns
// naming a and c but not b: a imports b and c, b imports c, and a passes
// a c value to b and calls a step of c. b must see the c that a sees (one
// package, one identity): were b loaded from export data with its own c,
// "cannot use m (variable of type c.Money) as c.Money value" would be
// reported. The generated code must compile and vet.
func TestLoadDiamond(t *testing.T) {
	dir := filepath.Join(testModule, "diamond")
	writeFiles(t, dir, map[string]string{
		"a/a.go": `package a

import (
	"context"

	"example.com/golden/diamond/b"
	"example.com/golden/diamond/c"
)

//resume:workflow
func Pay(ctx context.Context, m c.Money) (c.Money, error) {
	m = b.Double(m)
	var box b.Box = b.Wrap(m)
	return c.Charge(ctx, box.M)
}
`,
		"b/b.go": `package b

import "example.com/golden/diamond/c"

// Box holds a c value.
type Box struct{ M c.Money }

// Double doubles m.
func Double(m c.Money) c.Money { return c.Money{Cents: 2 * m.Cents} }

// Wrap boxes m.
func Wrap(m c.Money) Box { return Box{M: m} }
`,
		"c/c.go": `package c

import "context"

// Money is an amount.
type Money struct{ Cents int }

//resume:step
func Charge(ctx context.Context, m Money) (Money, error) { return m, nil }

//resume:workflow
func Refund(ctx context.Context, m Money) (Money, error) { return Charge(ctx, m) }
`,
	})
	for _, patterns := range [][]string{{"./a", "./c"}, {"./c", "./a"}, {"./..."}, {"./a"}} {
		t.Run(strings.Join(patterns, " "), func(t *testing.T) {
			res, err := Generate(Config{Dir: dir, Patterns: patterns, Env: testEnv})
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range res.Diagnostics {
				t.Errorf("diagnostic: %s", d)
			}
			var pay *Workflow
			for _, w := range res.Workflows {
				if w.Name == "Pay" {
					pay = w
				}
			}
			if pay == nil {
				t.Fatalf("workflow Pay not found in %d workflows", len(res.Workflows))
			}
			if len(pay.Steps) != 1 || pay.Steps[0].Name != "Charge" {
				t.Errorf("Pay's steps: %+v, want the one step Charge of package c", pay.Steps)
			}
			if _, err := res.Write(); err != nil {
				t.Fatal(err)
			}
			goCmd(t, dir, "build", "./...")
			goCmd(t, dir, "vet", "./...")
		})
	}
}

// TestLoadSkipsPackagesWithoutDirectives names, beside a workflow package,
// a package with a type error and no directive, and a package holding
// only stale output: neither is type-checked (the type error is go
// build's to report, not the generator's), and the stale file is still
// found. A near miss of a directive in an otherwise plain package is
// still seen.
func TestLoadSkipsPackagesWithoutDirectives(t *testing.T) {
	dir := filepath.Join(testModule, "skip")
	writeFiles(t, dir, map[string]string{
		"flow/flow.go":      "package flow\n\nimport \"context\"\n\n//resume:workflow\nfunc W(ctx context.Context) error { return S(ctx) }\n\n//resume:step\nfunc S(ctx context.Context) error { return nil }\n",
		"broken/b.go":       "package broken\n\n// Resume: no directive here, only prose.\nvar X int = \"not an int\"\n",
		"old/old.go":        "package old\n\n// X was a workflow once.\nfunc X() {}\n",
		"old/old_resume.go": load.GeneratedHeader + "\n\npackage old\n\nfunc gone() { undefined() }\n",
	})
	res, err := Generate(Config{Dir: dir, Patterns: []string{"./..."}, Env: testEnv})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range res.Diagnostics {
		t.Errorf("diagnostic for a package without directives: %s", d)
	}
	if len(res.Files) != 1 || !strings.HasSuffix(res.Files[0].Path, filepath.Join("flow", "flow_resume.go")) {
		t.Errorf("files %v, want flow/flow_resume.go", res.Files)
	}
	if len(res.Stale) != 1 || !strings.HasSuffix(res.Stale[0], filepath.Join("old", "old_resume.go")) {
		t.Errorf("stale %v, want old/old_resume.go", res.Stale)
	}

	// A near miss makes the package one to check: it is reported.
	writeFiles(t, dir, map[string]string{
		"broken/b.go": "package broken\n\nimport \"context\"\n\n// resume:step\nfunc S(ctx context.Context) error { return nil }\n",
	})
	res, err = Generate(Config{Dir: dir, Patterns: []string{"./..."}, Env: testEnv})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range res.Diagnostics {
		got = append(got, d.String())
	}
	all := strings.Join(got, "\n")
	for _, want := range []string{"broken/b.go:5:1: // resume:step: with a space after //"} {
		if !strings.Contains(all, want) {
			t.Errorf("diagnostics lack %q:\n%s", want, all)
		}
	}
}

// TestLoadBrokenBetween: a package outside the patterns, between two
// checked ones, that does not type-check is reported at its import with
// the reason, not as a package of the user's to generate.
func TestLoadBrokenBetween(t *testing.T) {
	dir := filepath.Join(testModule, "between")
	writeFiles(t, dir, map[string]string{
		"a/a.go": "package a\n\nimport (\n\t\"context\"\n\n\t\"example.com/golden/between/b\"\n)\n\nvar _ = b.X\n\n//resume:workflow\nfunc W(ctx context.Context) error { return nil }\n",
		"b/b.go": "package b\n\nimport \"example.com/golden/between/c\"\n\nvar X int = c.Y\n",
		"c/c.go": "package c\n\n//resume:step\nfunc S() error { return nil }\n\nvar Y = \"s\"\n",
	})
	res, err := Generate(Config{Dir: dir, Patterns: []string{"./a", "./c"}, Env: testEnv})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range res.Diagnostics {
		got = append(got, d.String())
	}
	all := strings.Join(got, "\n")
	if want := "a/a.go:6:2: could not import example.com/golden/between/b ("; !strings.Contains(all, want) {
		t.Errorf("diagnostics lack %q:\n%s", want, all)
	}
	if !strings.Contains(all, "cannot use c.Y") {
		t.Errorf("the import error does not say why:\n%s", all)
	}
}

// TestMissingRuntime generates in a module that does not require the
// runtime: the generated file would not build, so nothing is generated
// and the diagnostic gives the go get to run, whether the go command may
// update go.mod (-mod=mod, as the tests run) or not (the default).
func TestMissingRuntime(t *testing.T) {
	for _, goflags := range []string{"GOFLAGS=-mod=mod", "GOFLAGS="} {
		t.Run(goflags, func(t *testing.T) {
			dir := t.TempDir()
			writeFiles(t, dir, map[string]string{
				"go.mod":       "module example.com/norun\n\ngo 1.24\n",
				"flow/flow.go": "package flow\n\nimport \"context\"\n\n//resume:workflow\nfunc W(ctx context.Context) error { return S(ctx) }\n\n//resume:step\nfunc S(ctx context.Context) error { return nil }\n",
			})
			env := append(os.Environ(), goflags, "GOWORK=off", "GOPROXY=off")
			res, err := Generate(Config{Dir: dir, Patterns: []string{"./..."}, Env: env})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Files) != 0 {
				t.Errorf("generated %d files that cannot build", len(res.Files))
			}
			if len(res.Diagnostics) != 1 {
				t.Fatalf("diagnostics %v, want one", res.Diagnostics)
			}
			want := "go.mod:1:1: module example.com/norun does not require github.com/resumegen/resumegen, whose runtime the code generated for example.com/norun/flow imports: run `go get github.com/resumegen/resumegen/runtime/resume`"
			if got := res.Diagnostics[0].String(); !strings.HasPrefix(got, want) {
				t.Errorf("diagnostic\n%s\nwant it to start with\n%s", got, want)
			}
			mod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(mod), "resumegen") {
				t.Errorf("go.mod was changed:\n%s", mod)
			}
		})
	}
}

// TestNoStepsWarning: a workflow without steps is generated, with a
// warning at its name; a workflow whose only steps are child runs is not
// warned about.
func TestNoStepsWarning(t *testing.T) {
	dir := filepath.Join(testModule, "nosteps")
	writeFiles(t, dir, map[string]string{
		"flow.go": "package nosteps\n\nimport \"context\"\n\n//resume:workflow\nfunc Empty(ctx context.Context, n int) (int, error) {\n\treturn n + 1, nil\n}\n\n//resume:workflow\nfunc Parent(ctx context.Context, n int) (int, error) {\n\treturn Empty(ctx, n)\n}\n",
	})
	res := generateIn(t, dir)
	for _, d := range res.Diagnostics {
		t.Errorf("diagnostic: %s", d)
	}
	if len(res.Files) != 1 {
		t.Errorf("%d files generated, want 1", len(res.Files))
	}
	if len(res.Warnings) != 1 {
		t.Fatalf("warnings %v, want one", res.Warnings)
	}
	if got, want := res.Warnings[0].String(), "flow.go:6:6: workflow Empty has no steps"; !strings.HasPrefix(got, want) {
		t.Errorf("warning %q, want it to start with %q", got, want)
	}
}
