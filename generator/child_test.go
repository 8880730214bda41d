package generator

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// TestChildVersionAndManifest checks what a child call contributes to the
// caller's version and manifest: the call site with the policy child, not
// the child's own steps, which enter only the child's version. A
// call-site step of a plain function turned into a workflow moves the
// caller's version.
func TestChildVersionAndManifest(t *testing.T) {
	const src = `package cv

import "context"

//resume:workflow
func P(ctx context.Context, id string) error {
	return C(ctx, id) //resume:step name=Kid
}

%s
func C(ctx context.Context, id string) error {
	if err := S(ctx, id); err != nil {
		return err
	}
	%s
	return nil
}

//resume:step
func S(ctx context.Context, id string) error { return nil }
`
	dir := filepath.Join(testModule, "cv")
	gen := func(directive, more string) map[string]*Workflow {
		t.Helper()
		writeFiles(t, dir, map[string]string{"cv.go": fmt.Sprintf(src, directive, more)})
		res := generateIn(t, dir)
		if len(res.Diagnostics) > 0 {
			t.Fatalf("%s / %s: %v", directive, more, res.Diagnostics)
		}
		ws := map[string]*Workflow{}
		for _, w := range res.Workflows {
			ws[w.Name] = w
		}
		if directive != "" {
			b, err := res.Manifest()
			if err != nil {
				t.Fatal(err)
			}
			var got []struct {
				Workflow string
				Steps    []struct{ Name, Callee, Policy string }
			}
			if err := json.Unmarshal(b, &got); err != nil {
				t.Fatal(err)
			}
			if len(got) != 2 || got[0].Workflow != "P" || len(got[0].Steps) != 1 ||
				got[0].Steps[0] != (struct{ Name, Callee, Policy string }{"Kid", "example.com/golden/cv.C", "child"}) {
				t.Fatalf("manifest:\n%s", b)
			}
		}
		return ws
	}
	child := gen("//resume:workflow", "")
	more := gen("//resume:workflow", "_ = S(ctx, id) //resume:step name=Again")
	if child["P"].Version != more["P"].Version {
		t.Errorf("a step added inside the child moved the parent's version: %s vs %s", child["P"].Version, more["P"].Version)
	}
	if child["C"].Version == more["C"].Version {
		t.Errorf("a step added inside the child left the child's version at %s", child["C"].Version)
	}
	plain := gen("", "")
	if plain["P"].Version == child["P"].Version {
		t.Errorf("turning the callee into a workflow left the caller's version at %s", plain["P"].Version)
	}
	if len(plain["P"].Steps) != 1 || plain["P"].Steps[0].Name != "Kid" || plain["P"].Steps[0].Policy != "default" {
		t.Errorf("plain callee: want the call-site step Kid (default), got %+v", *plain["P"].Steps[0])
	}
}

// The parent journals its child's output as the child step's result: the
// output's JSON shape is the step's, and enters the parent's version.
func TestChildOutputShape(t *testing.T) {
	const src = `package cs

import "context"

type Out struct {
	N int
	%s
}

//resume:workflow
func P(ctx context.Context, id string) (Out, error) {
	return C(ctx, id)
}

//resume:workflow
func C(ctx context.Context, id string) (Out, error) {
	return Out{}, S(ctx, id)
}

//resume:step
func S(ctx context.Context, id string) error { return nil }
`
	dir := filepath.Join(testModule, "cs")
	gen := func(field string) *Workflow {
		t.Helper()
		writeFiles(t, dir, map[string]string{"cs.go": fmt.Sprintf(src, field)})
		res := generateIn(t, dir)
		if len(res.Diagnostics) > 0 {
			t.Fatalf("%s: %v", field, res.Diagnostics)
		}
		for _, w := range res.Workflows {
			if w.Name == "P" {
				return w
			}
		}
		t.Fatal("no workflow P")
		return nil
	}
	before, after := gen(""), gen("Region string")
	if got := strings.Join(before.Steps[0].Shape, "\n"); got != "result Out: N int" {
		t.Errorf("child step shape = %q, want the child's output", got)
	}
	if before.Version == after.Version {
		t.Errorf("a field added to the child's output kept the parent's version %s", before.Version)
	}
}
