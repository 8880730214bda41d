package model

import (
	"github.com/resumegen/resumegen/runtime/resume"
)

// Definition is the workflow's resume.WorkflowDef as the generated code
// registers it, without what only code can hold (Run, Receiver, Errors):
// the emitter renders the generated literal from it, and resumectl
// check-deploy compares the journal's definitions with it, so the two
// cannot disagree. ID is set only when the identity is not the import-path
// name (or for an old version), as the literal has it.
func (w *Workflow) Definition() *resume.WorkflowDef {
	def := &resume.WorkflowDef{Package: w.Package, Name: w.Name, Version: w.Version, Lineage: w.Lineage, Graph: w.Graph, Shape: w.Shape,
		Timeout: w.Directive.Workflow.Timeout, Queue: w.Directive.Workflow.Queue}
	if w.ID != w.Package+"."+w.Name || w.Old {
		def.ID, def.Aliases, def.Old = w.ID, w.Aliases, w.Old
	}
	for _, s := range w.Steps {
		def.Steps = append(def.Steps, s.Definition())
	}
	return def
}

// policies maps a step's policy to the runtime's. A child call is
// journaled at least once: re-executed after a crash, it finds its child
// run and resumes or replays it.
var policies = map[string]resume.Policy{"default": resume.PolicyDefault, "once": resume.PolicyOnce, "tx": resume.PolicyTx, PolicyChild: resume.PolicyDefault}

// Definition is the step's resume.StepDef as the generated code holds it.
func (s *Step) Definition() resume.StepDef {
	d := resume.StepDef{Name: s.Name, Callee: s.Callee, Signature: s.Signature, Policy: policies[s.Policy], Child: s.Child, Deferred: s.Deferred,
		Attempts: s.Opts.Attempts, Timeout: s.Opts.Timeout, JSON: s.JSON, Key: s.Key, RenamedFrom: s.RenamedFrom, Pos: s.Pos, Site: s.SiteID, Shape: s.Shape}
	if s.Opts.HasBackoff {
		d.BackoffMin, d.BackoffMax = s.Opts.BackoffMin, s.Opts.BackoffMax
	}
	return d
}
