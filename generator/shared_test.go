package generator

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// sharedUtil is a package of helpers that two workflow packages call.
const sharedUtil = `package util

import "context"

// A calls step S.
func A(ctx context.Context) error { return S(ctx) }

// B calls step S twice.
func B(ctx context.Context) error {
	if err := S(ctx); err != nil { //resume:step name=S1
		return err
	}
	return S(ctx) //resume:step name=S2
}

// S is a step.
//
//resume:step
func S(ctx context.Context) error { return nil }
`

func sharedCaller(pkg, helper string) string {
	return `package ` + pkg + `

import (
	"context"

	"example.com/golden/sharedkeep/util"
)

//resume:workflow
func W(ctx context.Context) error { return util.` + helper + `(ctx) }
`
}

// TestSharedCopiesKept generates, from the workflows of one package, the
// shared copies of a helpers' package that a second package's workflows
// also call: the run, which does not model the second package, keeps the
// copies its generated file records for it, so the second package still
// builds. A run of the second package, once it calls another helper, drops
// the copy only it called; a run of both writes what a run of each wrote
// last, and builds.
func TestSharedCopiesKept(t *testing.T) {
	dir := filepath.Join(testModule, "sharedkeep")
	writeFiles(t, dir, map[string]string{
		"util/util.go": sharedUtil,
		"one/one.go":   sharedCaller("one", "A"),
		"two/two.go":   sharedCaller("two", "B"),
	})
	gen := func(patterns ...string) {
		t.Helper()
		res, err := Generate(Config{Dir: dir, Patterns: patterns, Env: testEnv})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Diagnostics) > 0 {
			t.Fatalf("%v: diagnostics: %v", patterns, res.Diagnostics)
		}
		if _, err := res.Write(); err != nil {
			t.Fatal(err)
		}
	}
	copies := func() string {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(dir, "util", "util_resume.go"))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	gen("./one", "./two")
	both := copies()
	for _, want := range []string{"func Resume_A(", "func Resume_B(", "// For example.com/golden/sharedkeep/one: A.", "// For example.com/golden/sharedkeep/two: B."} {
		if !strings.Contains(both, want) {
			t.Fatalf("shared copies lack %q:\n%s", want, both)
		}
	}
	gen("./one")
	if got := copies(); got != both {
		t.Fatalf("a run of ./one alone changed the copies two calls:\n%s", unifiedDiff("before", "after", []byte(both), []byte(got), true))
	}
	goCmd(t, dir, "vet", "./...")

	// two now calls A too: a run of ./two alone drops B.
	writeFiles(t, dir, map[string]string{"two/two.go": sharedCaller("two", "A")})
	gen("./two")
	got := copies()
	if strings.Contains(got, "Resume_B") || !strings.Contains(got, "// For example.com/golden/sharedkeep/two: A.") || !strings.Contains(got, "// For example.com/golden/sharedkeep/one: A.") {
		t.Fatalf("after two stopped calling B:\n%s", got)
	}
	goCmd(t, dir, "vet", "./...")

	// Neither calls util any more: the copies file is stale.
	writeFiles(t, dir, map[string]string{"one/one.go": strings.Replace(sharedCaller("one", "A"), "util.A(ctx)", "nil", 1), "two/two.go": strings.Replace(sharedCaller("two", "A"), "util.A(ctx)", "nil", 1)})
	for _, f := range []string{"one/one.go", "two/two.go"} {
		b, _ := os.ReadFile(filepath.Join(dir, f))
		writeFiles(t, dir, map[string]string{f: strings.Replace(string(b), "\n\t\"example.com/golden/sharedkeep/util\"\n", "", 1)})
	}
	res, err := Generate(Config{Dir: dir, Patterns: []string{"./..."}, Env: testEnv})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Diagnostics) > 0 {
		t.Fatalf("diagnostics: %v", res.Diagnostics)
	}
	if want := filepath.Join(dir, "util", "util_resume.go"); len(res.Stale) != 1 || res.Stale[0] != want {
		t.Errorf("stale = %v, want [%s]", res.Stale, want)
	}
}

// TestSharedCopiesKeepLineage regenerates a package of helpers that has
// workflows of its own from a run of another package only, which reaches
// one of its helpers: the helpers' generated file is rewritten (its shared
// copies, and with them its workflows), and still records the lineage of
// its own workflow, read from the file before it is rewritten, so the
// workers of the new code still take the runs of the version before.
func TestSharedCopiesKeepLineage(t *testing.T) {
	dir := filepath.Join(testModule, "sharedlineage")
	util := func(steps ...string) string {
		return lineageSrc("//resume:workflow", steps...) + "\n// A calls step Plan.\nfunc A(ctx context.Context) error { return Plan(ctx, 1) }\n"
	}
	app := `package app

import (
	"context"

	"example.com/golden/sharedlineage/shop"
)

//resume:workflow
func W(ctx context.Context) error { return shop.A(ctx) }
`
	v1 := workflowOf(t, regenerate(t, filepath.Join(dir, "shop"), map[string]string{"shop.go": util("Plan", "Charge")}), "Order")
	v2 := workflowOf(t, regenerate(t, filepath.Join(dir, "shop"), map[string]string{"shop.go": util("Plan", "Charge", "Ship")}), "Order")
	if len(v2.Lineage) != 1 || v2.Lineage[0] != v1.Version {
		t.Fatalf("lineage %v, want [%s]", v2.Lineage, v1.Version)
	}
	regenerate(t, filepath.Join(dir, "app"), map[string]string{"app.go": app})
	b, err := os.ReadFile(filepath.Join(dir, "shop", "shop_resume.go"))
	if err != nil {
		t.Fatal(err)
	}
	if got := string(b); !strings.Contains(got, "func Resume_A(") || !strings.Contains(got, "\tLineage: []string{\n\t\t\""+v1.Version+"\",\n\t},\n") {
		t.Fatalf("after a run of ./app, shop_resume.go lacks the shared copy of A or the lineage [%s] of Order:\n%s", v1.Version, got)
	}
	goCmd(t, dir, "vet", "./...")
}
