package generator

import (
	"github.com/resumegen/resumegen/generator/internal/load"

	"bytes"
	"encoding/json"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"
)

// TestIdentityAcrossPackages generates two packages together whose
// workflows claim one identity: each is refused at its own directive,
// naming the other. Generated one at a time they are fine, which is why
// the check runs over everything generated together.
func TestIdentityAcrossPackages(t *testing.T) {
	const src = `package %s

import "context"

//resume:workflow name=billing.Onboard
func Onboard(ctx context.Context) error { return S(ctx) }

//resume:step
func S(ctx context.Context) error { return nil }
`
	writeFiles(t, testModule, map[string]string{
		"idpkgs/a/a.go": strings.Replace(src, "%s", "a", 1),
		"idpkgs/b/b.go": strings.Replace(src, "%s", "b", 1),
	})
	res, err := Generate(Config{Dir: testModule, Patterns: []string{"./idpkgs/..."}, Env: testEnv})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range res.Diagnostics {
		got = append(got, d.String())
	}
	want := []string{
		"idpkgs/a/a.go:5:1: //resume:workflow name=billing.Onboard: workflow Onboard's identity billing.Onboard is also the identity of workflow Onboard (idpkgs/b/b.go:5:1): the journal could not tell their runs apart; give one of them another name=",
		"idpkgs/b/b.go:5:1: //resume:workflow name=billing.Onboard: workflow Onboard's identity billing.Onboard is also the identity of workflow Onboard (idpkgs/a/a.go:5:1): the journal could not tell their runs apart; give one of them another name=",
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("diagnostics:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if len(res.Files) != 0 {
		t.Fatalf("files generated despite the clash: %d", len(res.Files))
	}
	one := generateIn(t, filepath.Join(testModule, "idpkgs", "a"))
	if len(one.Diagnostics) != 0 {
		t.Fatalf("package a alone: %v", one.Diagnostics)
	}
}

// TestManifestIdentity checks what cmd/resumectl and the -manifest JSON
// read: a named workflow's identity and alias, an old version's identity,
// aliases and target, and each step's key and earlier names.
func TestManifestIdentity(t *testing.T) {
	const src = `package mi

import "context"

//resume:workflow name=billing.Pay
func Pay(ctx context.Context, ids []string) error {
	for _, id := range ids {
		if err := Charge(ctx, id); err != nil { //resume:step renamed-from=Bill key=id
			return err
		}
	}
	return nil
}

//resume:workflow old-version-of=Pay
func payV1(ctx context.Context, ids []string) error { return Charge(ctx, "all") }

//resume:workflow
func Plain(ctx context.Context) error { return Charge(ctx, "x") }

//resume:step renamed-from=Debit
func Charge(ctx context.Context, id string) error { return nil }
`
	dir := filepath.Join(testModule, "mi")
	writeFiles(t, dir, map[string]string{"mi.go": src})
	res := generateIn(t, dir)
	if len(res.Diagnostics) > 0 {
		t.Fatal(res.Diagnostics)
	}
	const pkg = "example.com/golden/mi"
	type step struct {
		Key         string
		RenamedFrom []string
	}
	type wf struct {
		ID, OldVersionOf string
		Aliases          []string
		Old              bool
		Steps            []step
	}
	want := map[string]wf{
		"Pay":   {ID: "billing.Pay", Aliases: []string{pkg + ".Pay"}, Steps: []step{{"id", []string{"Bill"}}}},
		"payV1": {ID: "billing.Pay", Aliases: []string{pkg + ".Pay"}, Old: true, OldVersionOf: "Pay", Steps: []step{{"", []string{"Debit"}}}},
		"Plain": {ID: pkg + ".Plain", Steps: []step{{"", []string{"Debit"}}}},
	}
	for _, w := range res.Workflows {
		got := wf{ID: w.ID, OldVersionOf: w.OldVersionOf, Aliases: w.Aliases, Old: w.Old}
		for _, s := range w.Steps {
			got.Steps = append(got.Steps, step{s.Key, s.RenamedFrom})
		}
		if !reflect.DeepEqual(got, want[w.Name]) {
			t.Errorf("workflow %s: %+v, want %+v", w.Name, got, want[w.Name])
		}
	}
	b, err := res.Manifest()
	if err != nil {
		t.Fatal(err)
	}
	var manifest []struct {
		Workflow     string   `json:"workflow"`
		ID           string   `json:"id"`
		Aliases      []string `json:"aliases"`
		OldVersionOf string   `json:"old_version_of"`
		Steps        []struct {
			Key         string   `json:"key"`
			RenamedFrom []string `json:"renamed_from"`
		} `json:"steps"`
	}
	if err := json.Unmarshal(b, &manifest); err != nil {
		t.Fatal(err)
	}
	for _, m := range manifest {
		w := want[m.Workflow]
		if m.ID != w.ID || !reflect.DeepEqual(m.Aliases, w.Aliases) || m.OldVersionOf != w.OldVersionOf ||
			len(m.Steps) != 1 || m.Steps[0].Key != w.Steps[0].Key || !reflect.DeepEqual(m.Steps[0].RenamedFrom, w.Steps[0].RenamedFrom) {
			t.Errorf("manifest of %s is wrong:\n%s", m.Workflow, b)
		}
	}
	if len(manifest) != 3 {
		t.Fatalf("manifest has %d workflows:\n%s", len(manifest), b)
	}
}

// TestIdentityDeterministic generates the identity golden case twice:
// identities, aliases, old versions and renames come out byte for byte
// the same.
func TestIdentityDeterministic(t *testing.T) {
	ar, err := txtar.ParseFile("../testdata/golden/identity.txtar")
	if err != nil {
		t.Fatal(err)
	}
	inputs := map[string]string{}
	for _, f := range ar.Files {
		if !strings.HasSuffix(f.Name, load.GeneratedSuffix) && f.Name != diagnosticsFile {
			inputs[f.Name] = string(f.Data)
		}
	}
	dir := filepath.Join(testModule, "identitydet")
	writeFiles(t, dir, inputs)
	first, second := generateIn(t, dir), generateIn(t, dir)
	if len(first.Files) != 1 || len(first.Diagnostics) != 0 {
		t.Fatalf("files %d, diagnostics %v", len(first.Files), first.Diagnostics)
	}
	if !bytes.Equal(first.Files[0].Content, second.Files[0].Content) {
		t.Fatalf("two generations differ:\n%s", unifiedDiff("first", "second", first.Files[0].Content, second.Files[0].Content, true))
	}
	for _, want := range []string{"ID:      \"billing.Onboard\"", "Old:     true", "RenamedFrom: []string{\"Mail\", \"Email\"}", "Key: \"o.ID\""} {
		if !bytes.Contains(first.Files[0].Content, []byte(want)) {
			t.Errorf("generated code lacks %s", want)
		}
	}
}
