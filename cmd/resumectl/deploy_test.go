package main

import (
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/resumegen/resumegen/generator"
	"github.com/resumegen/resumegen/runtime/openjournal"
)

// TestDefinitionMatchesRuntime proves that check-deploy builds the
// definition of the code exactly as the engine stores it: each example
// program saves its workflows' definitions in a journal, and check-deploy's
// definition of the same source, from the generator, is the same JSON.
// transfer has a child step and a step with pointer parameters, onboard
// has once and tx steps, shop is a method, batch has keyed steps.
func TestDefinitionMatchesRuntime(t *testing.T) {
	ctx := context.Background()
	for _, ex := range []struct{ name string }{{"onboard"}, {"transfer"}, {"shop"}, {"batch"}} {
		t.Run(ex.name, func(t *testing.T) {
			res, err := generator.Generate(generator.Config{Context: ctx, Patterns: []string{"../../examples/" + ex.name}})
			if err != nil || len(res.Diagnostics) > 0 || len(res.Workflows) == 0 {
				t.Fatalf("generate %s: %v %v", ex.name, err, res.Diagnostics)
			}
			db := filepath.Join(t.TempDir(), "journal.db")
			if err := saveManifests(t, ex.name, db); err != nil {
				t.Fatalf("the %s example did not save its manifests: %v", ex.name, err)
			}
			j, err := openjournal.OpenReadOnly(ctx, db)
			if err != nil {
				t.Fatal(err)
			}
			defer j.Close()
			for _, w := range res.Workflows {
				m, found, err := j.LoadManifest(ctx, w.ID, w.Version)
				if err != nil || !found {
					t.Fatalf("%s version %s: not in the journal (%v)", w.ID, w.Version, err)
				}
				want, err := json.Marshal(codeDef(w).Definition())
				if err != nil {
					t.Fatal(err)
				}
				if string(m.Definition) != string(want) {
					t.Errorf("%s: the engine stored\n%s\ncheck-deploy builds\n%s", w.ID, m.Definition, want)
				}
				if m.Manifest != codeManifest(w) {
					t.Errorf("%s: the engine stored the manifest\n%s\ncheck-deploy renders\n%s", w.ID, m.Manifest, codeManifest(w))
				}
			}
		})
	}
}

// saveManifests builds example ex and runs it once on the journal db, so
// that its engine saves its workflows' manifests.
func saveManifests(t *testing.T, ex, db string) error {
	t.Helper()
	bin := filepath.Join(binDir, "def-"+ex)
	if err := goCmd("", "build", "-o", bin, "../../examples/"+ex); err != nil {
		return err
	}
	dir := t.TempDir()
	args := map[string][]string{
		"onboard":  {"-db", db, "-run", "r1", "-world", filepath.Join(dir, "world")},
		"transfer": {"-db", db, "-run", "t1", "-world", filepath.Join(dir, "world")},
	}[ex]
	if args == nil {
		args = []string{"-db", db}
	}
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		return &exec.ExitError{ProcessState: cmd.ProcessState, Stderr: out}
	}
	return nil
}
