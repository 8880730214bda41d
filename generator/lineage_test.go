package generator

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// lineageSrc is a package whose workflow Order runs the steps listed, in
// order, each a step function of the same signature, and the further
// functions given.
func lineageSrc(directive string, steps ...string) string {
	return "package shop\n\nimport \"context\"\n\n" + workflowFunc(directive, "Order", steps...) + stepDecls()
}

// workflowFunc is a workflow function name, marked with directive, that
// runs steps in order.
func workflowFunc(directive, name string, steps ...string) string {
	var b strings.Builder
	b.WriteString(directive + "\nfunc " + name + "(ctx context.Context, n int) error {\n")
	for _, s := range steps {
		b.WriteString("\tif err := " + s + "(ctx, n); err != nil {\n\t\treturn err\n\t}\n")
	}
	b.WriteString("\treturn nil\n}\n")
	return b.String()
}

func stepDecls() string {
	var b strings.Builder
	for _, s := range stepFuncs {
		b.WriteString("\n//resume:step\nfunc " + s + "(ctx context.Context, n int) error { return nil }\n")
	}
	return b.String()
}

var stepFuncs = []string{"Plan", "Charge", "Pay", "Ship", "Notify"}

// regenerate writes files into dir, runs the generator there, writes
// what it generated and returns the result; diagnostics fail the test.
func regenerate(t *testing.T, dir string, files map[string]string) *Result {
	t.Helper()
	writeFiles(t, dir, files)
	res := generateIn(t, dir)
	if len(res.Diagnostics) > 0 {
		t.Fatalf("diagnostics: %v", res.Diagnostics)
	}
	if _, err := res.Write(); err != nil {
		t.Fatal(err)
	}
	return res
}

func workflowOf(t *testing.T, res *Result, name string) *Workflow {
	t.Helper()
	for _, w := range res.Workflows {
		if w.Name == name {
			return w
		}
	}
	t.Fatalf("no workflow %s in %d", name, len(res.Workflows))
	return nil
}

