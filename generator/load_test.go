package generator

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestLoadErrors checks that packages the generator type-checks itself
// report a broken import at the import, with the reason, and type errors
// at their position, like go build.
func TestLoadErrors(t *testing.T) {
	dir := filepath.Join(testModule, "loaderr")
	writeFiles(t, dir, map[string]string{
		"a/a.go": "package a\n\nimport (\n\t\"context\"\n\n\t\"example.com/golden/loaderr/b\"\n\t\"example.com/nope\"\n)\n\nvar _, _ = b.X, nope.Y\n\nvar z int = \"s\"\n\n//resume:workflow\nfunc W(ctx context.Context) error { return nil }\n",
		"b/b.go": "package b\n\nvar X int = \"s\"\n",
	})
	res, err := Generate(Config{Dir: dir, Patterns: []string{"./a"}, Env: testEnv})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range res.Diagnostics {
		got = append(got, d.String())
	}
	all := strings.Join(got, "\n")
	for _, want := range []string{
		"a/a.go:6:2: could not import example.com/golden/loaderr/b (",
		"a/a.go:7:2: could not import example.com/nope (",
		"a/a.go:12:13: cannot use \"s\"",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("diagnostics lack %q:\n%s", want, all)
		}
	}
	if len(res.Files) != 0 {
		t.Error("files generated for a package with errors")
	}
}
