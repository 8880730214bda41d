// Package deploy decides whether a run pinned to one version of a workflow
// may continue on another: the continuation rule of a deploy.
//
// A run pinned to version F continues on version T iff its input's JSON
// shape is unchanged (the "input ..." lines of the definitions' Shape; the
// output may change, it is not journaled before the run ends), F's steps
// up to the last one it journaled (by position in F's step list, rows of
// any status; none when it journaled nothing) are, one by one, the same in
// T: name (after T's renamed-from), callee, signature, policy, key=,
// journaled shape and type, child call; and, when a process entered the
// run before, no step after those is a likely rename (see [LikelyRenames]):
// such a run may have executed that step's effect without journaling it
// (a default step killed between its effect and its row), and under a new
// name the step would execute again under another idempotency key.
// Anything else would stop the run: it parks for a person with the reason.
// The package is pure: the engine and resumectl check-deploy give it the
// definitions the journal stores.
package deploy

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/resumegen/resumegen/runtime/journal"
)

// Definition is a workflow version's step list, as the journal stores it
// beside the version's manifest (journal.ManifestRecord.Definition).
type Definition struct {
	// Workflow is the workflow's identity; Version its version.
	Workflow string `json:"workflow"`
	Version  string `json:"version"`
	// Package is the import path of the workflow's package, "" in a
	// definition stored before it was recorded. A step callee of that
	// package is the same callee in a version whose package moved (its
	// identity kept by name=).
	Package string `json:"package,omitempty"`
	// Shape is the JSON shape of the run's input and output, one field a
	// line ("input arg 1 Order: ID string", "output Receipt: Total int").
	Shape []string `json:"shape,omitempty"`
	// Steps lists the steps in source order.
	Steps []Step `json:"steps"`
	// Graph is the workflow's step graph as a Mermaid flowchart, drawn by
	// resumegen from the source; "" when unknown.
	Graph string `json:"graph,omitempty"`
}

// Step is one step of a [Definition].
type Step struct {
	// Name is the step's journal name; Callee the qualified name of what
	// it calls; Signature the callee's type; Policy "default", "once" or
	// "tx".
	Name      string `json:"name"`
	Callee    string `json:"callee"`
	Signature string `json:"signature"`
	Policy    string `json:"policy"`
	// Key is the key= expression as written, "" for a step journaled by
	// occurrence.
	Key string `json:"key,omitempty"`
	// JSON is the Go type of the value the step journals; Shape that
	// value's JSON shape, one field a line.
	JSON  string   `json:"json,omitempty"`
	Shape []string `json:"shape,omitempty"`
	// RenamedFrom lists the step's earlier names (renamed-from=).
	RenamedFrom []string `json:"renamed_from,omitempty"`
	// Child marks a call of another workflow (a child run).
	Child bool `json:"child,omitempty"`
	// Pos is the step's call site in the code of the version, "file.go:42"
	// (the file's path relative to the module root); "" when unknown. It
	// does not enter the version nor the continuation rule.
	Pos string `json:"pos,omitempty"`
}

// Decision says whether a run continues on the other version, and why.
type Decision struct {
	// Continues is true when the run may be moved to the other version
	// and executed there; false when it would stop.
	Continues bool
	// Why names what made the move safe, or the step that differs and how
	// ("step 3 Score: signature func(int) error -> func(string) error").
	Why string
	// Renames maps the names of the run's journaled rows, and of the steps
	// of the run's version, that the other version calls otherwise
	// (renamed-from=) to that name; nil when none, and when the run would
	// stop. A move records them (journal.Move.Renames): it relabels the
	// rows, and a renamed step keeps the idempotency key and child run of
	// its earlier name, journaled or not (resume.StepInfo.IdempotencyKey).
	Renames map[string]string
}

// Run is what the continuation rule reads of a run.
type Run struct {
	// Keys are the step keys of the run's journaled rows ("A", "A#2",
	// "A[k]"), of any status.
	Keys []string
	// Entered reports whether a process entered the run before (its
	// attempts before the one deciding): that process may have executed
	// the effect of a step after the journaled ones without journaling
	// it. A run never entered executed nothing.
	Entered bool
}

// Unknown is the decision for a run pinned to a version whose definition
// the journal does not hold: it would stop.
func Unknown(version string) Decision {
	return Decision{Why: "the journal has no step list for version " + version + ": saved by an older resumegen"}
}

