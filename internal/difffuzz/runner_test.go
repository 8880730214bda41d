package difffuzz

import (
	"slices"
	"strings"
	"testing"
)

// handWritten is a program of one workflow around body, its lines
// tagged with construct c.
func handWritten(name, body string, c Construct) *Program {
	src := `// Package ` + name + ` is written by hand.
package ` + name + `

import (
	"context"

	"github.com/resumegen/resumegen/internal/difffuzz/fuzzrt"
)

// Flow is the workflow.
//
//resume:workflow
func Flow(ctx context.Context, n int) (int, error) {
` + body + `
}

// S is a step.
//
//resume:step
func S(ctx context.Context, a int) (int, error) {
	ctx, _ = fuzzrt.Exec(ctx, "S")
	return fuzzrt.Return(ctx, a+1), nil
}

// T is a step.
//
//resume:step
func T(ctx context.Context, a int) (int, error) {
	ctx, _ = fuzzrt.Exec(ctx, "T")
	return fuzzrt.Return(ctx, 2*a), nil
}

// Program describes the program to the fuzzer's driver.
var Program = fuzzrt.Program{Name: "` + name + `", Workflow: Flow, Args: []any{1}}
`
	p := &Program{Name: name, Source: src, Intent: map[string]string{"S": "default", "T": "default"}, Lines: map[int]Construct{}}
	for i := range strings.Split(src, "\n") {
		p.Lines[i+1] = c
	}
	return p
}

// lying returns p claiming to hold ForeignNondet, which it does not.
func lying(p *Program) *Program {
	p.Used = append(p.Used, ForeignNondet)
	return p
}

// selfChecks are programs, mostly hand-written, that TestDifferential runs in its
// batch (sharing its build) to prove the runner's verdicts: a refusal
// with its position is a pass, recorded with its construct; a program
// that is not valid Go is the fuzzer's bug, not a refusal; a program
// resumegen accepts is crash-tested; helpers of a second package are
// journaled, and its non-determinism refused there, or else flagged.
func selfChecks() ([]*Program, func(t *testing.T, res map[string]*Result)) {
	progs := []*Program{
		handWritten("hrefused", "\tgo S(ctx, n)\n\treturn S(ctx, n)", Step),
		handWritten("hbroken", "\treturn S(ctx, undefinedName)", Step),
		handWritten("hfine", "\tv, err := S(ctx, n)\n\tif err != nil {\n\t\treturn 0, err\n\t}\n\treturn T(ctx, v)", Step),
		// The second package: helpers there with steps, a child
		// workflow, an await, a method and sleeps (seed 1154);
		// one reaching math/rand there (seed 8); and a program said to
		// reach it that does not, which the check of refusals must catch.
		GenerateNamed("hforeign", 1154, DefaultKnobs()),
		GenerateNamed("hnondet", 8, DefaultKnobs()),
		lying(GenerateNamed("hlying", 37, Knobs{Size: 1, Depth: 1, Use: []Construct{Foreign}})),
	}
	check := func(t *testing.T, res map[string]*Result) {
		r := res["hrefused"]
		if !r.Refused() || len(r.Divergences) > 0 || r.Refusals[0].Construct != Step || !strings.Contains(r.Refusals[0].Message, "go statement") {
			t.Errorf("a step in a go statement: refusals %v, divergences %v; want a refusal of a step line, no divergence", r.Refusals, r.Divergences)
		}
		r = res["hbroken"]
		if r.Refused() || len(r.Divergences) != 1 || r.Divergences[0].Kind != KindProgram {
			t.Errorf("a program that does not compile: refusals %v, divergences %v; want one %s divergence", r.Refusals, r.Divergences, KindProgram)
		}
		r = res["hfine"]
		if r.Refused() || len(r.Divergences) > 0 || r.Observation == nil || len(r.Observation.Cases) < 6 {
			t.Errorf("a correct program: refusals %v, divergences %v, observation %v; want 6 crash cases or more, all passing", r.Refusals, r.Divergences, r.Observation)
		}
		r = res["hforeign"]
		if r.Refused() || len(r.Divergences) > 0 || r.Observation == nil || len(r.Observation.Cases) < 20 || !strings.Contains(r.Program.Lib, "resume:workflow") || !strings.Contains(r.Program.Lib, "resume.Await") {
			t.Errorf("helpers of a second package: refusals %v, divergences %v; want 20 crash cases or more, all passing, through a child and an await there", r.Refusals, r.Divergences)
		}
		r = res["hnondet"]
		if !r.Refused() || len(r.Divergences) > 0 || !slices.ContainsFunc(r.Refusals, func(ref Refusal) bool { return ref.File == "lib/lib.go" && ref.Construct == ForeignNondet }) {
			t.Errorf("math/rand in a second package: refusals %v, divergences %v; want a refusal in lib/lib.go of the foreign-nondet line, no divergence", r.Refusals, r.Divergences)
		}
		r = res["hlying"]
		if r.Refused() || len(r.Divergences) != 1 || r.Divergences[0].Kind != KindAccepted {
			t.Errorf("a program said to be non-deterministic in its second package, accepted: refusals %v, divergences %v; want one %s divergence", r.Refusals, r.Divergences, KindAccepted)
		}
	}
	return progs, check
}
