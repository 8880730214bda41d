package resume

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/resumegen/resumegen/runtime/journal"
)

// ErrNotAwaited matches the error of a signal whose event name the run's
// version never awaits: kept, it would wait for an await that never comes
// (a typo in the name, or a signal to the parent when its child is the
// one waiting). [Engine.SignalWith] with [SignalOptions].Unawaited keeps
// it all the same.
var ErrNotAwaited = errors.New("the run's version never awaits that event")

// ErrOtherWorkflow matches the error of a typed signal or wait (the
// generated run handles, see [SignalRun]) on a run of another workflow.
var ErrOtherWorkflow = errors.New("the run is of another workflow")

// SignalOptions tune [Engine.SignalWith].
type SignalOptions struct {
	// Unawaited keeps the signal even when the run's version never awaits
	// its name, for a run that will move to a version that does (see
	// [Engine.AcceptVersion]).
	Unawaited bool
}

// SignalWith is [Engine.Signal] with options.
func (e *Engine) SignalWith(ctx context.Context, runID, name string, payload any, opts SignalOptions) error {
	raw, err := signalPayload(runID, name, payload)
	if err != nil {
		return err
	}
	return e.signalJSON(ctx, runID, name, raw, opts)
}

// awaitedNames lists, from a manifest (see [WorkflowDef.Manifest]), the
// event names its version awaits; ok is false for a manifest that lists
// no step at all (unknown: an empty manifest).
func awaitedNames(manifest string) (names []string, ok bool) {
	const await = "github.com/resumegen/resumegen/runtime/resume.Await"
	for _, l := range strings.Split(manifest, "\n") {
		f := strings.SplitN(strings.TrimSpace(l), " ", 3)
		if len(f) < 3 || strings.HasSuffix(f[0], ":") {
			continue // a shape line ("input arg 2 ..."; "Name: journals T")
		}
		if strings.Contains(f[1], ".") {
			ok = true // a step line: NAME CALLEE SIGNATURE POLICY
		}
		if f[1] == await {
			names = append(names, f[0])
		}
	}
	return names, ok
}

// checkAwaited refuses name for run, whose version's manifest is
// manifest, when the version never awaits it, saying which names it does
// await and which child workflows of it await this one.
func checkAwaited(run journal.RunRecord, manifest, name string) error {
	names, known := awaitedNames(manifest)
	if !known {
		return nil // the journal does not say (a run stored before manifests were)
	}
	for _, n := range names {
		if n == name {
			return nil
		}
	}
	awaits := "no event"
	if len(names) > 0 {
		awaits = "only " + quoteList(names)
	}
	hint := ""
	if kids := childrenAwaiting(run, name); len(kids) > 0 {
		hint = fmt.Sprintf("; its child workflow %s awaits it: signal the child run (%s/STEP, resumectl runs show %s lists them)", strings.Join(kids, ", "), run.RunID, run.RunID)
	}
	return fmt.Errorf("run %s, signal %s: version %s of workflow %s awaits %s%s (keep it anyway with SignalOptions.Unawaited, resumectl runs signal -unawaited): %w",
		run.RunID, name, run.Version, run.Workflow, awaits, hint, ErrNotAwaited)
}

func quoteList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return strings.Join(q, ", ")
}

// childrenAwaiting names the child workflows called by run's version (as
// this program registered it) that await name.
func childrenAwaiting(run journal.RunRecord, name string) []string {
	def, ok := lookupVersion(run.Workflow, run.Version)
	if !ok {
		return nil
	}
	var out []string
	for _, s := range def.Steps {
		if !s.Child {
			continue
		}
		child := registeredByCallee(s.Callee)
		if child == nil {
			continue
		}
		for _, cs := range child.Steps {
			if cs.Callee == "github.com/resumegen/resumegen/runtime/resume.Await" && cs.Name == name {
				out = append(out, child.QualifiedName())
				break
			}
		}
	}
	sort.Strings(out)
	return out
}

// registeredByCallee returns the current definition of the workflow whose
// function is callee (Package.Name), or nil.
func registeredByCallee(callee string) *WorkflowDef {
	registry.RLock()
	defer registry.RUnlock()
	for _, d := range registry.byName {
		if d.Package+"."+d.Name == callee {
			return d
		}
	}
	return nil
}

// checkWorkflow refuses a run of another workflow than def's, as the
// typed handles address runs of one workflow.
func checkWorkflow(ctx context.Context, e *Engine, def *WorkflowDef, runID string) error {
	run, _, err := e.journal.LoadRun(ctx, runID)
	if err != nil {
		return fmt.Errorf("run %s: %w", runID, err)
	}
	if identityOf(run.Workflow) == def.QualifiedName() || run.Workflow == def.QualifiedName() {
		return nil
	}
	for _, a := range def.Aliases {
		if run.Workflow == a {
			return nil
		}
	}
	return fmt.Errorf("run %s is a run of workflow %s, not of %s: %w", runID, run.Workflow, def.QualifiedName(), ErrOtherWorkflow)
}
