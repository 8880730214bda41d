package resume

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/resumegen/resumegen/runtime/journal"
)

// TestSealedJournalCoversValueInterfaces guards sealing against a new
// optional journal interface. The engine finds optional interfaces with
// journal.Find, which unwraps past a wrapper that does not implement one:
// an interface that writes or returns journaled values (inputs, outputs,
// results, payloads), reached past the sealing wrapper, would store them
// in plain text, or hand sealed bytes to the engine, silently. So every
// interface of package journal is listed here: those that carry values
// must be implemented by the sealing wrapper; the others say why they
// need not be. A new interface fails the test until it is placed.
func TestSealedJournalCoversValueInterfaces(t *testing.T) {
	carriesValues := map[string]reflect.Type{
		"Journal":      reflect.TypeFor[journal.Journal](),
		"KeyedStarter": reflect.TypeFor[journal.KeyedStarter](),
		"BatchClaimer": reflect.TypeFor[journal.BatchClaimer](),
		"Forker":       reflect.TypeFor[journal.Forker](),
		"Continuer":    reflect.TypeFor[journal.Continuer](),
	}
	noValues := map[string]string{
		"Clock":          "the journal's time",
		"Liveness":       "owners' liveness signals",
		"LiveOwnerGuard": "owners' liveness signals",
		"WorkNotifier":   "wake-ups, no rows",
		"FinishNotifier": "wake-ups, no rows",
		"StepTx":         "returned by BeginStep, which the wrapper wraps",
		"Auditor":        "operators' action rows (who, what, when), written beside the sealed values",
		"KeyRegistry":    "key ids, not values",
		"Unwrapper":      "the unwrapping itself",
		"Purger":         "deletes rows and counts them, reads no value",
		"FanOut":         "run ids and statuses only",
		"Queuer":         "queue names, limits and counts; the claims it governs go through BatchClaimer and Journal",
	}
	fset := token.NewFileSet()
	files, err := filepath.Glob(filepath.Join("..", "journal", "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	var found []string
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.TYPE {
				continue
			}
			for _, s := range g.Specs {
				ts := s.(*ast.TypeSpec)
				if _, ok := ts.Type.(*ast.InterfaceType); ok && ts.Name.IsExported() {
					found = append(found, ts.Name.Name)
				}
			}
		}
	}
	sort.Strings(found)
	if len(found) < len(carriesValues)+len(noValues)-2 {
		t.Fatalf("found only the interfaces %v in package journal: is the path right?", found)
	}
	wrapper := reflect.TypeFor[*sealedJournal]()
	for _, name := range found {
		if it, ok := carriesValues[name]; ok {
			if !wrapper.Implements(it) {
				t.Errorf("journal.%s carries journaled values, but the sealing wrapper (sealedJournal) does not implement it: journal.Find would reach the journal past it", name)
			}
			continue
		}
		if _, ok := noValues[name]; !ok {
			t.Errorf("journal.%s is a new interface: if it writes or returns journaled values, implement it on sealedJournal (sealing for the run it belongs to) and list it in carriesValues; otherwise list it in noValues with why", name)
		}
	}
}
