package check_test

import (
	"strings"
	"testing"

	"github.com/resumegen/resumegen/generator/internal/check"
	"github.com/resumegen/resumegen/generator/internal/diag"
	"github.com/resumegen/resumegen/generator/internal/load"
	"github.com/resumegen/resumegen/generator/internal/model"
	"github.com/resumegen/resumegen/generator/internal/pipetest"
)

// warnWithPriors runs check c on src (package example.com/p, file p.go) as
// if its generated file p_resume.go recorded priors and problems, and
// returns the warnings.
func warnWithPriors(t *testing.T, c *check.Check, src string, priors []load.Prior, problems []load.PriorProblem) []diag.Diagnostic {
	t.Helper()
	pkg := pipetest.Load(t, src)
	pkg.Priors, pkg.PriorProblems = priors, problems
	m := pipetest.Build(t, pkg)
	errs, warns := diag.New(pkg.Fset, ""), diag.New(pkg.Fset, "")
	check.Run([]*check.Check{c}, []*model.Package{m}, errs, warns, false)
	if errs.Len() > 0 {
		t.Fatalf("refusals: %v", errs.Items())
	}
	return warns.Sorted()
}

const renamedSrc = `package p

import "context"

//resume:workflow
func W(ctx context.Context) error {
	if err := Plan(ctx); err != nil {
		return err
	}
	return Pay(ctx)
}

//resume:step
func Plan(ctx context.Context) error { return nil }

//resume:step` + "%s" + `
func Pay(ctx context.Context) error { return nil }
`

func priorW(steps ...load.PriorStep) load.Prior {
	return load.Prior{File: "p_resume.go", Package: "example.com/p", Name: "W", Version: "0123456789abcdef", Steps: steps}
}

func priorStep(name string) load.PriorStep {
	return load.PriorStep{Name: name, Callee: "example.com/p." + name, Signature: "func(context.Context) error"}
}

// The recorded W called Charge where W now calls Pay, of the same
// signature: a warning at the call, naming both and the fix; not with
// renamed-from=Charge, nor for a step of another signature, nor without a
// recorded definition.
func TestLikelyRenames(t *testing.T) {
	plain := strings.Replace(renamedSrc, "%s", "", 1)
	ws := warnWithPriors(t, check.LikelyRenames, plain, []load.Prior{priorW(priorStep("Plan"), priorStep("Charge"))}, nil)
	if len(ws) != 1 || ws[0].Pos.Line != 10 || ws[0].Pos.Column != 9 ||
		!strings.HasPrefix(ws[0].Message, "step Pay looks like step Charge of p_resume.go renamed (the same callee and signature at the same place, without renamed-from=)") ||
		!strings.Contains(ws[0].Message, "add renamed-from=Charge to its //resume:step directive") {
		t.Fatalf("warnings %v", ws)
	}
	declared := strings.Replace(renamedSrc, "%s", " renamed-from=Charge", 1)
	if ws := warnWithPriors(t, check.LikelyRenames, declared, []load.Prior{priorW(priorStep("Plan"), priorStep("Charge"))}, nil); len(ws) != 0 {
		t.Errorf("with renamed-from=Charge: %v", ws)
	}
	other := priorStep("Charge")
	other.Signature = "func(context.Context, int) error"
	if ws := warnWithPriors(t, check.LikelyRenames, plain, []load.Prior{priorW(priorStep("Plan"), other)}, nil); len(ws) != 0 {
		t.Errorf("for a step of another signature: %v", ws)
	}
	if ws := warnWithPriors(t, check.LikelyRenames, plain, nil, nil); len(ws) != 0 {
		t.Errorf("without a recorded definition: %v", ws)
	}
	stranger := priorW(priorStep("Plan"), priorStep("Charge"))
	stranger.Name = "Other"
	if ws := warnWithPriors(t, check.LikelyRenames, plain, []load.Prior{stranger}, nil); len(ws) != 0 {
		t.Errorf("against another workflow's definition: %v", ws)
	}
}