// TestLineageFollowsTheGeneratedFile: each regeneration after a step list
// changed puts the version the generated file had on top of the lineage
// recorded there; an unchanged package regenerates the same bytes; a
// revert leaves the workflow's own version out; the generated file
// records a lineage only once there is one, one version a line. The lineage survives the workflow moving to another file of the
// package and a name= added to it, and takes in the version an
// old-version-of= copy keeps.
func TestLineageFollowsTheGeneratedFile(t *testing.T) {
	dir := filepath.Join(testModule, "lineage", "shop")
	order := "//resume:workflow"
	v1 := workflowOf(t, regenerate(t, dir, map[string]string{"order.go": lineageSrc(order, "Plan", "Charge")}), "Order")
	if len(v1.Lineage) != 0 {
		t.Fatalf("a workflow generated for the first time has lineage %v", v1.Lineage)
	}
	out := filepath.Join(dir, "order_resume.go")
	first, _ := os.ReadFile(out)
	if strings.Contains(string(first), "Lineage") {
		t.Fatalf("without a lineage the file should record none:\n%s", first)
	}

	v2 := workflowOf(t, regenerate(t, dir, map[string]string{"order.go": lineageSrc(order, "Plan", "Charge", "Ship")}), "Order")
	if !slices.Equal(v2.Lineage, []string{v1.Version}) || v2.Definition().Lineage[0] != v1.Version {
		t.Fatalf("after a step was appended: lineage %v, want [%s]", v2.Lineage, v1.Version)
	}
	second, _ := os.ReadFile(out)
	if !strings.Contains(string(second), "\tLineage: []string{\n\t\t\""+v1.Version+"\",\n\t},\n") {
		t.Fatalf("the file does not record the lineage one version a line:\n%s", second)
	}
	if res := generateIn(t, dir); len(res.Files) != 1 || string(res.Files[0].Content) != string(second) {
		t.Fatalf("regenerating an unchanged package changed its generated file")
	}

	v3 := workflowOf(t, regenerate(t, dir, map[string]string{"order.go": lineageSrc(order, "Plan", "Charge", "Ship", "Notify")}), "Order")
	if want := []string{v2.Version, v1.Version}; !slices.Equal(v3.Lineage, want) {
		t.Fatalf("after a second change: lineage %v, want %v", v3.Lineage, want)
	}
	back := workflowOf(t, regenerate(t, dir, map[string]string{"order.go": lineageSrc(order, "Plan", "Charge")}), "Order")
	if want := []string{v3.Version, v2.Version}; back.Version != v1.Version || !slices.Equal(back.Lineage, want) {
		t.Fatalf("reverted to V1's steps: version %s lineage %v, want %s and %v (its own version left out)", back.Version, back.Lineage, v1.Version, want)
	}

	// Moved to another file: the lineage is read from the file it leaves.
	if err := os.Remove(filepath.Join(dir, "order.go")); err != nil {
		t.Fatal(err)
	}
	moved := regenerate(t, dir, map[string]string{"checkout.go": lineageSrc(order, "Plan", "Charge", "Ship")})
	if w := workflowOf(t, moved, "Order"); !slices.Equal(w.Lineage, []string{v1.Version, v3.Version}) {
		t.Fatalf("moved to checkout.go: lineage %v, want [%s %s] (V2 is its own version again)", w.Lineage, v1.Version, v3.Version)
	}
	if len(moved.Stale) != 1 || filepath.Base(moved.Stale[0]) != "order_resume.go" {
		t.Fatalf("stale files %v, want order_resume.go", moved.Stale)
	}
	if _, err := os.Stat(moved.Stale[0]); !os.IsNotExist(err) {
		t.Fatalf("the stale order_resume.go was not deleted: %v", err)
	}

	// name= added: the recorded identity is now an alias.
	named := workflowOf(t, regenerate(t, dir, map[string]string{"checkout.go": lineageSrc("//resume:workflow name=shop.Order", "Plan", "Charge", "Ship", "Pay")}), "Order")
	if named.ID != "shop.Order" || !slices.Equal(named.Lineage, []string{v2.Version, v1.Version, v3.Version}) {
		t.Fatalf("with name=: identity %s lineage %v, want shop.Order and [%s %s %s]", named.ID, named.Lineage, v2.Version, v1.Version, v3.Version)
	}

	// The current version kept as an old version beside a new one.
	src := "package shop\n\nimport \"context\"\n\n" + workflowFunc("//resume:workflow name=shop.Order", "Order", "Plan", "Charge", "Ship", "Notify") +
		"\n" + workflowFunc("//resume:workflow old-version-of=Order", "orderV4", "Plan", "Charge", "Ship", "Pay") + stepDecls()
	kept := regenerate(t, dir, map[string]string{"checkout.go": src})
	cur, old := workflowOf(t, kept, "Order"), workflowOf(t, kept, "orderV4")
	if old.Version != named.Version || cur.Lineage[0] != named.Version || !slices.Contains(cur.Lineage, v1.Version) {
		t.Fatalf("with the old version kept: current lineage %v, old version %s; want the old version first", cur.Lineage, old.Version)
	}
	if !slices.Equal(old.Lineage, named.Lineage) {
		t.Fatalf("the old version's lineage %v, want the one recorded for its version, %v", old.Lineage, named.Lineage)
	}
	// Without the generated file (deleted), the old version kept is all
	// the lineage there is.
	if err := os.Remove(filepath.Join(dir, "checkout_resume.go")); err != nil {
		t.Fatal(err)
	}
	lost := regenerate(t, dir, map[string]string{"checkout.go": src})
	if cur, old := workflowOf(t, lost, "Order"), workflowOf(t, lost, "orderV4"); !slices.Equal(cur.Lineage, []string{old.Version}) || len(old.Lineage) != 0 {
		t.Fatalf("generated afresh: current lineage %v, old version's %v; want [%s] and none", cur.Lineage, old.Lineage, old.Version)
	}
}

// TestLikelyRenameWarned: regenerating after the step Charge became Pay
// without renamed-from= (same place, same signature) warns at the call,
// with the fix; with renamed-from=Charge, or for another signature, it
// does not. The file is written either way.
func TestLikelyRenameWarned(t *testing.T) {
	dir := filepath.Join(testModule, "lineage", "rename")
	order := "//resume:workflow"
	regenerate(t, dir, map[string]string{"order.go": lineageSrc(order, "Plan", "Charge")})
	plain := lineageSrc(order, "Plan", "Pay")
	writeFiles(t, dir, map[string]string{"order.go": plain})
	res := generateIn(t, dir)
	if len(res.Warnings) != 1 || len(res.Files) != 1 {
		t.Fatalf("warnings %v, files %d; want one warning and the file", res.Warnings, len(res.Files))
	}
	w := res.Warnings[0].String()
	for _, want := range []string{"order.go:10:12: step Pay looks like step Charge of order_resume.go renamed (the same callee and signature at the same place, without renamed-from=)",
		"add renamed-from=Charge to its //resume:step directive", "resumectl runs accept-version"} {
		if !strings.Contains(w, want) {
			t.Errorf("warning %q does not say %q", w, want)
		}
	}
	declared := strings.Replace(plain, "//resume:step\nfunc Pay(", "//resume:step renamed-from=Charge\nfunc Pay(", 1)
	writeFiles(t, dir, map[string]string{"order.go": declared})
	if res := generateIn(t, dir); len(res.Warnings) != 0 {
		t.Errorf("with renamed-from=Charge: warnings %v", res.Warnings)
	}
	other := strings.Replace(plain, "func Pay(ctx context.Context, n int) error", "func Pay(ctx context.Context, n int64) error", 1)
	writeFiles(t, dir, map[string]string{"order.go": strings.Replace(other, "Pay(ctx, n)", "Pay(ctx, int64(n))", 1)})
	if res := generateIn(t, dir); len(res.Warnings) != 0 {
		t.Errorf("for a step of another signature: warnings %v", res.Warnings)
	}
}

