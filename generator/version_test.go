package generator

import (
	"crypto/sha256"
	"encoding/hex"
	"path/filepath"
	"strings"
	"testing"
)

// versionBase is the workflow the version variants edit.
const versionBase = `package p

import "context"

//resume:workflow
func W(ctx context.Context, in int) (int, error) {
	a, err := A(ctx, in)
	if err != nil {
		return 0, err
	}
	return a, B(ctx, a)
}

//resume:step
func A(ctx context.Context, n int) (int, error) { return n, nil }

//resume:step
func B(ctx context.Context, n int) error { return nil }

//resume:step
func C(ctx context.Context) error { return nil }
`

// TestVersion proves which edits move a workflow's version: changes to the
// step signature list do, everything else does not.
func TestVersion(t *testing.T) {
	variants := []struct {
		name    string
		edit    [][2]string // replacements applied to versionBase
		changes bool
	}{
		{"insert step", [][2]string{{"\treturn a, B(ctx, a)", "\tif err := C(ctx); err != nil {\n\t\treturn 0, err\n\t}\n\treturn a, B(ctx, a)"}}, true},
		{"reorder steps", [][2]string{{"\ta, err := A(ctx, in)\n", "\tif err := B(ctx, in); err != nil {\n\t\treturn 0, err\n\t}\n\ta, err := A(ctx, in)\n"}, {"return a, B(ctx, a)", "return a, nil"}}, true},
		{"parameter type", [][2]string{{"func B(ctx context.Context, n int) error", "func B(ctx context.Context, n int64) error"}, {"B(ctx, a)", "B(ctx, int64(a))"}}, true},
		{"result type", [][2]string{{"func A(ctx context.Context, n int) (int, error) { return n, nil }", "func A(ctx context.Context, n int) (int32, error) { return int32(n), nil }"}, {"return a, B(ctx, a)", "return int(a), B(ctx, int(a))"}}, true},
		{"policy", [][2]string{{"//resume:step\nfunc B", "//resume:step once\nfunc B"}}, true},
		{"step name", [][2]string{{"//resume:step\nfunc B", "//resume:step name=Bee\nfunc B"}}, true},
		{"rename local variable", [][2]string{{"a, err := A(ctx, in)", "score, err := A(ctx, in)"}, {"return a, B(ctx, a)", "return score, B(ctx, score)"}}, false},
		{"rename step parameter", [][2]string{{"func B(ctx context.Context, n int) error", "func B(ctx context.Context, count int) error"}}, false},
		{"edit comments", [][2]string{{"//resume:workflow\n", "// W does A then B.\n//\n//resume:workflow\n"}, {"\treturn a, B", "\t// B must see a.\n\treturn a, B"}}, false},
		{"code between steps", [][2]string{{"\treturn a, B(ctx, a)", "\ta = a*2 + 1\n\tfor i := 0; i < 3; i++ {\n\t\ta += i\n\t}\n\treturn a, B(ctx, a)"}}, false},
		{"retry tuning", [][2]string{{"//resume:step\nfunc B", "//resume:step retry=7 backoff=1s..1m timeout=5s\nfunc B"}}, false},
	}
	files := map[string]string{"version/base/p.go": versionBase}
	for i, v := range variants {
		src := versionBase
		for _, r := range v.edit {
			if !strings.Contains(src, r[0]) {
				t.Fatalf("%s: %q not in base", v.name, r[0])
			}
			src = strings.ReplaceAll(src, r[0], r[1])
		}
		files["version/v"+string(rune('a'+i))+"/p.go"] = src
	}
	writeFiles(t, testModule, files)
	res, err := Generate(Config{Dir: testModule, Patterns: []string{"./version/..."}, Env: testEnv})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range res.Diagnostics {
		t.Errorf("unexpected diagnostic: %s", d)
	}
	// Each variant is its own package, so its path is in every callee and
	// type: hash the canonical text with the path taken out, which is what
	// the version of the same package would be.
	versions := map[string]string{} // directory → version
	for _, w := range res.Workflows {
		canon := strings.ReplaceAll(canonical(w), w.Package, "example.com/p")
		versions[filepath.Base(w.Package)] = hashText(canon)
	}
	base := versions["base"]
	if len(base) != 16 {
		t.Fatalf("base version %q is not 16 hex digits", base)
	}
	for i, v := range variants {
		got := versions["v"+string(rune('a'+i))]
		if got == "" {
			t.Errorf("%s: no workflow generated", v.name)
			continue
		}
		if changed := got != base; changed != v.changes {
			t.Errorf("%s: version %s, base %s: changed = %v, want %v", v.name, got, base, changed, v.changes)
		}
	}
}

func hashText(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])[:16]
}

// TestCanonicalSteps pins the text the version hashes.
func TestCanonicalSteps(t *testing.T) {
	dir := filepath.Join(testModule, "canonical")
	writeFiles(t, dir, map[string]string{"p.go": versionBase})
	res := generateIn(t, dir)
	if len(res.Workflows) != 1 {
		t.Fatalf("got %d workflows, want 1", len(res.Workflows))
	}
	w := res.Workflows[0]
	if w.Version != versionOf(w) || w.Version != hashText(canonical(w)) {
		t.Errorf("version %s is not the hash of the canonical step list", w.Version)
	}
	got := canonical(w)
	want := "workflow\tfunc(context.Context, int) (int, error)\n" +
		"A\texample.com/golden/canonical.A\tfunc(context.Context, int) (int, error)\tdefault\n" +
		"B\texample.com/golden/canonical.B\tfunc(context.Context, int) error\tdefault\n"
	if got != want {
		t.Errorf("canonical step list:\n%q\nwant\n%q", got, want)
	}
}
