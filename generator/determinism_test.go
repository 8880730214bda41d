package generator

import (
	"github.com/resumegen/resumegen/generator/internal/load"

	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const determinismSource = `package det

import "context"

//resume:workflow
func W(ctx context.Context, ids []string) (int, error) {
	n := 0
	for _, id := range ids {
		c, err := Count(ctx, id)
		if err != nil {
			return 0, err
		}
		n += c
	}
	return n, Done(ctx)
}

//resume:step
func Count(ctx context.Context, id string) (int, error) { return len(id), nil }

//resume:step once
func Done(ctx context.Context) error { return nil }
`

// TestDeterministicAndQuiet generates twice (identical bytes), writes, and
// regenerates the unchanged package without touching the file.
func TestDeterministicAndQuiet(t *testing.T) {
	dir := filepath.Join(testModule, "det")
	writeFiles(t, dir, map[string]string{"det.go": determinismSource})
	first := generateIn(t, dir)
	second := generateIn(t, dir)
	if len(first.Files) != 1 || len(second.Files) != 1 {
		t.Fatalf("got %d and %d files, want 1", len(first.Files), len(second.Files))
	}
	if !bytes.Equal(first.Files[0].Content, second.Files[0].Content) {
		t.Fatal("two runs generated different bytes")
	}
	if bytes.Contains(first.Files[0].Content, []byte(testModule)) {
		t.Error("generated code contains an absolute path")
	}
	st, err := first.Write()
	if err != nil || st.Written != 1 {
		t.Fatalf("first write: %+v, %v; want 1 file written", st, err)
	}
	out := filepath.Join(dir, "det_resume.go")
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(out, old, old); err != nil {
		t.Fatal(err)
	}
	st, err = generateIn(t, dir).Write()
	if err != nil || st != (WriteStats{}) {
		t.Fatalf("regenerating an unchanged package: %+v, %v; want nothing written", st, err)
	}
	if fi, err := os.Stat(out); err != nil || !fi.ModTime().Equal(old) {
		t.Errorf("unchanged generated file was rewritten (mtime %v)", fi.ModTime())
	}
	if diff, err := generateIn(t, dir).Check(dir); err != nil || len(diff) != 0 {
		t.Errorf("Check on a fresh package: %v\n%s", err, diff)
	}
}

// TestBrokenOutputDoesNotBlock writes a broken generated file and checks
// that the generator does not see it and replaces it.
func TestBrokenOutputDoesNotBlock(t *testing.T) {
	dir := filepath.Join(testModule, "broken")
	writeFiles(t, dir, map[string]string{
		"det.go":        strings.Replace(determinismSource, "package det", "package broken", 1),
		"det_resume.go": load.GeneratedHeader + "\n\npackage broken\n\nfunc W() {} // redeclared and broken\nvar x int = \"no\"\n",
	})
	res := generateIn(t, dir)
	if len(res.Diagnostics) > 0 {
		t.Fatalf("stale output blocked regeneration: %v", res.Diagnostics)
	}
	if st, err := res.Write(); err != nil || st.Written != 1 {
		t.Fatalf("write: %+v, %v", st, err)
	}
	goCmd(t, dir, "vet", ".")
}

// TestStaleAndErrors checks that stale outputs are found and deleted, and
// that a package with errors gets nothing written.
func TestStaleAndErrors(t *testing.T) {
	dir := filepath.Join(testModule, "stale")
	src := strings.Replace(determinismSource, "package det", "package stale", 1)
	writeFiles(t, dir, map[string]string{"det.go": src})
	if _, err := generateIn(t, dir).Write(); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "det_resume.go")

	// An error anywhere: nothing written, the old output stays.
	writeFiles(t, dir, map[string]string{"det.go": strings.Replace(src, "//resume:step once", "//resume:step once tx", 1)})
	res := generateIn(t, dir)
	if len(res.Diagnostics) == 0 || len(res.Files) != 0 {
		t.Fatalf("want diagnostics and no files, got %v and %d files", res.Diagnostics, len(res.Files))
	}
	if _, err := res.Write(); err == nil {
		t.Error("Write with diagnostics succeeded")
	}

	// No workflow anymore: the output is stale and deleted.
	writeFiles(t, dir, map[string]string{"det.go": strings.Replace(src, "//resume:workflow\n", "", 1)})
	res = generateIn(t, dir)
	if len(res.Stale) != 1 || res.Stale[0] != out {
		t.Fatalf("stale = %v, want [%s]", res.Stale, out)
	}
	diff, err := res.Check(dir)
	if err != nil || !bytes.Contains(diff, []byte("+++ /dev/null")) {
		t.Errorf("Check of a stale file: %v\n%s", err, diff)
	}
	if st, err := res.Write(); err != nil || st.Deleted != 1 {
		t.Fatalf("write: %+v, %v", st, err)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("stale %s still exists: %v", out, err)
	}
}

// TestExcludedSourceKeepsOutput generates a file under a build tag, as
// one platform would, and regenerates without it, as another platform
// would: the source is not loaded there, so its output is left alone; a
// generated file that build is not excluded from, or whose source is gone,
// is still stale.
func TestExcludedSourceKeepsOutput(t *testing.T) {
	dir := filepath.Join(testModule, "excluded")
	src := strings.Replace(determinismSource, "package det", "//go:build someday\n\npackage excluded", 1)
	writeFiles(t, dir, map[string]string{"det.go": src, "other.go": "package excluded\n"})
	res, err := Generate(Config{Dir: dir, Env: append(testEnv, "GOFLAGS=-mod=mod -tags=someday")})
	if err != nil || len(res.Diagnostics) > 0 || len(res.Files) != 1 {
		t.Fatalf("generate with -tags=someday: %v, %v, %d files", err, res.Diagnostics, len(res.Files))
	}
	if !bytes.HasPrefix(res.Files[0].Content, []byte(load.GeneratedHeader+"\n\n//go:build someday\n\npackage excluded\n")) {
		t.Fatalf("generated file does not start with the header and the source's constraint:\n%s", res.Files[0].Content)
	}
	if _, err := res.Write(); err != nil {
		t.Fatal(err)
	}
	// Built everywhere, for a source built only with someday: stale.
	unconstrained := load.GeneratedHeader + "\n\npackage excluded\n"
	writeFiles(t, dir, map[string]string{
		"old.go":         "//go:build someday\n\npackage excluded\n",
		"old_resume.go":  unconstrained,
		"gone_resume.go": strings.Replace(unconstrained, "\n\npackage", "\n\n//go:build someday\n\npackage", 1),
	})

	res = generateIn(t, dir)
	if len(res.Diagnostics) > 0 || len(res.Files) != 0 {
		t.Fatalf("generate without the tag: %v, %d files", res.Diagnostics, len(res.Files))
	}
	want := []string{filepath.Join(dir, "gone_resume.go"), filepath.Join(dir, "old_resume.go")}
	if strings.Join(res.Stale, " ") != strings.Join(want, " ") {
		t.Fatalf("stale = %v, want %v (det_resume.go kept)", res.Stale, want)
	}
	if _, err := res.Write(); err != nil {
		t.Fatal(err)
	}
	if diff, err := generateIn(t, dir).Check(dir); err != nil || len(diff) != 0 {
		t.Errorf("Check without the tag: %v\n%s", err, diff)
	}
	if _, err := os.Stat(filepath.Join(dir, "det_resume.go")); err != nil {
		t.Errorf("the output of an excluded source was deleted: %v", err)
	}
}
