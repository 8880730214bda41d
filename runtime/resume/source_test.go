package resume

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/resumegen/resumegen/internal/fingerprint"
)

// onboardSource is examples/onboard's workflow file, a realistic source
// to fingerprint.
func onboardSource(tb testing.TB) []byte {
	tb.Helper()
	b, err := os.ReadFile("../../examples/onboard/onboard.go")
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

func sourceOf(tb testing.TB, src []byte) *Source {
	tb.Helper()
	decls := []SourceDecl{{File: "onboard.go", Name: "Onboard"}}
	fp, err := fingerprint.Of(func(string) ([]byte, error) { return src, nil }, []fingerprint.Decl{{File: "onboard.go", Name: "Onboard"}})
	if err != nil {
		tb.Fatal(err)
	}
	return &Source{Files: fstest.MapFS{"onboard.go": {Data: src}}, Decls: decls, Fingerprint: fp}
}

// TestSourceCheck refuses a definition whose embedded source no longer
// fingerprints as recorded, naming the workflow, the file and go
// generate, and accepts it as it was generated; code generated before
// sources were recorded (no Source) is not checked.
func TestSourceCheck(t *testing.T) {
	src := onboardSource(t)
	def := &WorkflowDef{Package: "example.com/onboard", Name: "Onboard", Source: sourceOf(t, src)}
	if err := def.staleErr(); err != nil {
		t.Fatalf("fresh source refused: %v", err)
	}
	edited := sourceOf(t, src)
	edited.Files = fstest.MapFS{"onboard.go": {Data: []byte(strings.Replace(string(src), "return Summary{", "println()\n\treturn Summary{", 1))}}
	def = &WorkflowDef{Package: "example.com/onboard", Name: "Onboard", Source: edited}
	err := def.staleErr()
	if !errors.Is(err, ErrStale) || !strings.Contains(err.Error(), "workflow example.com/onboard.Onboard: generated code is stale: onboard.go changed since go generate, so onboard_resume.go would run an old copy of its body: run go generate") {
		t.Fatalf("stale source: %v", err)
	}
	if err := (&WorkflowDef{Name: "Old"}).staleErr(); err != nil {
		t.Fatalf("code without a Source: %v", err)
	}
}

// BenchmarkSourceCheck is what a program pays once per workflow before
// its first run: fingerprinting the workflow's embedded source file
// (examples/onboard/onboard.go).
func BenchmarkSourceCheck(b *testing.B) {
	src := onboardSource(b)
	fp := sourceOf(b, src).Fingerprint
	b.SetBytes(int64(len(src)))
	for b.Loop() {
		s := &Source{Files: fstest.MapFS{"onboard.go": {Data: src}}, Decls: []SourceDecl{{File: "onboard.go", Name: "Onboard"}}, Fingerprint: fp}
		if err := s.check(&WorkflowDef{}); err != nil {
			b.Fatal(err)
		}
	}
}

// TestSourcePositions resolves the call sites generated code records
// relative to their declaration into file:line against the embedded
// source, and leaves other positions as they are.
func TestSourcePositions(t *testing.T) {
	src := onboardSource(t)
	lines, err := fingerprint.Lines("onboard.go", src)
	if err != nil || lines["Onboard"] == 0 {
		t.Fatalf("lines: %v, %v", lines, err)
	}
	def := &WorkflowDef{Package: "example.com/onboard", Name: "Onboard", Source: sourceOf(t, src), Steps: []StepDef{
		{Name: "A", Pos: "examples/onboard/onboard.go:Onboard+5"},
		{Name: "B", Pos: "examples/onboard/onboard.go:53"},
		{Name: "C", Pos: "examples/onboard/onboard.go:Missing+5"},
		{Name: "D"},
	}}
	d := def.Definition()
	want := []string{"examples/onboard/onboard.go:" + strconv.Itoa(lines["Onboard"]+5), "examples/onboard/onboard.go:53", "examples/onboard/onboard.go:Missing+5", ""}
	for i, s := range d.Steps {
		if s.Pos != want[i] {
			t.Errorf("step %s: pos %q, want %q", s.Name, s.Pos, want[i])
		}
	}
	if got := (&WorkflowDef{Steps: []StepDef{{Pos: "f.go:Onboard+5"}}}).Definition().Steps[0].Pos; got != "f.go:Onboard+5" {
		t.Errorf("without a Source: %q", got)
	}
}
