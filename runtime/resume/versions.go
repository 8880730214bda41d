package resume

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/resumegen/resumegen/runtime/deploy"
	"github.com/resumegen/resumegen/runtime/journal"
)

// This file decides which registered version executes a claimed run: the
// version it is pinned to when this program has it (an old version kept
// with old-version-of= drains its runs), else, for a run of a version the
// current one descends from (WorkflowDef.Lineage), the current version
// when the run may continue on it (package deploy's rule; the run is
// moved, and the move recorded on it), else none: the run parks for a
// person. A run of a version this program neither has nor descends from
// is given back untouched.

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
// continue there. run and steps are updated to what the journal holds
// after a move (workflow, version, relabelled step keys).
func (e *Engine) versionFor(ctx context.Context, lease journal.Lease, cur *WorkflowDef, run *journal.RunRecord, steps []journal.StepRecord) entry {
	if def, ok := lookupVersion(run.Workflow, run.Version); ok {
		if err := e.relabel(ctx, lease, def, run, steps); err != nil {
			return moveFailed(err)
		}
		return entry{def: def}
	}
	if err := e.canRun(cur); err != nil {
		return entry{giveBack: true, err: fmt.Errorf("run %s: %w", run.RunID, err)}
	}
	if !descendsFrom(cur, run.Version) {
		// Never moved back, nor across: a process that has the run's
		// version runs it.
		return entry{giveBack: true, err: fmt.Errorf("run %s: pinned to version %s of %s, which this program's version %s does not descend from (not in its lineage: a newer version, or another line of the code): left to a process that has it",
			run.RunID, run.Version, run.Workflow, cur.Version)}
	}
	from, err := e.loadDefinition(ctx, run.Workflow, run.Version)
	if err != nil {
		return entry{err: fmt.Errorf("run %s: %w", run.RunID, err)}
	}
	d := from.decide(*run, definitionOf(cur), steps)
	if !d.Continues {
		return entry{park: d.Why + "; " + e.versionMismatch(ctx, *run, cur)}
	}
	m := journal.Move{Workflow: cur.QualifiedName(), From: run.Version, To: cur.Version, Why: d.Why, Renames: d.Renames}
	if run.Workflow != m.Workflow {
		m.FromWorkflow = run.Workflow
	}
	if err := e.move(ctx, lease, cur, run, steps, m); err != nil {
		return moveFailed(err)
	}
	return entry{def: cur}
}

// relabel moves a run pinned to def's version, without changing its
// version, when it is stored under an earlier identity of the workflow
// (an alias), has rows journaled under earlier names of def's steps, or
// was moved onto def's version by an operator from a version whose steps
// def renames (accept-version records no renames): the run then replays
// those rows instead of executing their steps again, and the renamed
// steps keep their idempotency keys.
func (e *Engine) relabel(ctx context.Context, lease journal.Lease, def *WorkflowDef, run *journal.RunRecord, steps []journal.StepRecord) error {
	accepted, err := e.acceptedRenames(ctx, def, *run)
	if err != nil {
		return fmt.Errorf("run %s: %w", run.RunID, err)
	}
	rows := earlierNames(def, steps)
	m := journal.Move{Workflow: def.QualifiedName(), From: run.Version, To: run.Version}
	var why []string
	if run.Workflow != m.Workflow {
		m.FromWorkflow = run.Workflow
		why = append(why, "workflow "+run.Workflow+" is now named "+m.Workflow)
	}
	if len(accepted) > 0 {
		why = append(why, "steps of version "+run.Moves[len(run.Moves)-1].From+" renamed by this one, accepted by an operator: "+renameText(accepted))
	}
	if len(rows) > 0 {
		why = append(why, "rows journaled under earlier step names relabelled: "+renameText(rows))
	}
	for old, to := range rows {
		if accepted == nil {
			accepted = map[string]string{}
		}
		accepted[old] = to
	}
	m.Renames = accepted
	if len(why) == 0 {
		return nil
	}
	m.Why = strings.Join(why, "; ")
	return e.move(ctx, lease, def, run, steps, m)
}

// renameText is renames as "A -> B, C -> D", by name.
func renameText(renames map[string]string) string {
	var rs []string
	for _, old := range slices.Sorted(maps.Keys(renames)) {
		rs = append(rs, old+" -> "+renames[old])
	}
	return strings.Join(rs, ", ")
}

// acceptedRenames is, for a run an operator moved onto def's version
// (accept-version: its last move) from another, the steps of that version
// def renames (renamed-from=), journaled or not (deploy.StepRenames): the
// operator's move records none, and without them a renamed step whose
// effect happened unjournaled would execute again under a new idempotency
// key. Nil for any other run, and when def renames no step.
func (e *Engine) acceptedRenames(ctx context.Context, def *WorkflowDef, run journal.RunRecord) (map[string]string, error) {
	n := len(run.Moves)
	if n == 0 || !slices.ContainsFunc(def.Steps, func(s StepDef) bool { return len(s.RenamedFrom) > 0 }) {
		return nil, nil
	}
	last := run.Moves[n-1]
	if last.By != "operator" || last.From == last.To || last.To != def.Version {
		return nil, nil
	}
	from, err := e.loadDefinition(ctx, run.Workflow, last.From)
	if err != nil || !from.ok {
		return nil, err
	}
	return deploy.StepRenames(from.def, definitionOf(def)), nil
}

