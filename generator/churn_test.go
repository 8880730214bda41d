package generator

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
)

// TestNoChurnFromAnUnrelatedEdit regenerates a package after edits that
// touch no workflow (a function added above it, a longer doc comment of
// another declaration, a blank line): the generated file is byte for byte
// the same, so a pull request's generated diff shows only what changed.
func TestNoChurnFromAnUnrelatedEdit(t *testing.T) {
	dir := filepath.Join(testModule, "nochurn")
	writeFiles(t, dir, map[string]string{"p.go": staleSource, "support.go": programSupport})
	first := generateIn(t, dir)
	if len(first.Diagnostics) > 0 || len(first.Files) != 1 {
		t.Fatalf("generate: %v, %d files", first.Diagnostics, len(first.Files))
	}
	for _, edit := range [][2]string{
		{"// Greet greets twice.", "// helperAbove moves every line below it.\nfunc helperAbove() int {\n\treturn 3\n}\n\n// Greet greets twice."},
		{"import (", "\n\nimport ("},
		{"func unrelated() int { return 1 }", "// unrelated is\n// documented at length.\nfunc unrelated() int { return 1 }"},
	} {
		src := strings.Replace(staleSource, edit[0], edit[1], 1)
		writeFiles(t, dir, map[string]string{"p.go": src})
		again := generateIn(t, dir)
		if len(again.Files) != 1 || !bytes.Equal(again.Files[0].Content, first.Files[0].Content) {
			t.Errorf("edit %q rewrote the generated file:\n%s", edit[0], unifiedDiff("before", "after", first.Files[0].Content, again.Files[0].Content, true))
		}
	}
}
