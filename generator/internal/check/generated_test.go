package check_test

import (
	"regexp"
	"testing"

	"github.com/resumegen/resumegen/generator/internal/check"
	"github.com/resumegen/resumegen/generator/internal/pipetest"
)

// Each identifier the generated code declares for a workflow (definition,
// version, body, graph, step wrapper, out type, helper copy) is refused
// when the package declares it, at the workflow, naming the declaration.
// A wait declares nothing, so a declaration named like its wrapper would
// be collides with nothing.
func TestGeneratedNamesDeclared(t *testing.T) {
	pipetest.Want(t, check.GeneratedNames, `package p

import (
	"context"
	"time"

	"github.com/resumegen/resumegen/runtime/resume"
)

var resumeW, resumeWVersion, resumeWBody, resumeWGraph int

type resumeW_PairOut struct{}

func resumeW_S()      {}
func resumeW_helper() {}

func resumeW_resume_Sleep() {}

//resume:workflow
func W(ctx context.Context) error { // want "^workflow W: generated identifier resumeW collides with the declaration at p.go:10:5; rename one of them$" "^workflow W: generated identifier resumeWVersion collides with the declaration at p.go:10:14;" "^workflow W: generated identifier resumeWBody collides with the declaration at p.go:10:30;" "^workflow W: generated identifier resumeWGraph collides with the declaration at p.go:10:43;" "^workflow W: generated identifier resumeW_S collides with the declaration at p.go:14:6;" "^workflow W: generated identifier resumeW_PairOut collides with the declaration at p.go:12:6;" "^workflow W: generated identifier resumeW_helper collides with the declaration at p.go:15:6;"
	_ = S(ctx)
	_, _, _ = Pair(ctx)
	_ = resume.Sleep(ctx, time.Second)
	return helper(ctx)
}

func helper(ctx context.Context) error { return S(ctx) }

//resume:workflow
func V(ctx context.Context) error { return S(ctx) }

//resume:step
func S(ctx context.Context) error { return nil }

//resume:step
func Pair(ctx context.Context) (int, string, error) { return 0, "", nil }
`)
}

// Two workflows whose generated identifiers coincide once sanitized (a
// method T.M and a function T_M; a workflow Y's step Z_K and a workflow
// Y_Z's step K) are refused at the second, naming the first. A method of
// a generic type, whose code is never generated, takes no name.
func TestGeneratedNamesBetweenWorkflows(t *testing.T) {
	pipetest.Want(t, check.GeneratedNames, `package p

import "context"

//resume:workflow
func A_B(ctx context.Context) error { return K(ctx) }

type A struct{}

//resume:workflow
func (A) B(ctx context.Context) error { return K(ctx) } // want "^workflow A.B: generated identifier resumeA_B is also generated for workflow A_B; rename a workflow or a step \\(name=\\)$" "resumeA_BVersion is also generated for workflow A_B" "resumeA_BBody is also generated for workflow A_B" "resumeA_BGraph is also generated for workflow A_B" "resumeA_B_K is also generated for workflow A_B" "A_BRun is also generated for workflow A_B"

//resume:workflow
func Y(ctx context.Context) error {
	return K(ctx) //resume:step name=Z_K
}

//resume:workflow
func Y_Z(ctx context.Context) error { return K(ctx) } // want "^workflow Y_Z: generated identifier resumeY_Z_K is also generated for workflow Y;"

type G[T any] struct{}

//resume:workflow
func (G[T]) M(ctx context.Context) error { return K(ctx) }

//resume:workflow
func G_M(ctx context.Context) error { return K(ctx) }

func resumeM() {}

//resume:step
func K(ctx context.Context) error { return nil }
`)
}

// A workflow without steps is warned of, not refused (the warning is no
// refusal, so it is compared here rather than with want comments); one
// whose only journaled point is a wait or a child run has steps, and one
// whose only step the journal cannot order has none.
func TestNoSteps(t *testing.T) {
	_, errs, warns, _ := run(t, []*check.Check{check.NoSteps}, `package p

import (
	"context"
	"time"

	"github.com/resumegen/resumegen/runtime/resume"
)

//resume:workflow
func Empty(ctx context.Context) error { return nil }

//resume:workflow
func Sleeps(ctx context.Context) error { return resume.Sleep(ctx, time.Second) }

//resume:workflow
func Parent(ctx context.Context) error { return Empty(ctx) }

//resume:workflow
func InGo(ctx context.Context) error {
	go S(ctx)
	return nil
}

type G[T any] struct{}

//resume:workflow
func (G[T]) M(ctx context.Context) error { return nil }

//resume:step
func S(ctx context.Context) error { return nil }
`, false)
	if len(errs) != 0 {
		t.Errorf("refusals %v, want none", errs)
	}
	want := []string{
		`^p.go:11:6: workflow Empty has no steps: nothing it does is journaled, so a resumed run does all of it again; mark what must run once with //resume:step, or drop //resume:workflow$`,
		`^p.go:20:6: workflow InGo has no steps:`,
	}
	if len(warns) != len(want) {
		t.Fatalf("warnings %v, want %d", warns, len(want))
	}
	for i, re := range want {
		if !regexp.MustCompile(re).MatchString(warns[i].String()) {
			t.Errorf("warning %d = %s, want %s", i, warns[i], re)
		}
	}
}
