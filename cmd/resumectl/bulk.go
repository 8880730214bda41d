package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/mattn/go-isatty"

	"github.com/resumegen/resumegen/internal/runops"
	"github.com/resumegen/resumegen/runtime/journal"
)

// bulkFlags registers the filter and the safety flags of a command that
// acts on one run or on every run a filter selects.
func bulkFlags(fs *flag.FlagSet) {
	fs.String("workflow", "", "with no run id: act on the runs of this workflow (qualified name, package.Function or Function)")
	fs.String("status", "", "with no run id: act on the runs in these statuses, comma-separated")
	fs.Bool("dry-run", false, "with a filter: print how many runs it selects and the first ids; change nothing")
	fs.Bool("yes", false, "with a filter: act without asking for confirmation")
}

// wantsBulk reports whether the command names its runs by a filter
// (-workflow, -version, -status) rather than by one run id. With a run id,
// -version is a filter only when versionFilters is set (for accept-version
// it names the version to accept).
func wantsBulk(o *options, args []string, versionFilters bool) (bool, error) {
	has := func(name string) bool { return flagValue(o.fs, name) != "" }
	filter := has("workflow") || has("status") || (versionFilters && has("version"))
	switch {
	case len(args) == 0 && (filter || has("version")):
		return true, nil
	case len(args) == 0:
		return false, usagef("name the runs: one run id, or a filter (-workflow W, -version V, -status S)")
	case filter:
		return false, usagef("give one run id or a filter (-workflow, -version, -status), not both")
	case flagValue(o.fs, "dry-run") == "true" || flagValue(o.fs, "yes") == "true":
		return false, usagef("-dry-run and -yes go with a filter, not with a run id")
	}
	return false, nil
}

// bulkAction is one of the commands that can act on the runs a filter
// selects.
type bulkAction struct {
	name string
	// question asks for confirmation, given what the filter selected
	// ("37 runs of onboard.Onboard").
	question func(runs string) string
	// applies lists the statuses the action can apply to: the default
	// filter, and the only statuses -status may name.
	applies []journal.Status
	// selects keeps, among runs in those statuses, those it applies to.
	selects func(journal.RunRecord) bool
	one     func(c *cli, j journal.Journal, runID string) (actionJSON, error)
}

func retryAction() bulkAction {
	return bulkAction{name: "retry",
		question: func(runs string) string { return "retry " + runs },
		applies:  []journal.Status{journal.StatusFailed, journal.StatusNeedsAttention},
		selects: func(r journal.RunRecord) bool {
			return r.Status == journal.StatusFailed || r.AttentionKind == journal.AttentionKindJournal
		},
		one: retryOne}
}

func cancelAction(running bool) bulkAction {
	return bulkAction{name: "cancel",
		question: func(runs string) string { return "cancel " + runs },
		applies:  unfinished,
		selects:  func(journal.RunRecord) bool { return true },
		one: func(c *cli, j journal.Journal, runID string) (actionJSON, error) {
			return cancelOne(c, j, runID, running)
		}}
}

func acceptAction(to string) bulkAction {
	return bulkAction{name: "accept-version",
		question: func(runs string) string { return "accept version " + to + " for " + runs },
		applies:  []journal.Status{journal.StatusNeedsAttention},
		selects:  func(r journal.RunRecord) bool { return r.AttentionKind == journal.AttentionKindVersion },
		one: func(c *cli, j journal.Journal, runID string) (actionJSON, error) {
			return acceptOne(c, j, runID, to)
		}}
}

// bulkJSON is what a command acting by filter prints with -json.
type bulkJSON struct {
	Action string `json:"action"`
	DryRun bool   `json:"dry_run,omitempty"`
	// Selected lists the runs the filter selected, oldest first.
	Selected []string     `json:"selected"`
	Done     []string     `json:"done"`
	Failed   []failedJSON `json:"failed"`
}

// failedJSON is a run the action failed on.
type failedJSON struct {
	RunID string `json:"run_id"`
	Error string `json:"error"`
}

// bulkFilter is a filter as the flags give it, checked.
type bulkFilter struct {
	workflow, version string
	statuses          []journal.Status
}

func (a bulkAction) filter(o *options) (bulkFilter, error) {
	f := bulkFilter{workflow: flagValue(o.fs, "workflow"), version: flagValue(o.fs, "version")}
	s := flagValue(o.fs, "status")
	if s == "" {
		f.statuses = a.applies
		return f, nil
	}
	for _, one := range strings.Split(s, ",") {
		st := journal.Status(strings.TrimSpace(one))
		if !validStatus(st) {
			return f, usagef("-status %q: want one of %v", one, statuses)
		}
		if !statusIn(st, a.applies) {
			return f, usagef("-status %s: %s applies only to runs that are %v", st, a.name, a.applies)
		}
		f.statuses = append(f.statuses, st)
	}
	return f, nil
}

func statusIn(s journal.Status, in []journal.Status) bool {
	for _, v := range in {
		if v == s {
			return true
		}
	}
	return false
}

