// Package stephook is the engine's seam for the test harness
// (runtime/resumetest): a hook carried in a run's context sees every
// execution of a step's code and may hand the step a test double instead
// of its function, and package resume describes its registered workflows
// to the harness. Nothing here is part of the user's API of package
// resume.
package stephook

import "context"

// Step is one execution of a step's code: one attempt.
type Step struct {
	RunID    string
	Workflow string // the workflow's qualified name
	StepKey  string // Name, Name#2, Name[key]
	Name     string
	Policy   string // default, once or tx
	Attempt  int
	// Entry identifies the entry of the run's body (one claim's
	// execution): it differs once the run resumed. Compare it with ==.
	Entry any
}

// Hook sees the executions of step code in the runs whose context carries
// it.
type Hook interface {
	// Reached is called as a workflow body reaches a step call, whether the
	// step then executes or replays its journaled outcome (Attempt is 0).
	Reached(s Step)
	// Callee is called as the code of step s is about to execute, with fn,
	// the function the step calls (a func value of the step's own type).
	// It returns the function to call instead: fn itself, a double of
	// fn's type, or fn wrapped to observe the call. Package resume panics
	// when the returned value is not of fn's type.
	Callee(s Step, fn any) any
}

type hookKey struct{}

// With returns ctx carrying h: the runs an engine executes with that
// context (or one derived from it) report to h.
func With(ctx context.Context, h Hook) context.Context {
	return context.WithValue(ctx, hookKey{}, h)
}

// From returns the hook ctx carries, or nil.
func From(ctx context.Context) Hook {
	h, _ := ctx.Value(hookKey{}).(Hook)
	return h
}

// Workflow describes a registered workflow.
type Workflow struct {
	Name  string // qualified: package path, dot, function name
	Steps []StepDesc
}

// StepDesc describes one step of a workflow, as its generated code does.
type StepDesc struct {
	Name      string
	Signature string // the callee's type, as the manifest shows it
	Policy    string
	// JSON is the Go type of what the step journals ("null" for a step
	// that returns only an error; "" when not recorded).
	JSON string
	// Child is, for a call of another workflow, its qualified name.
	Child string
}

// Describe describes the registered workflow wf: a workflow function (or
// method value), or a qualified name as a string. Package resume sets it.
var Describe func(wf any) (Workflow, error)
