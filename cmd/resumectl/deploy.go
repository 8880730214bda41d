package main

import (
	"fmt"
	"strings"

	"github.com/resumegen/resumegen/generator"
	"github.com/resumegen/resumegen/runtime/journal"
	"github.com/resumegen/resumegen/runtime/resume"
)

// unfinished are the statuses of runs a deploy's code will meet again.
var unfinished = []journal.Status{journal.StatusPending, journal.StatusRunning, journal.StatusNeedsAttention, journal.StatusFailed}

// stoppingRun is a run the code would stop on a version change.
type stoppingRun struct {
	RunID       string `json:"run_id"`
	Workflow    string `json:"workflow"`
	Status      string `json:"status"`
	Version     string `json:"version"`
	CodeVersion string `json:"code_version"`
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

type deployJSON struct {
	OK bool `json:"ok"`
	// Checked counts the unfinished runs of the code's workflows.
	Checked  int           `json:"checked"`
	Stopping []stoppingRun `json:"stopping"`
	Diffs    []deployDiff  `json:"diffs"`
	// Unknown lists unfinished runs of workflows the packages do not hold.
	Unknown []string `json:"unknown_workflow_runs"`
}

// codeManifest renders the code's manifest of w exactly as the generated
// code's resume.WorkflowDef.Manifest does: the JSON shape of the run's
// input and output, and each step with the shape of what it journals.
func codeManifest(w *generator.Workflow) string {
	policies := map[string]resume.Policy{"default": resume.PolicyDefault, "once": resume.PolicyOnce, "tx": resume.PolicyTx}
	def := &resume.WorkflowDef{Shape: w.Shape}
	for _, s := range w.Steps {
		def.Steps = append(def.Steps, resume.StepDef{Name: s.Name, Callee: s.Callee, Signature: s.Signature, Policy: policies[s.Policy], Shape: s.Shape, JSON: s.JSON})
	}
	return def.Manifest()
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
	code := map[string]*generator.Workflow{}
	for _, w := range res.Workflows {
		code[w.Package+"."+w.Name] = w
	}
	j, err := c.openReadOnly(o)
	if err != nil {
		return err
	}
	defer j.Close()
	runs, err := j.ListRuns(c.ctx, journal.RunFilter{Statuses: unfinished})
	if err != nil {
		return fmt.Errorf("list unfinished runs: %w", err)
	}
	out := deployJSON{Stopping: []stoppingRun{}, Diffs: []deployDiff{}, Unknown: []string{}}
	diffs := map[string]int{} // workflow@from → index in out.Diffs
	for _, r := range runs {
		w, ok := code[r.Workflow]
		if !ok {
			out.Unknown = append(out.Unknown, r.RunID)
			continue
		}
		out.Checked++
		if r.Version == w.Version {
			continue
		}
		out.Stopping = append(out.Stopping, stoppingRun{RunID: r.RunID, Workflow: r.Workflow, Status: statusText(r), Version: r.Version, CodeVersion: w.Version})
		key := r.Workflow + "@" + r.Version
		if i, ok := diffs[key]; ok {
			out.Diffs[i].Runs = append(out.Diffs[i].Runs, r.RunID)
			continue
		}
		old, err := j.Manifest(c.ctx, r.Workflow, r.Version)
		if err != nil {
			return err
		}
		diffs[key] = len(out.Diffs)
		out.Diffs = append(out.Diffs, deployDiff{Workflow: r.Workflow, From: r.Version, To: w.Version, Runs: []string{r.RunID},
			OldMissing: old == "", Diff: resume.DiffManifests(old, codeManifest(w))})
	}
	out.OK = len(out.Stopping) == 0
	if o.json {
		if err := c.writeJSON(out); err != nil {
			return err
		}
	} else {
		c.printDeploy(out)
	}
	if len(out.Unknown) > 0 {
		fmt.Fprintf(c.stderr, "resumectl check-deploy: note: %d unfinished run(s) belong to workflows not in these packages, not checked: %s\n",
			len(out.Unknown), esc(strings.Join(out.Unknown, ", ")))
	}
	if !out.OK {
		fmt.Fprintf(c.stderr, "resumectl check-deploy: %d unfinished run(s) would stop on a version change after this deploy: let them finish, or cancel them, or deploy and accept the new version for each (resumectl runs accept-version) after reading the step diff\n", len(out.Stopping))
		return reported{exitFail}
	}
	return nil
}

func (c *cli) printDeploy(out deployJSON) {
	out = escDeploy(out)
	if out.OK {
		fmt.Fprintf(c.stdout, "ok: none of the %d unfinished run(s) of these workflows would stop on a version change\n", out.Checked)
		return
	}
	fmt.Fprintf(c.stdout, "%d unfinished run(s) would stop on a version change after this deploy:\n\n", len(out.Stopping))
	t := c.table("RUN", "WORKFLOW", "STATUS", "RUN VERSION", "CODE VERSION")
	for _, r := range out.Stopping {
		t.row(r.RunID, shortName(r.Workflow), c.paint(statusColor(r.Status), r.Status), r.Version, r.CodeVersion)
	}
	t.flush()
	for _, d := range out.Diffs {
		fmt.Fprintf(c.stdout, "\n%s %s -> %s (runs %s):\n", shortName(d.Workflow), d.From, d.To, strings.Join(d.Runs, ", "))
		if d.OldMissing {
			fmt.Fprintln(c.stdout, "  (the manifest of the old version is not in the journal: every step of the code is shown as added)")
		}
		c.printDiff(d.Diff)
	}
}
