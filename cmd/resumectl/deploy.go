package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/resumegen/resumegen/generator"
	"github.com/resumegen/resumegen/internal/termesc"
	"github.com/resumegen/resumegen/runtime/deploy"
	"github.com/resumegen/resumegen/runtime/journal"
	"github.com/resumegen/resumegen/runtime/resume"
)

// unfinished are the statuses of runs a deploy's code will meet again:
// runs that run or will (pending, running), that wait for a time, an event
// or a child (waiting: the new code resumes them when the wait ends), that
// wait for a person (needs_attention) or a retry (failed).
var unfinished = []journal.Status{journal.StatusPending, journal.StatusRunning, journal.StatusWaiting, journal.StatusNeedsAttention, journal.StatusFailed}

// Verdicts of check-deploy on an unfinished run.
const (
	verdictContinues = "continues"  // on its own version, which the code has
	verdictMoves     = "moves"      // continues on the code's version: package deploy's rule
	verdictStops     = "would stop" // parks on a version change
	verdictWaits     = "waits"      // pinned to a version the code does not descend from
	verdictStranded  = "stranded"   // its workflow is not in the code
)

// deployRun is check-deploy's verdict on one unfinished run.
type deployRun struct {
	RunID    string `json:"run_id"`
	Workflow string `json:"workflow"`
	Status   string `json:"status"`
	Version  string `json:"version"`
	// Verdict is continues, moves, would stop, waits or stranded.
	Verdict string `json:"verdict"`
	// To is the version the run executes on after the deploy, "" when it
	// would stop, waits or is stranded.
	To string `json:"to,omitempty"`
	// Why explains the verdict in one line.
	Why string `json:"why"`
}

// stoppingRun is a run the code would stop on a version change.
type stoppingRun struct {
	RunID       string `json:"run_id"`
	Workflow    string `json:"workflow"`
	Status      string `json:"status"`
	Version     string `json:"version"`
	CodeVersion string `json:"code_version"`
	Why         string `json:"why"`
}

// deployDiff is the step diff of one workflow version the code moves away
// from.
type deployDiff struct {
	Workflow   string                  `json:"workflow"`
	From       string                  `json:"from"`
	To         string                  `json:"to"`
	Runs       []string                `json:"runs"`
	OldMissing bool                    `json:"old_manifest_missing,omitempty"`
	Diff       []resume.ManifestChange `json:"diff"`
}

// oldVersion is an old version the code keeps (old-version-of=) and how
// many unfinished runs are pinned to it.
type oldVersion struct {
	Workflow string `json:"workflow"`
	Version  string `json:"version"`
	// Func is the Go function that holds the old version.
	Func string `json:"func"`
	Runs int    `json:"runs"`
}

type deployJSON struct {
	OK bool `json:"ok"`
	// Checked counts the unfinished runs; Counts counts them by status,
	// and Waiting the waiting ones by what they wait for (sleep, signal,
	// child, start).
	Checked int            `json:"checked"`
	Counts  map[string]int `json:"counts"`
	Waiting map[string]int `json:"waiting"`
	// Runs gives the verdict on each unfinished run, oldest first.
	Runs     []deployRun   `json:"runs"`
	Stopping []stoppingRun `json:"stopping"`
	Diffs    []deployDiff  `json:"diffs"`
	// Old lists the old versions the code keeps.
	Old []oldVersion `json:"old_versions"`
	// Stranded lists the runs of workflows the packages do not register,
	// under their identity nor as an alias.
	Stranded []string `json:"stranded"`
	// Hints says, per stranded workflow, what may bring it back.
	Hints map[string]string `json:"hints,omitempty"`
}

// codeWorkflow is one identity of the code: its current version and the
// old versions it keeps.
type codeWorkflow struct {
	cur *generator.Workflow
	old []*generator.Workflow
}

// descendsFrom reports whether version is older than the code's current
// version by the code's lineage (its own, or an old version's it keeps),
// as the engine decides it.
func (cw *codeWorkflow) descendsFrom(version string) bool {
	for _, w := range append([]*generator.Workflow{cw.cur}, cw.old...) {
		if slices.Contains(w.Lineage, version) {
			return true
		}
	}
	return false
}

// codeDef is the resume.WorkflowDef the generated code registers for w:
// the generator's own model of it, from which it renders the generated
// literal, so the two cannot disagree.
func codeDef(w *generator.Workflow) *resume.WorkflowDef { return w.Definition() }

// codeManifest renders the code's manifest of w exactly as the generated
// code's resume.WorkflowDef.Manifest does.
func codeManifest(w *generator.Workflow) string { return codeDef(w).Manifest() }

