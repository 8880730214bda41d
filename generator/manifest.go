package generator

import (
	"encoding/json"
	"fmt"
)

// manifestWorkflow is one workflow in the -manifest JSON.
type manifestWorkflow struct {
	Package  string `json:"package"`
	Workflow string `json:"workflow"`
	// ID is the workflow's identity in the journal (see Workflow.ID);
	// Aliases its earlier identities; OldVersionOf, for an old version,
	// the Go name of the workflow it is a version of.
	ID           string   `json:"id"`
	Aliases      []string `json:"aliases,omitempty"`
	OldVersionOf string   `json:"old_version_of,omitempty"`
	Version      string   `json:"version"`
	// Lineage lists the versions the workflow descends from, newest first.
	Lineage []string       `json:"lineage,omitempty"`
	Steps   []manifestStep `json:"steps"`
	// Shape is the JSON shape of the run's input and output, one field a
	// line, as hashed into the version.
	Shape []string `json:"shape,omitempty"`
	// Exceptions are the reviewed //resume:allow exceptions.
	Exceptions []Exception `json:"exceptions,omitempty"`
}

// manifestStep is one step in the -manifest JSON. Attempts is the total
// number of attempts, 1 without retry=; durations are Go durations and
// left out when not set.
type manifestStep struct {
	Name       string `json:"name"`
	Callee     string `json:"callee"`
	Signature  string `json:"signature"`
	Policy     string `json:"policy"`
	Attempts   int    `json:"attempts"`
	BackoffMin string `json:"backoff_min,omitempty"`
	BackoffMax string `json:"backoff_max,omitempty"`
	Timeout    string `json:"timeout,omitempty"`
	Key        string `json:"key,omitempty"`
	// Shape is the JSON shape of what the step journals (its result and
	// its pointer parameters' pointees), one field a line.
	Shape []string `json:"shape,omitempty"`
	// JSON is the type of the value the step journals, written as Shape
	// writes types ("null" for nothing but null).
	JSON string `json:"json,omitempty"`
	// RenamedFrom are the step's earlier names (renamed-from=).
	RenamedFrom []string `json:"renamed_from,omitempty"`
	// Deferred marks a step reached from a deferred call: a compensation,
	// which executes while a cancelled or expired run unwinds.
	Deferred bool `json:"deferred,omitempty"`
	// Pos is the step's call site, "dir/file.go:42" relative to the
	// module root, as the generated code and resumectl runs show it.
	Pos string `json:"pos,omitempty"`
}

// Manifest renders every workflow with its version and steps as indented
// JSON, in package and source order.
func (r *Result) Manifest() ([]byte, error) {
	out := []manifestWorkflow{}
	for _, w := range r.Workflows {
		mw := manifestWorkflow{Package: w.Package, Workflow: w.Name, ID: w.ID, Aliases: w.Aliases, OldVersionOf: w.OldVersionOf,
			Version: w.Version, Lineage: w.Lineage, Steps: []manifestStep{}, Shape: w.Shape, Exceptions: w.Exceptions}
		for _, s := range w.Steps {
			ms := manifestStep{Name: s.Name, Callee: s.Callee, Signature: s.Signature, Policy: s.Policy, Attempts: s.Attempts}
			if s.BackoffMin != 0 || s.BackoffMax != 0 {
				ms.BackoffMin, ms.BackoffMax = s.BackoffMin.String(), s.BackoffMax.String()
			}
			if s.Timeout != 0 {
				ms.Timeout = s.Timeout.String()
			}
			ms.Key, ms.RenamedFrom = s.Key, s.RenamedFrom
			ms.Shape, ms.JSON, ms.Pos, ms.Deferred = s.Shape, s.JSON, s.Pos, s.Deferred
			mw.Steps = append(mw.Steps, ms)
		}
		out = append(out, mw)
	}
	b, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode manifest: %w", err)
	}
	return append(b, '\n'), nil
}
