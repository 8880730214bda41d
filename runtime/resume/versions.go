package resume

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/resumegen/resumegen/runtime/deploy"
	"github.com/resumegen/resumegen/runtime/journal"
)

// This file decides which registered version executes a claimed run: the
// version it is pinned to when this program has it (an old version kept
// with old-version-of= drains its runs), else the current version when
// the run may continue on it (package deploy's rule; the run is moved,
// and the move recorded on it), else none: the run parks for a person.

// entry is what versionFor decided for a claimed run.
type entry struct {
	// def executes the run; nil when it does not execute here.
	def *WorkflowDef
	// giveBack is set when the run is not this program's to decide about
	// (an unknown workflow, a newer version, a method without its
	// receiver): it is released untouched, and err says why.
	giveBack bool
	// park is set when the run may not continue on this program's version:
	// it parks, kind version, with park as its error.
	park string
	err  error
}

// versionFor decides which registered version of run's workflow, whose
// current version is cur, executes run, moving it to cur when it may
// continue there. run and steps are updated to
// what the journal holds after a move (version, workflow, relabelled step
// keys).
func (e *Engine) versionFor(ctx context.Context, lease journal.Lease, cur *WorkflowDef, run *journal.RunRecord, steps []journal.StepRecord) entry {
	if def, ok := lookupVersion(run.Workflow, run.Version); ok {
		if run.Workflow != def.QualifiedName() {
			// A run stored under an earlier identity of the workflow,
			// pinned to a version this program has: only its name moves.
			m := journal.Move{Workflow: def.QualifiedName(), FromWorkflow: run.Workflow, From: run.Version, To: run.Version,
				Why: "workflow " + run.Workflow + " is now named " + def.QualifiedName()}
			if err := e.move(ctx, lease, run, steps, m); err != nil {
				return entry{err: err}
			}
		}
		return entry{def: def}
	}
	if err := e.canRun(cur); err != nil {
		return entry{giveBack: true, err: fmt.Errorf("run %s: %w", run.RunID, err)}
	}
	from, to, err := e.definitions(ctx, run, cur)
	if err != nil {
		return entry{err: fmt.Errorf("run %s: %w", run.RunID, err)}
	}
	if from.found && from.seq > to.seq {
		// Never moved back: a process that has the run's version runs it.
		return entry{giveBack: true, err: fmt.Errorf("run %s: pinned to version %s of %s, newer than this program's %s: left to a process that has it",
			run.RunID, run.Version, run.Workflow, cur.Version)}
	}
	d := from.decide(run.Version, definitionOf(cur), steps)
	if !d.Continues {
		return entry{park: d.Why + "; " + e.versionMismatch(ctx, *run, cur)}
	}
	m := journal.Move{Workflow: cur.QualifiedName(), From: run.Version, To: cur.Version, Why: d.Why, Renames: d.Renames}
	if run.Workflow != m.Workflow {
		m.FromWorkflow = run.Workflow
	}
	if err := e.move(ctx, lease, run, steps, m); err != nil {
		return entry{err: err}
	}
	return entry{def: cur}
}

// enterVersion returns the registered version that executes run (see
// versionFor), or nil when the entry ends here: the run parked on a
// version change, was given back untouched, or could not be moved; res
// and err are then the entry's outcome.
func (e *Engine) enterVersion(ctx context.Context, lease journal.Lease, cur *WorkflowDef, run *journal.RunRecord, steps []journal.StepRecord) (*WorkflowDef, Result, error) {
	v := e.versionFor(ctx, lease, cur, run, steps)
	switch {
	case v.def != nil:
		return v.def, Result{}, nil
	case v.park != "":
		run.Status, run.AttentionStep, run.AttentionKind, run.Error = StatusNeedsAttention, "", AttentionKindVersion, v.park
		res, err := e.finish(ctx, lease, *run)
		return nil, res, err
	case v.giveBack:
		// Not this program's run to decide about: give it back untouched.
		run.Status, run.Error = StatusPending, ""
		e.finish(ctx, lease, *run)
		return nil, resultOf(*run), &notHere{v.err}
	case errors.Is(v.err, ErrLeaseLost):
		return nil, resultOf(*run), v.err
	}
	// The journal failed: leave the run to a resume.
	run.Status, run.Error = StatusPending, v.err.Error()
	e.finish(ctx, lease, *run)
	return nil, resultOf(*run), v.err
}

