package check_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/resumegen/resumegen/generator/internal/check"
	"github.com/resumegen/resumegen/generator/internal/load"
)

// A generated file that could not be read whole is warned about, naming
// it and what the parser said.
func TestPriorsProblem(t *testing.T) {
	src := strings.Replace(renamedSrc, "%s", "", 1)
	ws := warnWithPriors(t, check.Priors, src, nil, []load.PriorProblem{{File: "p_resume.go", Err: errors.New("p_resume.go:40:1: expected declaration, found '<<'")}})
	if len(ws) != 1 || !strings.Contains(ws[0].Message, "p_resume.go: p_resume.go:40:1: expected declaration") ||
		!strings.Contains(ws[0].Message, "cannot all be read") {
		t.Fatalf("warnings %v", ws)
	}
}