// TestBrokenGeneratedFileWarned: a generated file that does not parse (a
// merge conflict) still does not block regeneration, and the generator
// says that the lineage it records may be lost.
func TestBrokenGeneratedFileWarned(t *testing.T) {
	dir := filepath.Join(testModule, "lineage", "broken")
	order := "//resume:workflow"
	regenerate(t, dir, map[string]string{"order.go": lineageSrc(order, "Plan")})
	res := regenerate(t, dir, map[string]string{"order.go": lineageSrc(order, "Plan", "Charge")})
	out := filepath.Join(dir, "order_resume.go")
	text, _ := os.ReadFile(out)
	conflicted := strings.Replace(string(text), "\tLineage: []string{\n", "<<<<<<< HEAD\n\tLineage: []string{\n", 1)
	writeFiles(t, dir, map[string]string{"order_resume.go": conflicted, "order.go": lineageSrc(order, "Plan", "Charge", "Ship")})
	again := generateIn(t, dir)
	if len(again.Diagnostics) != 0 || len(again.Files) != 1 {
		t.Fatalf("a conflicted generated file blocked regeneration: %v", again.Diagnostics)
	}
	if len(again.Warnings) != 1 || !strings.Contains(again.Warnings[0].String(), "order_resume.go") ||
		!strings.Contains(again.Warnings[0].String(), "cannot all be read") {
		t.Fatalf("warnings %v, want one naming order_resume.go", again.Warnings)
	}
	_ = res
}

// TestLineageAcrossPackages: a workflow moved to another package, its
// identity kept by name=, takes its lineage from the generated file of the
// package it left when both are generated in one run; descends-from=
// names versions no generated file records (a move from another module).
func TestLineageAcrossPackages(t *testing.T) {
	root := filepath.Join(testModule, "lineage", "moved")
	named := "//resume:workflow name=shop.Order"
	first := workflowOf(t, regenerate(t, filepath.Join(root, "old"), map[string]string{"order.go": lineageSrc(named, "Plan", "Charge")}), "Order")
	if err := os.Remove(filepath.Join(root, "old", "order.go")); err != nil {
		t.Fatal(err)
	}
	writeFiles(t, root, map[string]string{"new/order.go": strings.Replace(lineageSrc(named, "Plan", "Charge", "Ship"), "package shop", "package newshop", 1)})
	res, err := Generate(Config{Dir: root, Patterns: []string{"./..."}, Env: testEnv})
	if err != nil || len(res.Diagnostics) > 0 {
		t.Fatalf("generate: %v %v", err, res.Diagnostics)
	}
	moved := workflowOf(t, res, "Order")
	if moved.Package == first.Package || !slices.Equal(moved.Lineage, []string{first.Version}) {
		t.Fatalf("moved from %s to %s: lineage %v, want [%s]", first.Package, moved.Package, moved.Lineage, first.Version)
	}
	if len(res.Stale) != 1 || !strings.HasSuffix(res.Stale[0], filepath.Join("old", "order_resume.go")) {
		t.Fatalf("stale %v, want the old package's generated file", res.Stale)
	}

	// Alone, the new package cannot see where the workflow came from:
	// descends-from= says it.
	alone := filepath.Join(testModule, "lineage", "alone")
	src := strings.Replace(lineageSrc(named+" descends-from="+first.Version, "Plan", "Charge", "Ship"), "package shop", "package alone", 1)
	w := workflowOf(t, regenerate(t, alone, map[string]string{"order.go": src}), "Order")
	if !slices.Equal(w.Lineage, []string{first.Version}) {
		t.Fatalf("with descends-from=%s: lineage %v", first.Version, w.Lineage)
	}
	again := workflowOf(t, regenerate(t, alone, map[string]string{"order.go": src}), "Order")
	if !slices.Equal(again.Lineage, w.Lineage) {
		t.Fatalf("regenerated with descends-from= kept: lineage %v, want %v unchanged", again.Lineage, w.Lineage)
	}
}
