package generator

import (
	"time"

	"github.com/resumegen/resumegen/generator/internal/model"
	"github.com/resumegen/resumegen/runtime/resume"
)

// Workflow is one //resume:workflow function as the generator understood
// it, for tools: its identity in the journal, its version and its steps
// in source order.
type Workflow struct {
	// Package is the import path of the workflow's package.
	Package string
	// Name is the workflow function's name (Type.Method for a method).
	Name string
	// ID is the workflow's identity in the journal: its name=, or
	// Package + "." + Name. An old version (Old) has the identity of the
	// workflow it is a version of.
	ID string
	// Aliases are the workflow's earlier identities: Package + "." + Name
	// when name= is set. An old version has its current workflow's.
	Aliases []string
	// Old marks a function kept as an old version of another workflow
	// (//resume:workflow old-version-of=X): it executes the runs pinned
	// to its version and starts none.
	Old bool
	// OldVersionOf is, for an old version, the Go name of the workflow it
	// is a version of; "" otherwise.
	OldVersionOf string
	// Version is the hash of the step signature list: the first 16 hex
	// digits of the SHA-256 of Canonical.
	Version string
	// Lineage lists the versions the workflow descends from, newest first,
	// read from the package's generated files before this run (see
	// resume.WorkflowDef.Lineage); it does not enter the version.
	Lineage []string
	// Canonical is the text Version hashes: the workflow's signature and
	// the JSON shape of its input and output, then one line per journaled
	// call site with the shape of what it journals.
	Canonical string
	// Steps are the workflow's journaled call sites in source order.
	Steps []*Step
	// Shape is the JSON shape of the run's input and output, one line a
	// field; it enters the version.
	Shape []string
	// Exceptions are the reviewed exceptions (//resume:allow) in the
	// workflow's body and helpers, in source order.
	Exceptions []Exception
	// Graph is the workflow's step graph, a Mermaid flowchart; it does
	// not enter the version.
	Graph string

	model *model.Workflow
}

// Definition returns the resume.WorkflowDef the generated code registers
// (without Run, Receiver, Errors and Source, which only code holds): what a
// worker running this code stores in the journal. Each call returns a new
// value, which the caller may change.
func (w *Workflow) Definition() *resume.WorkflowDef { return w.model.Definition() }

// Step is one journaled call site of a workflow: a step, a child
// workflow's call or a wait.
type Step struct {
	// Name is the step's journal name.
	Name string
	// Callee is the fully qualified callee: example.com/billing.ScoreAll.
	Callee string
	// Signature is the callee's type without receiver, qualified by
	// package name and unqualified for the workflow's own package.
	Signature string
	// Policy is default, once, tx, or child for a child workflow's call.
	Policy string
	// Attempts is the total number of attempts, 1 without retry=;
	// BackoffMin, BackoffMax and Timeout are 0 when not set.
	Attempts               int
	BackoffMin, BackoffMax time.Duration
	Timeout                time.Duration
	// Key is the call site's key= expression as hashed into the version,
	// or "" for a step journaled by occurrence.
	Key string
	// RenamedFrom are the step's earlier names (renamed-from=).
	RenamedFrom []string
	// Shape is the JSON shape of what the step journals, one line a
	// field; JSON the type of the value it journals ("null" for nothing
	// but null).
	Shape []string
	JSON  string
	// Pos is the call site, "dir/file.go:42" relative to the module root,
	// or "" when the module root is unknown.
	Pos string
	// Deferred marks a step reached from a deferred call: a compensation,
	// which executes while a cancelled or expired run unwinds.
	Deferred bool
}

// Exception is a reviewed exception to the non-determinism checks,
// written as //resume:allow at the end of the offending line.
type Exception = model.Exception

// publicWorkflow is the tools' view of a modelled workflow.
func publicWorkflow(w *model.Workflow, exceptions []model.Exception) *Workflow {
	pw := &Workflow{Package: w.Package, Name: w.Name, ID: w.ID, Aliases: w.Aliases, Old: w.Old, OldVersionOf: w.OldVersionOf,
		Version: w.Version, Lineage: w.Lineage, Canonical: model.Canonical(w), Shape: w.Shape, Exceptions: exceptions, Graph: w.Graph, model: w}
	for _, s := range w.Steps {
		ps := &Step{Name: s.Name, Callee: s.Callee, Signature: s.Signature, Policy: s.Policy, Attempts: max(s.Opts.Attempts, 1),
			Timeout: s.Opts.Timeout, Key: s.Key, RenamedFrom: s.RenamedFrom, Shape: s.Shape, JSON: s.JSON, Pos: s.Pos, Deferred: s.Deferred}
		if s.Opts.HasBackoff {
			ps.BackoffMin, ps.BackoffMax = s.Opts.BackoffMin, s.Opts.BackoffMax
		}
		pw.Steps = append(pw.Steps, ps)
	}
	return pw
}
