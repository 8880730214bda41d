package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/resumegen/resumegen/runtime/resume"
)

// TestManifestChecksResults checks results against the manifest the
// generated code stores: what the generator records of each step is what
// resume.CheckStepResult needs to take a result that decodes and refuse
// one that does not.
func TestManifestChecksResults(t *testing.T) {
	m := resumeOnboard.Manifest()
	for _, tc := range []struct {
		step, result, why string
	}{
		{"FetchRecords", `[{"ID": "r1", "Owner": "a@example.com", "Value": 3}]`, ""},
		{"FetchRecords", `[{"ID": 1, "Owner": "a@example.com", "Value": 3}]`, "result[0].ID: want a string"},
		{"FetchRecords", `{"ID": "r1"}`, "want an array ([]Record)"},
		{"ScoreAll", `[{"RecordID": "r1", "Owner": "a@example.com", "Points": 2, "Bonus": 1}]`, `Score has no field "Bonus"`},
		{"NotifyOwner", `null`, ""},
		{"NotifyOwner", `"sent"`, "journals nothing but null"},
	} {
		err := resume.CheckStepResult(m, tc.step, json.RawMessage(tc.result))
		switch {
		case tc.why == "" && err != nil:
			t.Errorf("%s %s: %v, want it accepted", tc.step, tc.result, err)
		case tc.why != "" && (err == nil || !strings.Contains(err.Error(), tc.why)):
			t.Errorf("%s %s: %v, want refused with %q", tc.step, tc.result, err, tc.why)
		}
	}
}