// earlierNames maps the names of step rows that are not def's step names
// but earlier names of one (renamed-from=) to that step's name; nil when
// there are none.
func earlierNames(def *WorkflowDef, steps []journal.StepRecord) map[string]string {
	earlier := map[string]string{}
	for _, s := range def.Steps {
		for _, old := range s.RenamedFrom {
			earlier[old] = s.Name
		}
	}
	if len(earlier) == 0 {
		return nil // the common case: nothing to look for
	}
	for _, s := range def.Steps {
		delete(earlier, s.Name) // a current name is never relabelled
	}
	var out map[string]string
	for _, st := range steps {
		name := journal.StepName(st.StepKey)
		if to, ok := earlier[name]; ok {
			if out == nil {
				out = map[string]string{}
			}
			out[name] = to
		}
	}
	return out
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
	found bool // the journal holds the version's manifest
	ok    bool // and its definition decodes
}

// decide applies deploy's rule to run, pinned to this stored version,
// that journaled steps, for version to.
func (s storedDefinition) decide(run journal.RunRecord, to deploy.Definition, steps []journal.StepRecord) deploy.Decision {
	if !s.ok {
		return deploy.Unknown(run.Version)
	}
	keys := make([]string, len(steps))
	for i, st := range steps {
		keys[i] = st.StepKey
	}
	return deploy.Decide(s.def, to, deploy.Run{Keys: keys, Entered: enteredBefore(run)})
}

// enteredBefore reports whether a process entered the claimed run before
// the claim that holds it now (its Attempts count that claim): it may
// have executed a step's effect without journaling it.
func enteredBefore(run journal.RunRecord) bool { return run.Attempts > 1 }

// descendsFrom reports whether version is older than cur by the code's
// lineage: in the lineage of cur or of an old version of cur's workflow
// that this program keeps. The order in which the journal first saw the
// versions never counts.
func descendsFrom(cur *WorkflowDef, version string) bool {
	if slices.Contains(cur.Lineage, version) {
		return true
	}
	registry.RLock()
	defer registry.RUnlock()
	for _, d := range registry.versions[cur.QualifiedName()] {
		if slices.Contains(d.Lineage, version) {
			return true
		}
	}
	return false
}

func (e *Engine) loadDefinition(ctx context.Context, workflow, version string) (storedDefinition, error) {
	m, found, err := e.journal.LoadManifest(ctx, workflow, version)
	if err != nil {
		return storedDefinition{}, fmt.Errorf("read the manifest of version %s of %s: %w", version, workflow, err)
	}
	s := storedDefinition{found: found}
	if found && len(m.Definition) > 0 {
		s.ok = json.Unmarshal(m.Definition, &s.def) == nil
	}
	return s, nil
}

// move re-pins run to m.To in the journal, then relabels the run and its
// steps as the journal now holds them.
func (e *Engine) move(ctx context.Context, lease journal.Lease, to *WorkflowDef, run *journal.RunRecord, steps []journal.StepRecord, m journal.Move) error {
	m.By = "engine " + e.owner
	if err := relabelProblem(run.RunID, to, steps, m.Renames); err != nil {
		return err
	}
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

// relabelRefused is why a move cannot relabel a run's rows: the run
// parks instead.
type relabelRefused struct{ error }

// relabelProblem says why the rows of run runID cannot be relabelled by
// renames for version to (see journal.PlanRelabel): two rows would get one
// key, or a renamed step of a child call has no settled outcome, so its
// child run, found by the step's key, would be started anew.
func relabelProblem(runID string, to *WorkflowDef, steps []journal.StepRecord, renames map[string]string) error {
	if len(renames) == 0 {
		return nil
	}
	rows := make([]journal.RelabelRow, len(steps))
	for i, s := range steps {
		name := journal.StepName(s.StepKey)
		child := slices.ContainsFunc(to.Steps, func(d StepDef) bool { return d.Child && d.Name == renamed(name, renames) })
		rows[i] = journal.RelabelRow{Key: s.StepKey, Name: name, Status: s.Status, Final: s.Final, HasChild: child}
	}
	if _, err := journal.PlanRelabel(runID, rows, renames); err != nil {
		return &relabelRefused{fmt.Errorf("moving to version %s: %w", to.Version, err)}
	}
	return nil
}

func renamed(name string, renames map[string]string) string {
	if to, ok := renames[name]; ok {
		return to
	}
	return name
}

// moveFailed is the entry of a run whose move failed with err.
func moveFailed(err error) entry {
	var refused *relabelRefused
	if errors.As(err, &refused) {
		return entry{park: refused.Error() + ": nothing was executed; settle or cancel the run"}
	}
	return entry{err: err}
}

// definitionOf is def's step list as package deploy reads it and the
// journal stores it.
func definitionOf(def *WorkflowDef) deploy.Definition { return def.Definition() }

// Definition is the version's step list as the engine stores it in the
// journal beside its manifest, and as package deploy reads it to decide
// whether a run of another version continues on this one. For generated
// code and tools (resumectl check-deploy) only.
func (def *WorkflowDef) Definition() deploy.Definition {
	d := deploy.Definition{Workflow: def.QualifiedName(), Package: def.Package, Version: def.Version, Shape: def.Shape, Steps: []deploy.Step{}, Graph: def.Graph}
	for _, s := range def.Steps {
		d.Steps = append(d.Steps, deploy.Step{
			Name: s.Name, Callee: s.Callee, Signature: s.Signature, Policy: s.Policy.String(),
			Key: s.Key, JSON: s.JSON, Shape: s.Shape, RenamedFrom: s.RenamedFrom, Child: s.Child, Pos: def.Source.position(s.Pos),
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
