package main

import (
	"flag"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/resumegen/resumegen/runtime/journal"
)

// ageFlag is a -older-than value: a Go duration (36h, 90m) or a number of
// days (30d).
type ageFlag struct {
	d   time.Duration
	set bool
}

func (a *ageFlag) String() string {
	if a == nil || !a.set {
		return ""
	}
	return a.d.String()
}

func (a *ageFlag) Set(s string) error {
	if n, ok := strings.CutSuffix(s, "d"); ok {
		days, err := strconv.ParseFloat(n, 64)
		if err != nil || days < 0 {
			return fmt.Errorf("%q is not a number of days", s)
		}
		a.d, a.set = time.Duration(days*float64(24*time.Hour)), true
		return nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return fmt.Errorf("%q is not a duration (36h, 90m) nor days (30d)", s)
	}
	a.d, a.set = d, true
	return nil
}

// purgeDefault is what runs purge deletes without -status: finished runs.
// Runs that wait for a person (needs_attention) only when -status names
// them.
var purgeDefault = []journal.Status{journal.StatusSucceeded, journal.StatusFailed, journal.StatusCancelled}

func purgeFlags(fs *flag.FlagSet) {
	fs.Var(&ageFlag{}, "older-than", "purge runs that ended at least this long ago, by the journal's clock: a `duration` (36h) or days (30d); required")
	fs.String("workflow", "", "only runs of this workflow (qualified name, package.Function or Function)")
	fs.String("status", "", "only runs in these statuses, comma-separated: succeeded, failed, cancelled, needs_attention (default succeeded,failed,cancelled)")
	fs.Int("batch", journal.DefaultPurgeBatch, "top-level runs deleted per transaction")
	fs.Bool("dry-run", false, "count what would be purged; change nothing")
	fs.Bool("yes", false, "purge without asking for confirmation")
}

// purgeJSON is what runs purge prints with -json.
type purgeJSON struct {
	Action    string   `json:"action"`
	DryRun    bool     `json:"dry_run,omitempty"`
	OlderThan string   `json:"older_than"`
	Statuses  []string `json:"statuses"`
	Workflows []string `json:"workflows,omitempty"`
	Runs      int      `json:"runs"`
	Children  int      `json:"child_runs"`
	Steps     int      `json:"steps"`
	Signals   int      `json:"signals"`
}

// runsPurge deletes old runs (see journal.Purger): it counts them first,
// and asks, unless -dry-run (count only) or -yes.
func runsPurge(c *cli, o *options, args []string) error {
	if len(args) > 0 {
		return usagef("runs purge takes no run id: it selects by -older-than, -workflow and -status")
	}
	older, _ := o.fs.Lookup("older-than").Value.(*ageFlag)
	if !older.set {
		return usagef("-older-than is required (for instance -older-than 30d)")
	}
	statuses := purgeDefault
	if s := flagValue(o.fs, "status"); s != "" {
		statuses = nil
		for _, one := range strings.Split(s, ",") {
			st := journal.Status(strings.TrimSpace(one))
			if !journal.Purgeable(st) {
				return usagef("-status %q: runs purge deletes only succeeded, failed, cancelled or needs_attention runs", one)
			}
			statuses = append(statuses, st)
		}
	}
	batch, _ := strconv.Atoi(flagValue(o.fs, "batch"))
	if batch < 1 {
		return usagef("-batch %d: want 1 or more", batch)
	}
	dry := flagValue(o.fs, "dry-run") == "true"
	open := c.open
	if dry {
		open = c.openReadOnly
	}
	j, err := open(o)
	if err != nil {
		return err
	}
	defer j.Close()
	p, ok := journal.Find[journal.Purger](j)
	if !ok {
		return fmt.Errorf("this journal (%T) cannot purge runs", j)
	}
	workflows, err := c.purgeWorkflows(j, flagValue(o.fs, "workflow"), statuses)
	if err != nil {
		return err
	}
	out := purgeJSON{Action: "purge", DryRun: dry, OlderThan: older.d.String(), Workflows: workflows}
	for _, s := range statuses {
		out.Statuses = append(out.Statuses, string(s))
	}
	reqs := []journal.PurgeRequest{{Statuses: statuses, OlderThan: older.d, Limit: batch}}
	if workflows != nil {
		reqs = nil
		for _, w := range workflows {
			reqs = append(reqs, journal.PurgeRequest{Statuses: statuses, OlderThan: older.d, Workflow: w, Limit: batch})
		}
	}
	var count journal.PurgeResult
	for _, req := range reqs {
		req.DryRun = true
		n, err := p.Purge(c.ctx, req)
		if err != nil {
			return err
		}
		count = count.Add(n)
	}
	what := fmt.Sprintf("%d run(s) (with %d child run(s)) %s that ended more than %s ago", count.Runs, count.Children, strings.Join(out.Statuses, "/"), older.d)
	if len(workflows) > 0 {
		what += " of " + esc(strings.Join(workflows, ", "))
	}
	switch {
	case count.Runs == 0:
		return c.purgeReport(o, out, "no run to purge: nothing changed")
	case dry:
		out.Runs, out.Children = count.Runs, count.Children
		return c.purgeReport(o, out, "dry run: purge would delete "+what+". Nothing changed.")
	}
	if flagValue(o.fs, "yes") != "true" {
		if err := c.confirm("purge "+what+" (their steps and signals; the actions audit stays)", nil); err != nil {
			return err
		}
	}
	var done journal.PurgeResult
	for _, req := range reqs {
		for c.ctx.Err() == nil {
			n, err := p.Purge(c.ctx, req)
			done = done.Add(n)
			if err != nil {
				out.Runs, out.Children, out.Steps, out.Signals = done.Runs, done.Children, done.Steps, done.Signals
				fmt.Fprintf(c.stderr, "resumectl runs purge: %d run(s) deleted before the error\n", done.Runs)
				return err
			}
			if n.Runs < req.Batch() {
				break
			}
		}
	}
	out.Runs, out.Children, out.Steps, out.Signals = done.Runs, done.Children, done.Steps, done.Signals
	msg := fmt.Sprintf("purge: deleted %d run(s), %d child run(s), %d step row(s), %d signal(s)", done.Runs, done.Children, done.Steps, done.Signals)
	if c.ctx.Err() != nil {
		msg += " (interrupted)"
	}
	return c.purgeReport(o, out, msg)
}

// purgeWorkflows is the qualified names -workflow w means among the runs
// a purge could select (nil without -workflow): like runs list, it
// matches the qualified name, the short name or the function name.
func (c *cli) purgeWorkflows(j journal.Journal, w string, statuses []journal.Status) ([]string, error) {
	if w == "" {
		return nil, nil
	}
	if strings.Contains(w, "/") {
		return []string{w}, nil
	}
	runs, err := j.ListRuns(c.ctx, journal.RunFilter{Statuses: statuses})
	if err != nil {
		return nil, fmt.Errorf("list runs: %w", err)
	}
	seen := map[string]bool{}
	names := []string{}
	for _, r := range runs {
		if !seen[r.Workflow] && workflowMatches(r.Workflow, w) {
			seen[r.Workflow] = true
			names = append(names, r.Workflow)
		}
	}
	sort.Strings(names)
	return names, nil
}

func (c *cli) purgeReport(o *options, out purgeJSON, msg string) error {
	if o.json {
		if out.Statuses == nil {
			out.Statuses = []string{}
		}
		return c.writeJSON(out)
	}
	fmt.Fprintln(c.stdout, msg)
	return nil
}
