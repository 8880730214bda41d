package generator

import (
	"os/exec"
	"strings"
	"testing"
)

// stages are the generator's stages in pipeline order, with the packages
// every stage may use (diag, jsontype, runtimeapi, graph). A stage may
// import an earlier stage, never a later one.
var stages = []string{"load", "directive", "calls", "model", "check", "emit"}

var shared = map[string]bool{"diag": true, "jsontype": true, "runtimeapi": true, "graph": true}

// TestStagesInOrder reads the import graph of the generator's internal
// packages and fails on an edge that runs back: a stage importing a later
// one, or a shared package importing a stage.
func TestStagesInOrder(t *testing.T) {
	const prefix = "github.com/resumegen/resumegen/generator/internal/"
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", "./internal/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	rank := map[string]int{}
	for i, s := range stages {
		rank[s] = i
	}
	seen := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg := strings.TrimPrefix(fields[0], prefix)
		seen[pkg] = true
		for _, imp := range fields[1:] {
			if !strings.HasPrefix(imp, prefix) {
				continue
			}
			dep := strings.TrimPrefix(imp, prefix)
			from, isStage := rank[pkg]
			to, depIsStage := rank[dep]
			switch {
			case shared[pkg] && depIsStage:
				t.Errorf("shared package %s imports stage %s", pkg, dep)
			case isStage && depIsStage && to >= from:
				t.Errorf("stage %s imports %s, which comes after it (order: %s)", pkg, dep, strings.Join(stages, " → "))
			case isStage && !depIsStage && !shared[dep]:
				t.Errorf("stage %s imports %s, which is neither a stage nor a shared package", pkg, dep)
			}
		}
	}
	for _, s := range stages {
		if !seen[s] {
			t.Errorf("stage %s is missing from generator/internal", s)
		}
	}
}
