package resume

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// exportedDecls parses the package's non-test files and returns each
// exported top-level name with the file that declares it and its doc.
func exportedDecls(t *testing.T) map[string][2]string {
	t.Helper()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	decls := map[string][2]string{}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil && d.Name.IsExported() {
					decls[d.Name.Name] = [2]string{name, d.Doc.Text()}
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						if s.Name.IsExported() {
							decls[s.Name.Name] = [2]string{name, d.Doc.Text() + s.Doc.Text()}
						}
					case *ast.ValueSpec:
						for _, n := range s.Names {
							if n.IsExported() {
								decls[n.Name] = [2]string{name, d.Doc.Text() + s.Doc.Text()}
							}
						}
					}
				}
			}
		}
	}
	return decls
}

// TestJournalContractStaysOut guards the user's API: what only journal
// implementations use lives in package journal, not here (issue 11 §7).
func TestJournalContractStaysOut(t *testing.T) {
	decls := exportedDecls(t)
	for _, name := range []string{
		"RunRecord", "StepRecord", "AttemptRecord", "ManifestRecord", "Lease",
		"ClaimRequest", "ClaimNextRequest", "RunFilter", "Counters", "StepTx",
		"Liveness", "WorkNotifier", "StepStatus", "StepInFlight", "StepSucceeded",
		"StepFailed", "ErrNoRunReady", "ErrNoJournal", "ErrOlderJournal", "IsSealed",
	} {
		if d, ok := decls[name]; ok {
			t.Errorf("%s: package resume declares %s, which belongs to package journal", d[0], name)
		}
	}
	if len(decls) < 40 {
		t.Fatalf("found only %d exported names: the parse is broken", len(decls))
	}
}

// TestGeneratedCodeOnlyIsGrouped checks that every function documented
// "For generated code only" is in generated.go, where its header labels
// it, and that generated.go holds nothing else.
func TestGeneratedCodeOnlyIsGrouped(t *testing.T) {
	decls := exportedDecls(t)
	n := 0
	for name, d := range decls {
		generatedOnly := strings.Contains(strings.Join(strings.Fields(d[1]), " "), "For generated code only")
		if d[0] == "generated.go" {
			n++
			if !generatedOnly {
				t.Errorf("generated.go: %s is not documented \"For generated code only\"", name)
			}
			continue
		}
		if generatedOnly && !isType(name) {
			t.Errorf("%s: %s is for generated code only: move it to generated.go", d[0], name)
		}
	}
	if n < 15 {
		t.Errorf("generated.go declares %d exported names, want the 15 entry points of generated code", n)
	}
}

// isType reports whether name is one of the types generated code fills in,
// which stay beside their methods.
func isType(name string) bool {
	switch name {
	case "WorkflowDef", "StepDef", "Args", "ErrorDef":
		return true
	}
	return false
}