// selectRuns lists the runs f selects that a applies to, oldest first.
func (c *cli) selectRuns(j journal.Journal, a bulkAction, f bulkFilter) ([]journal.RunRecord, error) {
	runs, err := j.ListRuns(c.ctx, journal.RunFilter{Statuses: f.statuses, Version: f.version})
	if err != nil {
		return nil, fmt.Errorf("list runs: %w", err)
	}
	var out []journal.RunRecord
	for _, r := range runs {
		if (f.workflow == "" || workflowMatches(r.Workflow, f.workflow)) && statusIn(r.Status, f.statuses) && a.selects(r) {
			out = append(out, r)
		}
	}
	return out, nil
}

// describe says what runs were selected: "37 runs of onboard.Onboard
// (version v1)".
func describe(runs []journal.RunRecord, f bulkFilter) string {
	seen := map[string]bool{}
	var names []string
	for _, r := range runs {
		if n := esc(shortName(r.Workflow)); !seen[n] {
			seen[n] = true
			names = append(names, n)
		}
	}
	sort.Strings(names)
	s := fmt.Sprintf("%d run(s) of %s", len(runs), strings.Join(names, ", "))
	if f.version != "" {
		s += " (version " + esc(f.version) + ")"
	}
	return s
}

// firstIDs lists up to n run ids, and how many more there are.
func firstIDs(runs []journal.RunRecord, n int) string {
	var ids []string
	for i, r := range runs {
		if i == n {
			return strings.Join(ids, ", ") + fmt.Sprintf(" and %d more", len(runs)-n)
		}
		ids = append(ids, esc(r.RunID))
	}
	return strings.Join(ids, ", ")
}

// bulk runs a on every run the filter selects: with -dry-run it only
// counts them; else, unless -yes, it asks on the terminal first.
func (c *cli) bulk(o *options, a bulkAction) error {
	f, err := a.filter(o)
	if err != nil {
		return err
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
	runs, err := c.selectRuns(j, a, f)
	if err != nil {
		return err
	}
	out := bulkJSON{Action: a.name, DryRun: dry, Selected: []string{}, Done: []string{}, Failed: []failedJSON{}}
	for _, r := range runs {
		out.Selected = append(out.Selected, r.RunID)
	}
	switch {
	case len(runs) == 0:
		return c.bulkReport(o, out, "no run matches the filter: nothing changed")
	case dry:
		return c.bulkReport(o, out, fmt.Sprintf("dry run: %s would act on %s: %s. Nothing changed.", a.name, describe(runs, f), firstIDs(runs, 10)))
	}
	if flagValue(o.fs, "yes") != "true" {
		if err := c.confirm(a.question(describe(runs, f)), runs); err != nil {
			return err
		}
	}
	for _, r := range runs {
		if c.ctx.Err() != nil {
			break
		}
		if _, err := a.one(c, j, r.RunID); err != nil {
			out.Failed = append(out.Failed, failedJSON{RunID: r.RunID, Error: err.Error()})
			fmt.Fprintf(c.stderr, "resumectl runs %s: run %s: %s\n", a.name, esc(r.RunID), oneLine(err.Error()))
			continue
		}
		out.Done = append(out.Done, r.RunID)
	}
	msg := fmt.Sprintf("%s: %d of %d run(s) done, %d failed", a.name, len(out.Done), len(runs), len(out.Failed))
	if left := len(runs) - len(out.Done) - len(out.Failed); left > 0 {
		msg += fmt.Sprintf(", %d not attempted (interrupted)", left)
	}
	if len(out.Done) > 0 {
		msg += ". " + runops.ResumedElsewhere + "."
	}
	if err := c.bulkReport(o, out, msg); err != nil {
		return err
	}
	if len(out.Done) < len(runs) {
		return reported{exitFail}
	}
	return nil
}

func (c *cli) bulkReport(o *options, out bulkJSON, msg string) error {
	if o.json {
		return c.writeJSON(out)
	}
	fmt.Fprintln(c.stdout, msg)
	return nil
}

// confirm asks the person at the terminal whether to go on; without a
// terminal it refuses (exit status 2), so that a script acts on many runs
// only when it says -yes.
func (c *cli) confirm(question string, runs []journal.RunRecord) error {
	if !c.tty {
		fmt.Fprintf(c.stderr, "resumectl: refusing to %s without confirmation: there is no terminal to ask on. Check with -dry-run, then pass -yes.\n", question)
		return reported{exitUsage}
	}
	if len(runs) > 0 {
		fmt.Fprintf(c.stderr, "runs: %s\n", firstIDs(runs, 10))
	}
	fmt.Fprintf(c.stderr, "%s? [y/N] ", question)
	line, err := bufio.NewReader(c.stdin).ReadString('\n')
	if err != nil && err != io.EOF {
		return fmt.Errorf("read the answer: %w", err)
	}
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return nil
	}
	fmt.Fprintln(c.stderr, "resumectl: not confirmed: nothing changed")
	return reported{exitFail}
}

// isTerminal reports whether f is a terminal (not merely a character
// device: /dev/null is one).
func isTerminal(f *os.File) bool {
	return isatty.IsTerminal(f.Fd())
}