// codeWorkflows groups the generated workflows by identity, and indexes
// each identity and alias.
func codeWorkflows(ws []*generator.Workflow) map[string]*codeWorkflow {
	byID := map[string]*codeWorkflow{}
	for _, w := range ws {
		cw := byID[w.ID]
		if cw == nil {
			cw = &codeWorkflow{}
			byID[w.ID] = cw
		}
		if w.Old {
			cw.old = append(cw.old, w)
		} else {
			cw.cur = w
		}
	}
	names := map[string]*codeWorkflow{}
	for id, cw := range byID {
		names[id] = cw
		if cw.cur != nil {
			for _, a := range cw.cur.Aliases {
				if names[a] == nil {
					names[a] = cw
				}
			}
		}
	}
	return names
}

func checkDeploy(c *cli, o *options, args []string) error {
	if o.db == "" {
		return usagef("no database: pass -db (a SQLite file or a postgres:// DSN) or set RESUME_DB")
	}
	res, err := generator.Generate(generator.Config{Context: c.ctx, Patterns: args})
	if err != nil {
		return fmt.Errorf("load the code: %w", err)
	}
	if len(res.Diagnostics) > 0 {
		for _, d := range res.Diagnostics {
			fmt.Fprintln(c.stderr, d)
		}
		fmt.Fprintf(c.stderr, "resumectl check-deploy: the code does not generate (%d problems): fix it before checking the deploy\n", len(res.Diagnostics))
		return reported{exitFail}
	}
	j, err := c.openReadOnly(o)
	if err != nil {
		return err
	}
	defer j.Close()
	out, err := c.deployCheck(j, res.Workflows)
	if err != nil {
		return err
	}
	if o.json {
		if err := c.writeJSON(out); err != nil {
			return err
		}
	} else {
		c.printDeploy(out)
	}
	if !out.OK {
		var what []string
		if n := len(out.Stopping); n > 0 {
			what = append(what, fmt.Sprintf("%d unfinished run(s) would stop on a version change", n))
		}
		if n := len(out.Stranded); n > 0 {
			what = append(what, fmt.Sprintf("%d are stranded (their workflow is not in these packages)", n))
		}
		fmt.Fprintf(c.stderr, "resumectl check-deploy: after this deploy, %s: read why above; let them finish first, keep their version (old-version-of=) or their identity (name=), or, after reading the step diff, accept the new version (resumectl runs accept-version) or cancel them\n",
			strings.Join(what, " and "))
		return reported{exitFail}
	}
	return nil
}

// checker holds what check-deploy reads once per workflow version.
type checker struct {
	c     *cli
	j     journal.Journal
	code  map[string]*codeWorkflow
	defs  map[string]storedDef // workflow@version
	diffs map[string]int       // workflow@from → index in out.Diffs
	out   *deployJSON
}

// storedDef is a version's manifest row as the journal holds it.
type storedDef struct {
	m     journal.ManifestRecord
	found bool
	def   deploy.Definition
	ok    bool // the definition decodes
}

// deployCheck gives the verdict of the code ws on every unfinished run.
func (c *cli) deployCheck(j journal.Journal, ws []*generator.Workflow) (deployJSON, error) {
	out := deployJSON{Runs: []deployRun{}, Stopping: []stoppingRun{}, Diffs: []deployDiff{}, Old: []oldVersion{}, Stranded: []string{},
		Counts: map[string]int{}, Waiting: map[string]int{}}
	k := &checker{c: c, j: j, code: codeWorkflows(ws), defs: map[string]storedDef{}, diffs: map[string]int{}, out: &out}
	runs, err := j.ListRuns(c.ctx, journal.RunFilter{Statuses: unfinished})
	if err != nil {
		return out, fmt.Errorf("list unfinished runs: %w", err)
	}
	for _, r := range runs {
		v, err := k.verdict(r)
		if err != nil {
			return out, err
		}
		out.Runs = append(out.Runs, v)
		out.Counts[string(r.Status)]++
		if r.Status == journal.StatusWaiting {
			out.Waiting[r.WaitKind]++
		}
	}
	out.Checked = len(runs)
	k.countOld()
	k.hint()
	out.OK = len(out.Stopping) == 0 && len(out.Stranded) == 0
	return out, nil
}

