package resume

import (
	"strings"
	"testing"
)

// TestAwaitedNames reads the awaited event names from manifests as
// WorkflowDef.Manifest renders them: the awaits among the step lines, none
// for a version without awaits, and "unknown" for an empty manifest (a
// run stored before manifests were), which is not refused.
func TestAwaitedNames(t *testing.T) {
	def := &WorkflowDef{Package: "example.com/app", Name: "Approve", Shape: []string{"input arg 2 util.Expense: ID string", "output Outcome: status string"}, Steps: []StepDef{
		{Name: "Submit", Callee: "example.com/app.Submit", Signature: "func(context.Context, Expense) error", JSON: "null"},
		{Name: "approval", Callee: "github.com/resumegen/resumegen/runtime/resume.Await", Signature: "func(context.Context, string, time.Duration) (Decision, error)", JSON: "Decision",
			Shape: []string{"result Decision: approved bool"}},
		{Name: "resume.Sleep", Callee: "github.com/resumegen/resumegen/runtime/resume.Sleep", Signature: "func(context.Context, time.Duration) error"},
		{Name: "audit.done", Callee: "github.com/resumegen/resumegen/runtime/resume.Await", Signature: "func(context.Context, string, time.Duration) (string, error)", JSON: "string"},
	}}
	names, ok := awaitedNames(def.Manifest())
	if !ok || strings.Join(names, " ") != "approval audit.done" {
		t.Errorf("awaitedNames = %q, %v, want [approval audit.done], true", names, ok)
	}
	def.Steps = def.Steps[:1]
	if names, ok := awaitedNames(def.Manifest()); !ok || len(names) != 0 {
		t.Errorf("no awaits: %q, %v", names, ok)
	}
	if names, ok := awaitedNames(""); ok || len(names) != 0 {
		t.Errorf("empty manifest: %q, %v, want unknown", names, ok)
	}
}
