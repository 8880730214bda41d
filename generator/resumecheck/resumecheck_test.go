package resumecheck_test

import (
	"testing"

	"github.com/resumegen/resumegen/generator/resumecheck"
	"golang.org/x/tools/go/analysis/analysistest"
)

// TestAnalyzer checks the diagnostics against the // want comments of
// testdata/src/a, including a reviewed exception, a generated file that
// must be skipped (and that lacks the package's workflows, which vet
// reports as stale) and a workflow in a test file, refused as resumegen
// refuses it (analysistest loads the package's tests), and of
// testdata/src/b: near-miss directives and checks inside helpers, and of
// testdata/src/c: calls of workflows (child runs) refused, and of
// testdata/src/d: clashing identities, a redundant old version and a
// rename from the step's own name, and of testdata/src/e: a helper of
// another package followed by types, whose step's name clashes with the
// body's.
func TestAnalyzer(t *testing.T) {
	analysistest.Run(t, analysistest.TestData(), resumecheck.Analyzer, "a", "b", "c", "d", "e")
}