// verdict decides what the code does with unfinished run r.
func (k *checker) verdict(r journal.RunRecord) (deployRun, error) {
	v := deployRun{RunID: r.RunID, Workflow: r.Workflow, Status: statusText(r), Version: r.Version}
	cw := k.code[r.Workflow]
	if cw == nil || cw.cur == nil {
		k.out.Stranded = append(k.out.Stranded, r.RunID)
		v.Verdict, v.Why = verdictStranded, "workflow "+r.Workflow+" is not in these packages"
		return v, nil
	}
	cur := cw.cur
	renamed := ""
	if r.Workflow != cur.ID {
		renamed = "; workflow " + r.Workflow + " is now named " + cur.ID
	}
	if r.Version == cur.Version {
		v.Verdict, v.To, v.Why = verdictContinues, cur.Version, "the code's version"+renamed
		return v, nil
	}
	for _, old := range cw.old {
		if r.Version == old.Version {
			v.Verdict, v.To, v.Why = verdictContinues, old.Version, "an old version the code keeps ("+old.Name+")"+renamed
			return v, nil
		}
	}
	if !cw.descendsFrom(r.Version) {
		v.Verdict, v.Why = verdictWaits, "waits for version "+r.Version+": the code's version "+cur.Version+" does not descend from it (not in its lineage: a newer version, or another line of the code), so its workers leave the run to a process that has it"
		return v, nil
	}
	from, err := k.stored(r.Workflow, r.Version)
	if err != nil {
		return v, err
	}
	return k.decide(v, r, from, cur)
}

// decide applies package deploy's rule to run r, pinned to the stored
// version from, for the code's current version cur.
func (k *checker) decide(v deployRun, r journal.RunRecord, from storedDef, cur *generator.Workflow) (deployRun, error) {
	d := deploy.Unknown(r.Version)
	if from.ok {
		_, steps, err := k.j.LoadRun(k.c.ctx, r.RunID)
		if err != nil {
			return v, fmt.Errorf("run %s: %w", r.RunID, err)
		}
		keys := make([]string, len(steps))
		for i, s := range steps {
			keys[i] = s.StepKey
		}
		// A run a process entered may have executed a step's effect
		// without its row: check-deploy reads it as the engine's next
		// claim will.
		d = deploy.Decide(from.def, codeDef(cur).Definition(), deploy.Run{Keys: keys, Entered: r.Attempts > 0})
	}
	if d.Continues {
		v.Verdict, v.To, v.Why = verdictMoves, cur.Version, d.Why
		return v, nil
	}
	v.Verdict, v.Why = verdictStops, d.Why
	k.out.Stopping = append(k.out.Stopping, stoppingRun{RunID: r.RunID, Workflow: r.Workflow, Status: v.Status, Version: r.Version, CodeVersion: cur.Version, Why: d.Why})
	key := r.Workflow + "@" + r.Version
	if i, ok := k.diffs[key]; ok {
		k.out.Diffs[i].Runs = append(k.out.Diffs[i].Runs, r.RunID)
		return v, nil
	}
	k.diffs[key] = len(k.out.Diffs)
	k.out.Diffs = append(k.out.Diffs, deployDiff{Workflow: r.Workflow, From: r.Version, To: cur.Version, Runs: []string{r.RunID},
		OldMissing: !from.found, Diff: resume.DiffManifests(from.m.Manifest, codeManifest(cur))})
	return v, nil
}

// stored reads (once) the journal's manifest row of a workflow version.
func (k *checker) stored(workflow, version string) (storedDef, error) {
	key := workflow + "@" + version
	if s, ok := k.defs[key]; ok {
		return s, nil
	}
	m, found, err := k.j.LoadManifest(k.c.ctx, workflow, version)
	if err != nil {
		return storedDef{}, fmt.Errorf("read the manifest of version %s of %s: %w", version, workflow, err)
	}
	s := storedDef{m: m, found: found}
	if found && len(m.Definition) > 0 {
		s.ok = json.Unmarshal(m.Definition, &s.def) == nil
	}
	k.defs[key] = s
	return s, nil
}

// countOld counts the unfinished runs pinned to each old version the code
// keeps.
func (k *checker) countOld() {
	seen := map[*codeWorkflow]bool{}
	for _, cw := range k.code {
		if seen[cw] {
			continue
		}
		seen[cw] = true
		for _, old := range cw.old {
			ov := oldVersion{Workflow: old.ID, Version: old.Version, Func: old.Name}
			for _, v := range k.out.Runs {
				if k.code[v.Workflow] == cw && v.Version == old.Version {
					ov.Runs++
				}
			}
			k.out.Old = append(k.out.Old, ov)
		}
	}
	sort.Slice(k.out.Old, func(a, b int) bool {
		x, y := k.out.Old[a], k.out.Old[b]
		return x.Workflow < y.Workflow || (x.Workflow == y.Workflow && x.Func < y.Func)
	})
}

