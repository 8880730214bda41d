package generator

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
)

// TestManifestKeysAndExceptions checks that key=, the call site and
// //resume:allow reach the JSON manifest, and that an exception leaves the
// version alone.
func TestManifestKeysAndExceptions(t *testing.T) {
	const src = `package mk

import (
	"context"
	"log"
	"time"
)

//resume:workflow
func W(ctx context.Context, ids []string) error {
	for _, id := range ids {
		log.Print(time.Now()) %s
		if err := S(ctx, id); err != nil { //resume:step key=id
			return err
		}
	}
	return nil
}

//resume:step
func S(ctx context.Context, id string) error { return nil }
`
	dir := filepath.Join(testModule, "mk")
	allow := `//resume:allow nondeterministic reason="log only"`
	writeFiles(t, dir, map[string]string{"mk.go": fmt.Sprintf(src, allow)})
	res := generateIn(t, dir)
	if len(res.Diagnostics) > 0 {
		t.Fatal(res.Diagnostics)
	}
	b, err := res.Manifest()
	if err != nil {
		t.Fatal(err)
	}
	var got []struct {
		Version    string
		Steps      []struct{ Name, Key, Pos string }
		Exceptions []Exception
	}
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	want := Exception{Check: "nondeterministic", What: "time.Now", Reason: "log only"}
	// The call site is the one the generated code and resumectl runs show.
	if len(got) != 1 || len(got[0].Steps) != 1 || got[0].Steps[0].Key != "id" || got[0].Steps[0].Pos != "mk/mk.go:13" ||
		len(got[0].Exceptions) != 1 || got[0].Exceptions[0] != want {
		t.Fatalf("manifest:\n%s", b)
	}

	// Without the exception (and without the offending call) the version
	// is the same.
	writeFiles(t, dir, map[string]string{"mk.go": fmt.Sprintf(src, "")})
	res2 := generateIn(t, dir)
	if len(res2.Diagnostics) != 1 {
		t.Fatalf("want the time.Now diagnostic, got %v", res2.Diagnostics)
	}
	if res2.Workflows[0].Version != got[0].Version {
		t.Errorf("version moved with an exception: %s vs %s", res2.Workflows[0].Version, got[0].Version)
	}
}

// TestManifestShapes checks that the JSON manifest carries the shapes the
// version hashes: the run's input and output, and each step's result and
// pointees.
func TestManifestShapes(t *testing.T) {
	dir := filepath.Join(testModule, "manifestshape")
	writeFiles(t, dir, map[string]string{"p.go": shapeBase})
	res := generateIn(t, dir)
	b, err := res.Manifest()
	if err != nil {
		t.Fatal(err)
	}
	var got []struct {
		Shape []string
		Steps []struct {
			Name  string
			Shape []string
			JSON  string
		}
	}
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || len(got[0].Steps) != 2 || !slices.Contains(got[0].Shape, "output Receipt: Total int") ||
		!slices.Contains(got[0].Steps[0].Shape, "result Priced: amount int") || got[0].Steps[0].JSON != "Priced" ||
		!slices.Equal(got[0].Steps[1].Shape, []string{"out arg 3 Info: Email string"}) || got[0].Steps[1].JSON != "struct{arg3 *Info}" {
		t.Fatalf("manifest:\n%s", b)
	}
}
