package main

import (
	"os"
	"strings"
	"testing"
)

// TestReadmeGraph: the README shows Onboard's step graph as generated, so
// that an edit of the workflow that changes the graph changes the README.
func TestReadmeGraph(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(readme), "```mermaid\n"+resumeOnboardGraph+"```\n") {
		t.Errorf("README.md does not show Onboard's graph as generated; paste `resumegen -graph ./examples/onboard`:\n%s", resumeOnboardGraph)
	}
}