// hint says, for each stranded workflow, what may bring it back: a code
// workflow of the same function name (the package moved: name= keeps the
// identity), or else the packages check-deploy was not given.
func (k *checker) hint() {
	for _, v := range k.out.Runs {
		if v.Verdict != verdictStranded || k.out.Hints[v.Workflow] != "" {
			continue
		}
		if k.out.Hints == nil {
			k.out.Hints = map[string]string{}
		}
		fn := v.Workflow[strings.LastIndex(v.Workflow, ".")+1:]
		var same []string
		for id, cw := range k.code {
			if cw.cur != nil && id == cw.cur.ID && cw.cur.Name[strings.LastIndex(cw.cur.Name, ".")+1:] == fn {
				same = append(same, id)
			}
		}
		slices.Sort(same)
		h := "if its package is not among those checked, pass it to check-deploy; if the workflow was moved or renamed, add name=" + v.Workflow +
			" to its //resume:workflow directive so that its runs keep their identity; if it was deleted, let its runs finish on the old code or cancel them"
		if len(same) > 0 {
			h = "the code has " + strings.Join(same, ", ") + ": if the package moved, add name=" + v.Workflow + " to its //resume:workflow directive, so that the runs stored under " + v.Workflow + " are its"
		}
		k.out.Hints[v.Workflow] = h
	}
}

func (c *cli) printDeploy(out deployJSON) {
	out = escDeploy(out)
	if len(out.Runs) == 0 {
		fmt.Fprintln(c.stdout, "ok: no unfinished runs")
	} else {
		t := c.table("RUN", "WORKFLOW", "STATUS", "VERSION", "AFTER THE DEPLOY")
		for _, r := range out.Runs {
			t.row(r.RunID, shortName(r.Workflow), c.paint(statusColor(r.Status), r.Status), r.Version, c.paint(verdictColor(r.Verdict), verdictText(r)))
		}
		t.flush()
		fmt.Fprintln(c.stdout, countLine(out))
	}
	for _, d := range out.Diffs {
		fmt.Fprintf(c.stdout, "\n%s %s -> %s (runs %s):\n", shortName(d.Workflow), d.From, d.To, strings.Join(d.Runs, ", "))
		if d.OldMissing {
			fmt.Fprintln(c.stdout, "  (the manifest of the old version is not in the journal: every step of the code is shown as added)")
		}
		c.printDiff(d.Diff)
	}
	for _, ov := range out.Old {
		fmt.Fprintln(c.stdout)
		if ov.Runs == 0 {
			fmt.Fprintf(c.stdout, "old version %s of %s: no runs left: %s can be deleted\n", ov.Version, shortName(ov.Workflow), ov.Func)
		} else {
			fmt.Fprintf(c.stdout, "old version %s of %s (%s): %d unfinished run(s) left\n", ov.Version, shortName(ov.Workflow), ov.Func, ov.Runs)
		}
	}
	for _, w := range sortedKeys(out.Hints) {
		fmt.Fprintf(c.stdout, "\nstranded: workflow %s is not in these packages: %s\n", w, out.Hints[w])
	}
	if out.OK {
		fmt.Fprintf(c.stdout, "\nok: none of the %d unfinished run(s) would stop or be stranded\n", out.Checked)
	}
}

// countLine says how many unfinished runs check-deploy checked, by
// status: "checked 4 unfinished run(s): 1 pending, 2 waiting (1 signal,
// 1 sleep), 1 needs_attention".
func countLine(out deployJSON) string {
	var parts []string
	for _, s := range unfinished {
		n := out.Counts[string(s)]
		if n == 0 {
			continue
		}
		part := fmt.Sprintf("%d %s", n, s)
		if s == journal.StatusWaiting {
			var kinds []string
			for _, k := range slices.Sorted(maps.Keys(out.Waiting)) {
				kinds = append(kinds, fmt.Sprintf("%d %s", out.Waiting[k], esc(k)))
			}
			part += " (" + strings.Join(kinds, ", ") + ")"
		}
		parts = append(parts, part)
	}
	return fmt.Sprintf("checked %d unfinished run(s): %s", out.Checked, strings.Join(parts, ", "))
}

// verdictText is a run's verdict as the table shows it.
func verdictText(r deployRun) string {
	switch r.Verdict {
	case verdictContinues:
		return "continues: " + r.Why
	case verdictMoves:
		return "moves to " + r.To + ": " + r.Why
	case verdictStops:
		return "would stop: " + r.Why
	case verdictStranded:
		return "stranded: " + r.Why
	}
	return r.Why
}

func verdictColor(v string) termesc.Colour {
	switch v {
	case verdictContinues, verdictMoves:
		return termesc.Green
	case verdictStops, verdictStranded:
		return termesc.Red
	}
	return termesc.Yellow
}

func sortedKeys(m map[string]string) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