// storedDefinition is a version's definition as the journal holds it.
type storedDefinition struct {
	def   deploy.Definition
	found bool  // the journal holds the version's manifest
	ok    bool  // and its definition decodes
	seq   int64 // the manifest's Seq
}

// decide applies deploy's rule to a run pinned to this stored version
// that journaled steps, for version to.
func (s storedDefinition) decide(version string, to deploy.Definition, steps []journal.StepRecord) deploy.Decision {
	if !s.ok {
		return deploy.Unknown(version)
	}
	keys := make([]string, len(steps))
	for i, st := range steps {
		keys[i] = st.StepKey
	}
	return deploy.Decide(s.def, to, keys)
}

// definitions reads the stored definitions of the run's version and of the
// current version cur, both under the run's workflow name (the engine saves
// each version under every alias too), so that their Seq compare.
func (e *Engine) definitions(ctx context.Context, run *journal.RunRecord, cur *WorkflowDef) (from, to storedDefinition, err error) {
	from, err = e.loadDefinition(ctx, run.Workflow, run.Version)
	if err != nil {
		return from, to, err
	}
	to, err = e.loadDefinition(ctx, run.Workflow, cur.Version)
	if err == nil && !to.found {
		err = fmt.Errorf("the manifest of version %s of %s is not in the journal", cur.Version, run.Workflow)
	}
	return from, to, err
}

func (e *Engine) loadDefinition(ctx context.Context, workflow, version string) (storedDefinition, error) {
	m, found, err := e.journal.LoadManifest(ctx, workflow, version)
	if err != nil {
		return storedDefinition{}, fmt.Errorf("read the manifest of version %s of %s: %w", version, workflow, err)
	}
	s := storedDefinition{found: found, seq: m.Seq}
	if found && len(m.Definition) > 0 {
		s.ok = json.Unmarshal(m.Definition, &s.def) == nil
	}
	return s, nil
}

// move re-pins run to m.To in the journal, then relabels the run and its
// steps as the journal now holds them.
func (e *Engine) move(ctx context.Context, lease journal.Lease, run *journal.RunRecord, steps []journal.StepRecord, m journal.Move) error {
	m.By = "engine " + e.owner
	if err := e.journal.MoveRun(ctx, lease, m); err != nil {
		return fmt.Errorf("run %s: move from version %s to %s: %w", run.RunID, m.From, m.To, err)
	}
	run.Workflow, run.Version = m.Workflow, m.To
	run.Moves = append(run.Moves, m)
	for i := range steps {
		steps[i].StepKey = journal.RenameKey(steps[i].StepKey, m.Renames)
		if n, ok := m.Renames[steps[i].Name]; ok {
			steps[i].Name = n
		}
	}
	return nil
}

// definitionOf is def's step list as package deploy reads it and the
// journal stores it.
func definitionOf(def *WorkflowDef) deploy.Definition {
	d := deploy.Definition{Workflow: def.QualifiedName(), Version: def.Version, Shape: def.Shape, Steps: []deploy.Step{}}
	for _, s := range def.Steps {
		d.Steps = append(d.Steps, deploy.Step{
			Name: s.Name, Callee: s.Callee, Signature: s.Signature, Policy: s.Policy.String(),
			Key: s.Key, JSON: s.JSON, Shape: s.Shape, RenamedFrom: s.RenamedFrom, Child: s.Child,
		})
	}
	return d
}

// named reports whether name is w's identity or one of its aliases: a run
// stored under it is a run of w.
func (w *WorkflowDef) named(name string) bool {
	return name == w.QualifiedName() || slices.Contains(w.Aliases, name)
}

// notHere is the error of a run entry that gave its run back untouched:
// the run is pinned to a version left to a process that has it.
type notHere struct{ err error }

func (e *notHere) Error() string { return e.err.Error() }
func (e *notHere) Unwrap() error { return e.err }