// Decide applies the continuation rule to run, pinned to version from,
// for the version to.
func Decide(from, to Definition, run Run) Decision {
	if why := inputChange(from, to); why != "" {
		return Decision{Why: why}
	}
	from, moved := relocated(from, to)
	renames := renamesOf(to)
	last := -1
	var names []string // journaled step names, first seen first
	for _, key := range run.Keys {
		name := journal.StepName(key)
		i := lastIndex(from.Steps, name)
		if i < 0 {
			return Decision{Why: fmt.Sprintf("step %s journaled by the run is not a step of version %s", name, from.Version)}
		}
		last = max(last, i)
		if !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	likely := LikelyRenames(from, to)
	for i := 0; i <= last; i++ {
		f := from.Steps[i]
		if i >= len(to.Steps) {
			return Decision{Why: fmt.Sprintf("step %d %s: version %s has %d steps, and the run journaled up to step %d", i+1, f.Name, to.Version, len(to.Steps), last+1)}
		}
		if diff := stepChange(f, to.Steps[i], renames); diff != "" {
			why := fmt.Sprintf("step %d %s: %s", i+1, f.Name, diff)
			if r, ok := likelyAt(likely, i); ok {
				why += "; " + r.Fix()
			}
			return Decision{Why: why}
		}
	}
	if run.Entered {
		for _, r := range likely {
			if r.Index > last {
				return Decision{Why: fmt.Sprintf("step %d %s: %s, and the run may have executed %s before its row was written (a process entered it before): %s",
					r.Index+1, r.From, r.What(), r.From, r.Fix())}
			}
		}
	}
	var d Decision
	if len(run.Keys) == 0 {
		d = Decision{Continues: true, Why: "no step journaled"}
	} else {
		d = continued(from, to, names, last, renames)
	}
	d.Renames = stepRenames(from, to, d.Renames)
	if len(d.Renames) > 0 {
		d.Why += " (renamed " + renameList(from, d.Renames) + ")"
	}
	if moved {
		d.Why += fmt.Sprintf(" (package %s moved to %s)", from.Package, to.Package)
	}
	return d
}

// LikelyRename is a step of one version that looks like a step of another
// renamed without renamed-from=: at the same place in the step list, of
// the same callee (or of the callee renamed as the step was) and
// signature, under a name the other version does not have, while the
// other's name is gone.
type LikelyRename struct {
	// Index is the place in both step lists, from 0.
	Index int
	// From is the step's name in the earlier version, To in the later.
	From, To string
}

// What says what the likely rename is, for a message.
func (r LikelyRename) What() string {
	return fmt.Sprintf("looks like step %s renamed %s (the same callee and signature at the same place, without renamed-from=)", r.From, r.To)
}

// Fix says how to settle it, for a message.
func (r LikelyRename) Fix() string {
	return fmt.Sprintf("if %s is %s renamed, add renamed-from=%s to it, so that runs keep %s's rows and idempotency key (a run parked already continues with the rename once accepted: resumectl runs accept-version); if it is a new step, confirm it with resumectl runs accept-version", r.To, r.From, r.From, r.From)
}

// LikelyRenames lists the steps of to that look like steps of from renamed
// without renamed-from= (see [LikelyRename]), in step order. A step whose
// renamed-from= names the earlier step is a declared rename, not a likely
// one.
func LikelyRenames(from, to Definition) []LikelyRename {
	from, _ = relocated(from, to)
	renames := renamesOf(to)
	var out []LikelyRename
	for i := 0; i < min(len(from.Steps), len(to.Steps)); i++ {
		f, t := from.Steps[i], to.Steps[i]
		if f.Name == t.Name || renamed(f.Name, renames) == t.Name || hasStep(to, f.Name) || hasStep(from, t.Name) {
			continue
		}
		if (t.Callee == f.Callee || renamedCallee(f, t.Name, t.Callee)) && t.Signature == f.Signature && t.Child == f.Child {
			out = append(out, LikelyRename{Index: i, From: f.Name, To: t.Name})
		}
	}
	return out
}

func likelyAt(likely []LikelyRename, i int) (LikelyRename, bool) {
	for _, r := range likely {
		if r.Index == i {
			return r, true
		}
	}
	return LikelyRename{}, false
}

// hasStep reports whether d has a step named name.
func hasStep(d Definition, name string) bool {
	return slices.ContainsFunc(d.Steps, func(s Step) bool { return s.Name == name })
}

// stepRenames adds to journaled (the renames of the run's journaled rows)
// every step of from that to calls otherwise (renamed-from=), journaled or
// not: a move records them, so that a renamed step keeps its earlier
// name's idempotency key even when the run died between its effect and
// its row. A name to still has is no rename.
func stepRenames(from, to Definition, journaled map[string]string) map[string]string {
	out := journaled
	for _, t := range to.Steps {
		for _, old := range t.RenamedFrom {
			if _, ok := out[old]; ok || !hasStep(from, old) || hasStep(to, old) {
				continue
			}
			if out == nil {
				out = map[string]string{}
			}
			out[old] = t.Name
		}
	}
	return out
}

// StepRenames maps every step name of from that to calls otherwise
// (renamed-from=) to its name in to; nil when none. See
// [Decision.Renames].
func StepRenames(from, to Definition) map[string]string {
	from, _ = relocated(from, to)
	return stepRenames(from, to, nil)
}

// renameList is renames as "A -> B, C -> D", in from's step order, then
// any other (journaled under an earlier name) by name.
func renameList(from Definition, renames map[string]string) string {
	var olds []string
	for _, s := range from.Steps {
		if _, ok := renames[s.Name]; ok && !slices.Contains(olds, s.Name) {
			olds = append(olds, s.Name)
		}
	}
	for _, old := range slices.Sorted(maps.Keys(renames)) {
		if !slices.Contains(olds, old) {
			olds = append(olds, old)
		}
	}
	rs := make([]string, len(olds))
	for i, old := range olds {
		rs[i] = old + " -> " + renames[old]
	}
	return strings.Join(rs, ", ")
}

// relocated is from with the callees of its own package written in to's
// package, when the workflow's package moved between the versions (its
// identity kept by name=): a step function that moved with it is the same
// step. It reports whether the package moved.
func relocated(from, to Definition) (Definition, bool) {
	if from.Package == "" || to.Package == "" || from.Package == to.Package {
		return from, false
	}
	steps := make([]Step, len(from.Steps))
	for i, s := range from.Steps {
		if rest, ok := strings.CutPrefix(s.Callee, from.Package+"."); ok {
			s.Callee = to.Package + "." + rest
		}
		steps[i] = s
	}
	from.Steps = steps
	return from, true
}

// continued is the decision for a run whose journaled steps are the
// unchanged prefix from.Steps[:last+1] of to.
func continued(from, to Definition, journaled []string, last int, renames map[string]string) Decision {
	d := Decision{Continues: true}
	var prefix []string
	for _, s := range to.Steps[:last+1] {
		if !slices.Contains(prefix, s.Name) {
			prefix = append(prefix, s.Name)
		}
	}
	for _, n := range journaled {
		fromName := from.Steps[lastIndex(from.Steps, n)].Name
		if toName := renamed(fromName, renames); toName != n {
			if d.Renames == nil {
				d.Renames = map[string]string{}
			}
			d.Renames[n] = toName
		}
	}
	word := "steps"
	if len(prefix) == 1 {
		word = "step"
	}
	d.Why = fmt.Sprintf("%s %s journaled: an unchanged prefix of version %s", word, strings.Join(prefix, ", "), to.Version)
	return d
}

// inputChange says how the run's input shape differs between the
// versions, or "" when it does not.
func inputChange(from, to Definition) string {
	a, b := inputLines(from.Shape), inputLines(to.Shape)
	if slices.Equal(a, b) {
		return ""
	}
	return "the run's input changed: " + lineDiff(a, b)
}

func inputLines(shape []string) []string {
	var out []string
	for _, l := range shape {
		if strings.HasPrefix(l, "input ") {
			out = append(out, l)
		}
	}
	return out
}

// lineDiff lists the lines only in a ("- line") and only in b ("+ line").
func lineDiff(a, b []string) string {
	var out []string
	for _, l := range a {
		if !slices.Contains(b, l) {
			out = append(out, "- "+l)
		}
	}
	for _, l := range b {
		if !slices.Contains(a, l) {
			out = append(out, "+ "+l)
		}
	}
	if len(out) == 0 {
		return "the same lines in another order"
	}
	return strings.Join(out, ", ")
}

// renamesOf maps every earlier name of a step of d to the step's name.
func renamesOf(d Definition) map[string]string {
	m := map[string]string{}
	for _, s := range d.Steps {
		for _, old := range s.RenamedFrom {
			m[old] = s.Name
		}
	}
	return m
}

func renamed(name string, renames map[string]string) string {
	if n, ok := renames[name]; ok {
		return n
	}
	return name
}

// lastIndex is the index of the last step of steps that a row named name
// counts for (its name, or one of its earlier names), or -1.
func lastIndex(steps []Step, name string) int {
	for i := len(steps) - 1; i >= 0; i-- {
		if steps[i].Name == name || slices.Contains(steps[i].RenamedFrom, name) {
			return i
		}
	}
	return -1
}

// stepChange says how step t of the new version differs from step f of
// the old, "" when it is the same step: "policy default -> once; key none
// -> o.ID".
func stepChange(f, t Step, renames map[string]string) string {
	var out []string
	change := func(what, a, b string) {
		if a != b {
			out = append(out, fmt.Sprintf("%s %s -> %s", what, orNone(a), orNone(b)))
		}
	}
	name := renamed(f.Name, renames)
	change("name", name, t.Name)
	if t.Callee != f.Callee && !renamedCallee(f, name, t.Callee) {
		change("callee", f.Callee, t.Callee)
	}
	change("signature", f.Signature, t.Signature)
	change("policy", f.Policy, t.Policy)
	change("key", f.Key, t.Key)
	change("journaled type", f.JSON, t.JSON)
	if !slices.Equal(f.Shape, t.Shape) {
		out = append(out, "journaled shape "+lineDiff(f.Shape, t.Shape))
	}
	if f.Child != t.Child {
		out = append(out, kind(f.Child)+" -> "+kind(t.Child))
	}
	return strings.Join(out, "; ")
}

// renamedCallee reports whether callee is f's callee renamed with its step
// (renamed-from= on the declaration: pkg.Score -> pkg.Rate).
func renamedCallee(f Step, name, callee string) bool {
	return name != f.Name && strings.HasSuffix(f.Callee, "."+f.Name) &&
		callee == strings.TrimSuffix(f.Callee, f.Name)+name
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

func kind(child bool) string {
	if child {
		return "a child workflow call"
	}
	return "a step call"
}
