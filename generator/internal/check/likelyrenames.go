package check

import (
	"github.com/resumegen/resumegen/generator/internal/load"
	"github.com/resumegen/resumegen/generator/internal/model"
	"github.com/resumegen/resumegen/runtime/deploy"
)

// LikelyRenames warns, when the generator regenerates a workflow, about
// each step that looks like a step of the previous generated file renamed
// without renamed-from= (package deploy's rule: the same place in the step
// list, the same callee, or the callee renamed with the step, and
// signature, the old name gone): a run that executed the old step's effect
// without journaling it would execute it again under another name and
// idempotency key. It is a warning, not a refusal: the runtime never takes
// such a rename as safe (a run that may have executed the step parks with
// the same fix, and an operator's accept-version confirms it as a new
// step), and a refusal could only be silenced by running go generate
// again, once the previous file holds the new name. go vet does not run
// it: it compiles the generated files it would compare with.
var LikelyRenames = &Check{
	Name:          "likelyrenames",
	Doc:           "a step renamed without renamed-from= is named as a likely rename",
	GeneratorOnly: true,
	Run: func(p *Pass) {
		p.workflows(func(pkg *model.Package, w *model.Workflow) {
			if w.Prior != nil && !w.Old {
				likelyRenames(p, w)
			}
		})
	},
}

func likelyRenames(p *Pass, w *model.Workflow) {
	cur := w.Definition().Definition()
	for _, r := range deploy.LikelyRenames(priorDefinition(w.Prior), cur) {
		s := w.Steps[r.Index]
		p.Warnf(s.Call.Pos(), "step %s looks like step %s of %s renamed (the same callee and signature at the same place, without renamed-from=): "+
			"a run that executed %s before its row was written would execute it again under another idempotency key; "+
			"if it is %s renamed, add renamed-from=%s to its //resume:step directive; if it is a new step, runs that may have executed %s stop on the version change until an operator confirms it (resumectl runs accept-version)",
			r.To, r.From, p.Rel(w.Prior.File), r.From, r.From, r.From, r.From)
	}
}

// priorDefinition is a recorded definition as package deploy reads it.
func priorDefinition(pr *load.Prior) deploy.Definition {
	d := deploy.Definition{Workflow: pr.Identity(), Package: pr.Package, Version: pr.Version}
	for _, s := range pr.Steps {
		d.Steps = append(d.Steps, deploy.Step{Name: s.Name, Callee: s.Callee, Signature: s.Signature, Child: s.Child, RenamedFrom: s.RenamedFrom})
	}
	return d
}
