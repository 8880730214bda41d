package main

import (
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/resumegen/resumegen/internal/fixture"
)

// The version-change test builds the example twice in a fixture module,
// through the real resumegen: as committed, then with a step inserted.

var built struct {
	once           sync.Once
	dir            string // the module, holding the new code
	oldBin, newBin string
	err            error
}

// insertStep adds AuditOnboarding before MarkComplete in the workflow.
func insertStep(src string) (string, bool) {
	const last = "\treturn Summary{Scored: len(scored), Notified: notified}, MarkComplete(ctx, in.CustomerID)\n"
	if !strings.Contains(src, last) {
		return src, false
	}
	src = strings.Replace(src, last, "\tif err := AuditOnboarding(ctx, in.CustomerID); err != nil {\n\t\treturn Summary{}, err\n\t}\n"+last, 1)
	return src + `
// AuditOnboarding records the onboarding in the audit log.
//
//resume:step
func AuditOnboarding(ctx context.Context, customerID string) error {
	defer worldFrom(ctx).track(ctx, "AuditOnboarding")()
	return nil
}
`, true
}

func buildFixture(t *testing.T) (dir, oldBin, newBin string) {
	t.Helper()
	built.once.Do(func() {
		built.dir = filepath.Join(binDir, "fixture")
		built.oldBin, built.newBin = filepath.Join(binDir, "onboard-old"), filepath.Join(binDir, "onboard-new")
		built.err = makeFixture(built.dir, built.oldBin, built.newBin)
	})
	if built.err != nil {
		t.Fatal(built.err)
	}
	return built.dir, built.oldBin, built.newBin
}

// makeFixture builds the example as a user's module (oldBin), then inserts
// a step into its workflow, regenerates and builds again (newBin).
func makeFixture(dir, oldBin, newBin string) error {
	m, err := fixture.FromExample("../..", "onboard", dir)
	if err != nil {
		return err
	}
	if err := m.GenerateAndBuild(oldBin); err != nil {
		return err
	}
	src, err := m.ReadFile("onboard.go")
	if err != nil {
		return err
	}
	changed, ok := insertStep(string(src))
	if !ok {
		return errors.New("the fixture cannot insert a step: onboard.go's last line changed")
	}
	if err := m.WriteFile("onboard.go", []byte(changed)); err != nil {
		return err
	}
	return m.GenerateAndBuild(newBin)
}
