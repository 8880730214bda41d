package generator

import (
	"github.com/resumegen/resumegen/generator/internal/load"

	"flag"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// diagnosticsFile is the txtar section holding a case's expected
// diagnostics; cases without it must generate cleanly.
const diagnosticsFile = "diagnostics"

// TestGolden runs the generator on every testdata/golden/*.txtar case,
// compares its output (generated files or diagnostics) with the archive,
// and then builds all cases together with their generated code.
func TestGolden(t *testing.T) {
	archives, err := filepath.Glob("../testdata/golden/*.txtar")
	if err != nil || len(archives) == 0 {
		t.Fatalf("no golden cases: %v", err)
	}
	t.Run("cases", func(t *testing.T) {
		for _, path := range archives {
			name := strings.TrimSuffix(filepath.Base(path), ".txtar")
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				runGoldenCase(t, path, filepath.Join(testModule, name))
			})
		}
	})
	if t.Failed() {
		return
	}
	// Every case, with its generated files written, must build and vet.
	args := []string{"vet"}
	for _, path := range archives {
		args = append(args, "./"+strings.TrimSuffix(filepath.Base(path), ".txtar")+"/...")
	}
	goCmd(t, testModule, args...)
}

func runGoldenCase(t *testing.T, archivePath, dir string) {
	ar, err := txtar.ParseFile(archivePath)
	if err != nil {
		t.Fatal(err)
	}
	inputs := map[string]string{}
	want := map[string]string{}
	for _, f := range ar.Files {
		if f.Name == diagnosticsFile || strings.HasSuffix(f.Name, load.GeneratedSuffix) {
			want[f.Name] = string(f.Data)
		} else {
			inputs[f.Name] = string(f.Data)
		}
	}
	writeFiles(t, dir, inputs)

	res := generateIn(t, dir)
	got := map[string]string{}
	if len(res.Diagnostics) > 0 {
		var b strings.Builder
		for _, d := range res.Diagnostics {
			b.WriteString(d.String() + "\n")
		}
		got[diagnosticsFile] = b.String()
	}
	for _, f := range res.Files {
		rel, err := filepath.Rel(dir, f.Path)
		if err != nil {
			t.Fatal(err)
		}
		got[filepath.ToSlash(rel)] = string(f.Content)
	}
	if _, err := res.Write(); err != nil && len(res.Diagnostics) == 0 {
		t.Fatal(err)
	}

	if *update {
		writeArchive(t, archivePath, ar, got)
		return
	}
	for name, w := range want {
		if got[name] != w {
			t.Errorf("%s differs from golden (run go test ./generator -update):\n%s", name,
				unifiedDiff("want/"+name, "got/"+name, []byte(w), []byte(got[name]), true))
		}
	}
	for name := range got {
		if _, ok := want[name]; !ok {
			t.Errorf("unexpected output %s:\n%s", name, got[name])
		}
	}
}

// writeArchive rewrites the archive with its inputs and the new outputs.
func writeArchive(t *testing.T, path string, ar *txtar.Archive, got map[string]string) {
	var files []txtar.File
	for _, f := range ar.Files {
		if f.Name != diagnosticsFile && !strings.HasSuffix(f.Name, load.GeneratedSuffix) {
			files = append(files, f)
		}
	}
	var names []string
	for name := range got {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		files = append(files, txtar.File{Name: name, Data: []byte(got[name])})
	}
	ar.Files = files
	if err := os.WriteFile(path, txtar.Format(ar), 0o644); err != nil {
		t.Fatal(err)
	}
}
