package model_test

import (
	"fmt"
	"testing"

	"github.com/resumegen/resumegen/generator/internal/load"
	"github.com/resumegen/resumegen/generator/internal/model"
	"github.com/resumegen/resumegen/generator/internal/pipetest"
	"github.com/resumegen/resumegen/runtime/resume"
)

const lineageSrc = `package p

import "context"

//resume:workflow
func W(ctx context.Context) error { return S(ctx) }

//resume:step
func S(ctx context.Context) error { return nil }
`

// modelWithPriors models src as if the package's generated files recorded
// priors.
func modelWithPriors(t *testing.T, src string, priors ...load.Prior) *model.Package {
	t.Helper()
	pkg := pipetest.Load(t, src)
	pkg.Priors = priors
	return pipetest.Build(t, pkg)
}

// A lineage is cut to resume.LineageLimit versions, newest first, and a
// recorded definition of another identity does not count.
func TestLineageLimitAndIdentity(t *testing.T) {
	var long []string
	for i := 0; i < 2*resume.LineageLimit; i++ {
		long = append(long, fmt.Sprintf("old%02d", i))
	}
	m := modelWithPriors(t, lineageSrc,
		load.Prior{File: "other_resume.go", Package: "example.com/p", Name: "Other", Version: "elsewhere"},
		load.Prior{File: "p_resume.go", Package: "example.com/p", Name: "W", Version: "prev", Lineage: long})
	w := m.Workflows[0]
	if len(w.Lineage) != resume.LineageLimit || w.Lineage[0] != "prev" || w.Lineage[1] != "old00" || w.Lineage[resume.LineageLimit-1] != long[resume.LineageLimit-2] {
		t.Fatalf("lineage (%d) %v, want prev then the newest of the recorded ones, %d in all", len(w.Lineage), w.Lineage, resume.LineageLimit)
	}
	if w.Prior == nil || w.Prior.Version != "prev" {
		t.Fatalf("prior %+v, want W's recorded definition", w.Prior)
	}
	if d := w.Definition(); len(d.Lineage) != resume.LineageLimit {
		t.Fatalf("the definition's lineage has %d versions", len(d.Lineage))
	}
}
