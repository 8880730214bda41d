package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/resumegen/resumegen/internal/runops"
	"github.com/resumegen/resumegen/runtime/journal"
	"github.com/resumegen/resumegen/runtime/resume"
)

// runJSON is a run as the -json output of list and show carries it.
type runJSON struct {
	RunID         string    `json:"run_id"`
	Workflow      string    `json:"workflow"`
	Version       string    `json:"version"`
	Status        string    `json:"status"`
	AttentionKind string    `json:"attention_kind"`
	AttentionStep string    `json:"attention_step"`
	FailedStep    string    `json:"failed_step,omitempty"`
	CurrentStep   string    `json:"current_step"`
	Attempts      int       `json:"attempts"`
	CreatedAt     time.Time `json:"created_at"`
	UpdatedAt     time.Time `json:"updated_at"`
	AgeSeconds    int64     `json:"age_seconds"`
	// WaitKind, WaitName and WakeAt say what a waiting run waits for
	// (sleep, signal NAME, start, child ID) and until when.
	WaitKind string     `json:"wait_kind,omitempty"`
	WaitName string     `json:"wait_name,omitempty"`
	WakeAt   *time.Time `json:"wake_at,omitempty"`
}

func (c *cli) runJSON(r journal.RunRecord, steps []journal.StepRecord) runJSON {
	return runJSON{
		RunID: r.RunID, Workflow: r.Workflow, Version: r.Version, Status: string(r.Status),
		AttentionKind: r.AttentionKind, AttentionStep: r.AttentionStep, FailedStep: r.FailedStep, CurrentStep: currentStep(r, steps),
		Attempts: r.Attempts, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt,
		AgeSeconds: int64(c.now().Sub(r.CreatedAt) / time.Second),
		WaitKind:   r.WaitKind, WaitName: r.WaitName, WakeAt: optTime(r.WakeAt),
	}
}

// optTime is t, or nil for the zero time.
func optTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

// waitText says what a waiting run waits for and until when.
func waitText(r journal.RunRecord) string { return runops.WaitText(r) }

// currentStep is the step a person must look at, or else the last
// journaled one.
func currentStep(r journal.RunRecord, steps []journal.StepRecord) string {
	return runops.CurrentStep(r, steps)
}

// statusText is the status as people read it: a run waiting for a person
// says why.
func statusText(r journal.RunRecord) string { return runops.StatusText(r) }

var statuses = []journal.Status{
	journal.StatusPending, journal.StatusRunning, journal.StatusSucceeded,
	journal.StatusFailed, journal.StatusNeedsAttention, journal.StatusCancelled, journal.StatusWaiting,
}

// listFlags registers runs list's filters, read back in runsList.
func listFlags(fs *flag.FlagSet) {
	fs.String("status", "", "only runs in these statuses, comma-separated: pending, running, succeeded, failed, needs_attention, cancelled, waiting")
	fs.String("workflow", "", "only runs of this workflow: qualified name, package.Function or Function")
	fs.String("version", "", "only runs of this workflow version")
	fs.Duration("since", 0, "only runs created within this `duration` (e.g. 24h)")
	fs.Int("limit", 0, "list at most `N` runs (0: all)")
	fs.Bool("oldest", false, "list the oldest runs first (default: the newest first, as the web UI)")
}

// flagValue reads back a flag registered by a command's flags function.
func flagValue(fs *flag.FlagSet, name string) string {
	if f := fs.Lookup(name); f != nil {
		return f.Value.String()
	}
	return ""
}

func runsList(c *cli, o *options, args []string) error {
	if err := wantArgs(args); err != nil {
		return err
	}
	fs := o.fs
	f := journal.RunFilter{Version: flagValue(fs, "version")}
	if s := flagValue(fs, "status"); s != "" {
		for _, one := range strings.Split(s, ",") {
			st := journal.Status(strings.TrimSpace(one))
			if !validStatus(st) {
				return usagef("-status %q: want one of %v", one, statuses)
			}
			f.Statuses = append(f.Statuses, st)
		}
	}
	since, _ := time.ParseDuration(flagValue(fs, "since"))
	workflow := flagValue(fs, "workflow")
	limit, err := strconv.Atoi(flagValue(fs, "limit"))
	if err != nil || limit < 0 {
		return usagef("-limit %s: want a count, 0 for all", flagValue(fs, "limit"))
	}
	f.Newest = flagValue(fs, "oldest") != "true"
	if since > 0 {
		f.CreatedAfter = c.now().Add(-since)
	}
	if workflow == "" {
		f.Limit = limit // with -workflow, the name is matched here, then cut
	}
	j, err := c.openReadOnly(o)
	if err != nil {
		return err
	}
	defer j.Close()
	runs, err := c.listRuns(o, j, f)
	if err != nil {
		return fmt.Errorf("list runs: %w", err)
	}
	out := []runJSON{}
	var shown []journal.RunRecord
	for _, r := range runs {
		if workflow != "" && !workflowMatches(r.Workflow, workflow) {
			continue
		}
		if since > 0 && r.CreatedAt.Before(c.now().Add(-since)) {
			continue
		}
		if limit > 0 && len(out) == limit {
			break
		}
		out = append(out, c.runJSON(r, nil))
		shown = append(shown, r)
	}
	if o.json {
		return c.writeJSON(out)
	}
	if len(out) == 0 {
		fmt.Fprintln(c.stdout, "no runs (resumectl runs list -h lists the filters)")
		return nil
	}
	t := c.table("RUN", "WORKFLOW", "VERSION", "STATUS", "STEP", "ATTEMPTS", "AGE")
	for i, r := range out {
		st := statusText(shown[i])
		t.row(r.RunID, shortName(r.Workflow), r.Version, c.paint(statusColor(st), st), orDash(r.CurrentStep),
			strconv.Itoa(r.Attempts), age(c.now(), r.CreatedAt))
	}
	return t.flush()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func validStatus(s journal.Status) bool {
	for _, v := range statuses {
		if v == s {
			return true
		}
	}
	return false
}

func workflowMatches(qualified, w string) bool {
	return qualified == w || shortName(qualified) == w || qualified[strings.LastIndex(qualified, ".")+1:] == w
}

// stepJSON is one journal row in show's -json output.
type stepJSON struct {
	Seq        int64           `json:"seq"`
	StepKey    string          `json:"step_key"`
	Name       string          `json:"name"`
	Status     string          `json:"status"`
	Attempt    int             `json:"attempt"`
	StartedAt  time.Time       `json:"started_at"`
	FinishedAt *time.Time      `json:"finished_at"`
	DurationMS *float64        `json:"duration_ms"`
	Result     json.RawMessage `json:"result,omitempty"`
	Error      string          `json:"error,omitempty"`
	// Final marks a failure the body received: it replays, and only a
	// retry of the run executes it again (when it ended the run).
	Final       bool            `json:"final,omitempty"`
	ErrorDetail json.RawMessage `json:"error_detail,omitempty"`
	// Attempts lists the step's failed attempts, oldest first.
	Attempts []attemptJSON `json:"attempts,omitempty"`
	// Problem says why the row cannot be used as stored (a column that
	// does not convert, a status that is no status): the engine parks
	// the run on it. Absent for a sound row.
	Problem string `json:"problem,omitempty"`
	// Where is the step's call site in the code of the run's version
	// ("examples/onboard/onboard.go:53"), from the definition the journal
	// stores for it; absent when the journal does not record it.
	Where string `json:"where,omitempty"`
}

// attemptJSON is one failed attempt of a step.
type attemptJSON struct {
	Attempt    int        `json:"attempt"`
	StartedAt  time.Time  `json:"started_at"`
	FinishedAt *time.Time `json:"finished_at"`
	Error      string     `json:"error"`
	Permanent  bool       `json:"permanent"`
}

// versionChange is the step diff of a run stopped on a version change.
type versionChange struct {
	Workflow string                  `json:"workflow"`
	From     string                  `json:"from"`
	To       string                  `json:"to"`
	Note     string                  `json:"note,omitempty"`
	Diff     []resume.ManifestChange `json:"diff"`
}

type showJSON struct {
	Run        runJSON         `json:"run"`
	Input      json.RawMessage `json:"input"`
	Output     json.RawMessage `json:"output"`
	Error      string          `json:"error"`
	LeaseOwner string          `json:"lease_owner"`
	LeaseUntil *time.Time      `json:"lease_until"`
	Parent     string          `json:"parent,omitempty"` // the run this one is a child run of
	// ContinuedFrom is the run this one continues (resume.ContinueAsNew),
	// ContinuedAs the run that continues this one.
	ContinuedFrom string         `json:"continued_from,omitempty"`
	ContinuedAs   string         `json:"continued_as,omitempty"`
	Children      []childJSON    `json:"children,omitempty"` // the child runs this run started
	Steps         []stepJSON     `json:"steps"`
	VersionChange *versionChange `json:"version_change,omitempty"`
	// Moves lists the run's moves between versions, oldest first.
	Moves []journal.Move `json:"moves"`
	// Manifest is the stored manifest of the run's version: its steps and
	// the shapes of what they journal; "" when the journal lacks it.
	Manifest string `json:"manifest"`
	// Problem says why the run's own row cannot be used as stored.
	Problem string `json:"problem,omitempty"`
	// Kept are the signals sent to the run that no await consumed yet.
	Kept []keptJSON `json:"kept_signals,omitempty"`
	// Actions lists the operators' write actions on the run (resumectl,
	// the web UI), oldest first: who, what, when, from where.
	Actions []actionRecordJSON `json:"actions"`
	// SealedKeys lists the ids of the keys that seal the journal (none:
	// its values are plain); Opened says that resumectl held keys and
	// shows the values it could open. Note says what did not open.
	SealedKeys []string `json:"sealed_keys,omitempty"`
	Opened     bool     `json:"opened,omitempty"`
	Note       string   `json:"note,omitempty"`
}

// actionRecordJSON is one operator's action on a run, as show prints it.
type actionRecordJSON struct {
	Seq    int64     `json:"seq"`
	Action string    `json:"action"`
	Detail string    `json:"detail,omitempty"`
	By     string    `json:"by"`
	From   string    `json:"from"`
	Via    string    `json:"via"`
	At     time.Time `json:"at"`
}

func runsShow(c *cli, o *options, args []string) error {
	j, runID, err := c.openRunReadOnly(o, args)
	if err != nil {
		return err
	}
	defer j.Close()
	r, steps, note, err := c.loadRun(o, j, runID)
	if err != nil {
		return err
	}
	out := showJSON{Note: note, SealedKeys: o.sealed.keys, Opened: o.sealed.opened, Run: c.runJSON(r, steps), Input: storedJSON(r.Input), Output: storedJSON(r.Output), Error: r.Error, LeaseOwner: r.LeaseOwner,
		Parent: r.Parent, ContinuedFrom: r.ContinuedFrom, ContinuedAs: r.ContinuedAs, Steps: []stepJSON{}, Moves: r.Moves, Problem: r.Problem()}
	if out.Moves == nil {
		out.Moves = []journal.Move{}
	}
	if out.Manifest, err = j.Manifest(c.ctx, r.Workflow, r.Version); err != nil {
		return fmt.Errorf("run %s: manifest of version %s: %w", runID, r.Version, err)
	}
	where, err := callSites(c.ctx, j, r.Workflow, r.Version)
	if err != nil {
		return fmt.Errorf("run %s: %w", runID, err)
	}
	kids, err := j.ListRuns(c.ctx, journal.RunFilter{Parent: runID})
	if err != nil {
		return err
	}
	for _, k := range kids {
		out.Children = append(out.Children, childJSON{RunID: k.RunID, Step: strings.TrimPrefix(k.RunID, runID+"/"),
			Workflow: k.Workflow, Status: statusText(k)})
	}
	if out.Kept, err = keptSignals(c.ctx, j, runID); err != nil {
		return err
	}
	if !r.LeaseUntil.IsZero() && r.LeaseOwner != "" {
		out.LeaseUntil = &r.LeaseUntil
	}
	acts, err := runops.Actions(c.ctx, j, runID)
	if err != nil {
		return fmt.Errorf("run %s: %w", runID, err)
	}
	out.Actions = []actionRecordJSON{}
	for _, a := range acts {
		out.Actions = append(out.Actions, actionRecordJSON{Seq: a.Seq, Action: a.Action, Detail: a.Detail, By: a.Actor, From: a.Origin, Via: a.Via, At: a.At})
	}
	for _, s := range steps {
		sj := stepRecordJSON(s, where[s.Name])
		out.Steps = append(out.Steps, sj)
	}
	if r.Status == journal.StatusNeedsAttention && r.AttentionKind == journal.AttentionKindVersion {
		vc, err := storedVersionChange(c, j, r)
		if err != nil {
			return err
		}
		out.VersionChange = vc
	}
	if o.json {
		return c.writeJSON(out)
	}
	c.printRun(r, out)
	return nil
}

// stepRecordJSON is one journal row as show and watch print it with
// -json; where is its call site ("" when unknown).
func stepRecordJSON(s journal.StepRecord, where string) stepJSON {
	sj := stepJSON{Seq: s.Seq, StepKey: s.StepKey, Name: s.Name, Status: string(s.Status), Attempt: s.Attempt,
		StartedAt: s.StartedAt, Result: storedJSON(s.Result), Error: s.Error, Final: s.Final, ErrorDetail: storedJSON(s.ErrorDetail),
		Problem: s.Problem(), Where: where}
	if sj.Problem == "" && len(s.Result) > 0 && !json.Valid(s.Result) {
		sj.Problem = "result is not JSON"
	}
	for _, a := range s.History {
		aj := attemptJSON{Attempt: a.Attempt, StartedAt: a.StartedAt, Error: a.Error, Permanent: a.Permanent}
		if !a.FinishedAt.IsZero() {
			fin := a.FinishedAt
			aj.FinishedAt = &fin
		}
		sj.Attempts = append(sj.Attempts, aj)
	}
	if !s.FinishedAt.IsZero() {
		fin := s.FinishedAt
		ms := float64(s.FinishedAt.Sub(s.StartedAt)) / float64(time.Millisecond)
		sj.FinishedAt, sj.DurationMS = &fin, &ms
	}
	return sj
}

// storedJSON is a JSON column as show prints it: as stored when it is
// JSON, else as a JSON string of the stored text, so that one corrupt row
// neither hides the others nor breaks -json.
func storedJSON(b json.RawMessage) json.RawMessage {
	if len(b) == 0 || json.Valid(b) {
		return b
	}
	q, _ := json.Marshal(string(b))
	return q
}

// storedVersionChange diffs the run's version's manifest against the newest
// manifest of its workflow in the journal.
func storedVersionChange(c *cli, j journal.Journal, r journal.RunRecord) (*versionChange, error) {
	ms, err := j.ListManifests(c.ctx, r.Workflow)
	if err != nil {
		return nil, err
	}
	vc := &versionChange{Workflow: r.Workflow, From: r.Version, Diff: []resume.ManifestChange{}}
	var old, newest string
	for _, m := range ms {
		if m.Version == r.Version {
			old = m.Manifest
		}
	}
	if len(ms) > 0 {
		vc.To, newest = ms[0].Version, ms[0].Manifest
	}
	switch {
	case vc.To == "" || vc.To == r.Version:
		vc.Note = "no newer version of this workflow is stored in the journal"
	case old == "":
		vc.Note = "the manifest of the run's version is not in the journal: every step of the new version is shown as added"
	}
	if vc.To != "" && vc.To != r.Version {
		vc.Diff = resume.DiffManifests(old, newest)
	}
	return vc, nil
}

// printRun prints show's human form.
func (c *cli) printRun(r journal.RunRecord, out showJSON) {
	r, out = forDisplay(r, out)
	now := c.now()
	st := statusText(r)
	t := c.table()
	t.row("run", r.RunID)
	t.row("workflow", shortName(r.Workflow)+"  ("+r.Workflow+")")
	t.row("version", r.Version)
	t.row("status", c.paint(statusColor(st), st))
	if out.Problem != "" {
		t.row("unreadable", out.Problem)
	}
	if r.AttentionStep != "" {
		t.row("waiting on", r.AttentionStep)
	}
	if r.Parent != "" {
		t.row("child of", r.Parent)
	}
	if r.ContinuedFrom != "" {
		t.row("continues", r.ContinuedFrom)
	}
	if r.ContinuedAs != "" {
		t.row("continued as", r.ContinuedAs)
	}
	if r.Status == journal.StatusWaiting {
		t.row("waits for", waitText(r))
	}
	t.row("attempts", strconv.Itoa(r.Attempts))
	if len(out.SealedKeys) > 0 {
		how := "values sealed: give the keys (-key-file, $RESUME_KEY_FILE or $RESUME_KEYS) to see them"
		if out.Opened {
			how = "values opened with the keys given"
		}
		t.row("sealed", "keys "+keyList(out.SealedKeys)+"; "+how)
	}
	if out.Note != "" {
		t.row("note", out.Note)
	}
	t.row("created", stamp(r.CreatedAt)+" UTC ("+age(now, r.CreatedAt)+" ago)")
	t.row("updated", stamp(r.UpdatedAt)+" UTC ("+age(now, r.UpdatedAt)+" ago)")
	if r.LeaseOwner != "" {
		t.row("lease", r.LeaseOwner+" until "+stamp(r.LeaseUntil)+" UTC")
	}
	t.row("input", preview(string(r.Input), 100))
	if len(r.Output) > 0 {
		t.row("output", preview(string(r.Output), 100))
	}
	if r.Error != "" {
		msg, _, _ := strings.Cut(r.Error, "\n")
		t.row("error", preview(msg, 160))
	}
	t.flush()

	fmt.Fprintln(c.stdout)
	if len(out.Steps) == 0 {
		fmt.Fprintln(c.stdout, "no journaled steps")
	} else {
		t = c.table(timelineHeader(out.Steps)...)
		for _, s := range out.Steps {
			var fin time.Time
			if s.FinishedAt != nil {
				fin = *s.FinishedAt
			}
			var what string
			switch journal.StepStatus(s.Status) {
			case journal.StepSucceeded:
				what = string(s.Result)
			case journal.StepFailed:
				what = "error: " + s.Error
				if s.StepKey == r.FailedStep {
					what = "ended the run, error: " + s.Error
				} else if s.Final {
					what = "handled, error: " + s.Error
				}
			case journal.StepInFlight:
				what = "outcome unknown"
				if r.AttentionKind == journal.AttentionKindResult && s.StepKey == r.AttentionStep {
					what = "executed; its result cannot be journaled"
				}
			}
			if s.Problem != "" {
				what = "unreadable: " + s.Problem
			}
			cells := []any{strconv.FormatInt(s.Seq, 10), s.StepKey, c.paint(statusColor(s.Status), s.Status), strconv.Itoa(s.Attempt),
				stamp(s.StartedAt), duration(s.StartedAt, fin)}
			if hasWhere(out.Steps) {
				cells = append(cells, orDash(s.Where))
			}
			t.row(append(cells, preview(what, 60))...)
		}
		t.flush()
		c.printAttempts(out.Steps)
	}
	c.printMoves(out.Moves)
	c.printKeptSignals(out.Kept)
	c.printActions(out.Actions)
	c.printManifest(r.Version, out.Manifest)
	if len(out.Children) > 0 {
		fmt.Fprintln(c.stdout)
		t = c.table("STEP", "CHILD RUN", "WORKFLOW", "STATUS")
		for _, k := range out.Children {
			t.row(k.Step, k.RunID, shortName(k.Workflow), c.paint(statusColor(k.Status), k.Status))
		}
		t.flush()
	}

	switch {
	case out.VersionChange != nil:
		vc := out.VersionChange
		fmt.Fprintln(c.stdout)
		if vc.To == "" || vc.To == r.Version {
			fmt.Fprintf(c.stdout, "Version change: this run started under %s; %s.\n", r.Version, vc.Note)
			return
		}
		fmt.Fprintf(c.stdout, "Version change: this run started under %s; the newest version of %s is %s. Steps:\n", vc.From, shortName(vc.Workflow), vc.To)
		if vc.Note != "" {
			fmt.Fprintf(c.stdout, "(%s)\n", vc.Note)
		}
		c.printDiff(vc.Diff)
		fmt.Fprintf(c.stdout, "\nAfter checking the steps above: resumectl runs accept-version %s   (or: resumectl runs cancel %s)\n", r.RunID, r.RunID)
	case r.Status == journal.StatusNeedsAttention && r.AttentionKind == journal.AttentionKindResult:
		fmt.Fprintf(c.stdout, "\nStep %s executed, but its result cannot be journaled; it will not execute again by itself. Give the result to use: resumectl runs resolve %s %s -done -result JSON   (or: resumectl runs cancel %s)\n",
			r.AttentionStep, r.RunID, r.AttentionStep, r.RunID)
	case r.Status == journal.StatusNeedsAttention && r.AttentionKind == journal.AttentionKindChild:
		fmt.Fprintf(c.stdout, "\nIts child run %s needs a person: settle it there (resumectl runs show %s); this run then continues by itself.\n",
			resume.ChildRunOf(r, r.AttentionStep), resume.ChildRunOf(r, r.AttentionStep))
	case r.Status == journal.StatusNeedsAttention && r.AttentionKind == journal.AttentionKindJournal && r.AttentionStep == "":
		fmt.Fprintf(c.stdout, "\nThe run's own row cannot be used as stored: nothing executes until it is repaired in the database (resume_runs, run_id %s), then: resumectl runs retry %s   (or: resumectl runs cancel %s)\n",
			r.RunID, r.RunID, r.RunID)
	case r.Status == journal.StatusNeedsAttention && r.AttentionKind == journal.AttentionKindJournal:
		fmt.Fprintf(c.stdout, "\nThe journal row of step %s cannot be used as stored: nothing executes until it is repaired in the database (resume_steps, run_id %s), then: resumectl runs retry %s   (or: resumectl runs cancel %s)\n",
			r.AttentionStep, r.RunID, r.RunID, r.RunID)
	case r.Status == journal.StatusNeedsAttention && r.AttentionStep != "":
		fmt.Fprintf(c.stdout, "\nStep %s may or may not have happened. If it did: resumectl runs resolve %s %s -done [-result JSON]; if not: resumectl runs resolve %s %s -redo\n",
			r.AttentionStep, r.RunID, r.AttentionStep, r.RunID, r.AttentionStep)
	case r.Status == journal.StatusFailed && r.FailedStep != "":
		fmt.Fprintf(c.stdout, "\nThe failure of step %s ended the run. To execute it again, with a fresh retry budget (nothing else executes again): resumectl runs retry %s\n", r.FailedStep, r.RunID)
	case r.Status == journal.StatusFailed:
		fmt.Fprintf(c.stdout, "\nThe workflow failed on its own, not with a step's failure: a retry executes no step again, and replays the journal to the body: resumectl runs retry %s\n", r.RunID)
	}
}

// printMoves lists the run's moves between versions, oldest first.
func (c *cli) printMoves(moves []journal.Move) {
	if len(moves) == 0 {
		return
	}
	fmt.Fprintln(c.stdout)
	fmt.Fprintln(c.stdout, "Moved between versions:")
	t := c.table("FROM", "TO", "BY", "AT (UTC)", "WHY")
	for _, m := range moves {
		from, to := m.From, m.To
		if m.FromWorkflow != "" && m.FromWorkflow != m.Workflow {
			from, to = shortName(m.FromWorkflow)+" "+from, shortName(m.Workflow)+" "+to
		}
		t.row(from, to, m.By, stamp(m.At), oneLine(m.Why))
	}
	t.flush()
}

// printActions lists the operators' actions on the run, oldest first.
func (c *cli) printActions(acts []actionRecordJSON) {
	if len(acts) == 0 {
		return
	}
	fmt.Fprintln(c.stdout)
	fmt.Fprintln(c.stdout, "Operators' actions:")
	t := c.table("AT (UTC)", "ACTION", "DETAIL", "BY", "FROM", "VIA")
	for _, a := range acts {
		t.row(stamp(a.At), a.Action, orDash(a.Detail), a.By, a.From, a.Via)
	}
	t.flush()
}

// printManifest prints the manifest of the run's version, indented.
func (c *cli) printManifest(version, manifest string) {
	fmt.Fprintln(c.stdout)
	if manifest == "" {
		fmt.Fprintf(c.stdout, "The manifest of version %s is not in the journal.\n", esc(version))
		return
	}
	fmt.Fprintf(c.stdout, "Version %s (manifest):\n", esc(version))
	for _, l := range strings.Split(strings.TrimRight(manifest, "\n"), "\n") {
		fmt.Fprintln(c.stdout, "  "+esc(l))
	}
}

// printAttempts lists the failed attempts of each step that has some.
func (c *cli) printAttempts(steps []stepJSON) {
	var t *table
	for _, s := range steps {
		for _, a := range s.Attempts {
			if t == nil {
				fmt.Fprintln(c.stdout)
				fmt.Fprintln(c.stdout, "Failed attempts:")
				t = c.table("STEP", "ATTEMPT", "STARTED (UTC)", "ERROR")
			}
			msg := a.Error
			if a.Permanent {
				msg = "(permanent) " + msg
			}
			t.row(s.StepKey, strconv.Itoa(a.Attempt), stamp(a.StartedAt), preview(msg, 100))
		}
	}
	if t != nil {
		t.flush()
	}
}

func resolveFlags(fs *flag.FlagSet) {
	fs.Bool("done", false, "the step happened: the run continues past it")
	fs.Bool("redo", false, "the step did not happen: it executes again, once")
	fs.String("result", "", "with -done: the step's result as `JSON` (default null)")
}

// actionJSON is what the commands that change a run print with -json.
type actionJSON = runops.Result

func (c *cli) report(o *options, a actionJSON) error {
	if o.json {
		return c.writeJSON(a)
	}
	fmt.Fprintln(c.stdout, esc(a.Message))
	return nil
}

func runsResolve(c *cli, o *options, args []string) error {
	if err := wantArgs(args, "ID", "STEP"); err != nil {
		return err
	}
	done, redo := flagValue(o.fs, "done") == "true", flagValue(o.fs, "redo") == "true"
	result := flagValue(o.fs, "result")
	if err := runops.CheckResolve(done, redo, result); err != nil {
		return usagef("%s", strings.TrimPrefix(err.Error(), runops.ErrUsage.Error()+": "))
	}
	j, err := c.open(o)
	if err != nil {
		return err
	}
	defer j.Close()
	if err := c.canWriteValue(o, "the step's resolution"); err != nil {
		return err
	}
	a, err := runops.Resolve(c.ctx, j, args[0], args[1], done, redo, result)
	if err != nil {
		return err
	}
	return c.report(o, a)
}

func runsRetry(c *cli, o *options, args []string) error {
	if bulk, err := wantsBulk(o, args, true); bulk || err != nil {
		if err != nil {
			return err
		}
		return c.bulk(o, retryAction())
	}
	j, runID, err := c.openRun(o, args)
	if err != nil {
		return err
	}
	defer j.Close()
	a, err := retryOne(c, j, runID)
	if err != nil {
		return err
	}
	return c.report(o, a)
}

// retryOne retries run runID: see runs retry.
func retryOne(c *cli, j journal.Journal, runID string) (actionJSON, error) {
	return runops.Retry(c.ctx, j, runID)
}

func runsCancel(c *cli, o *options, args []string) error {
	if bulk, err := wantsBulk(o, args, true); bulk || err != nil {
		if err != nil {
			return err
		}
		return c.bulk(o, cancelAction(flagValue(o.fs, "running") == "true"))
	}
	j, runID, err := c.openRun(o, args)
	if err != nil {
		return err
	}
	defer j.Close()
	a, err := cancelOne(c, j, runID, flagValue(o.fs, "running") == "true")
	if err != nil {
		return err
	}
	return c.report(o, a)
}

// cancelOne cancels run runID: see runs cancel.
func cancelOne(c *cli, j journal.Journal, runID string, running bool) (actionJSON, error) {
	return runops.Cancel(c.ctx, j, runID, running, c.now(), "-running")
}

func cancelFlags(fs *flag.FlagSet) {
	fs.Bool("running", false, "also cancel a run a live worker is executing: it notices within a second, the step executing then has its context cancelled, and the run unwinds")
	fs.String("version", "", "with a filter: only runs pinned to this `version`")
	bulkFlags(fs)
}

func acceptFlags(fs *flag.FlagSet) {
	fs.String("to", "", "the `version` to move the runs to (with a filter: required; with an ID: default the newest stored version of its workflow)")
	fs.String("version", "", "with a filter: only runs pinned to this `version`; with an ID: the version to accept, as -to")
	bulkFlags(fs)
}

func retryFlags(fs *flag.FlagSet) {
	fs.String("version", "", "with a filter: only runs pinned to this `version`")
	bulkFlags(fs)
}

func runsAcceptVersion(c *cli, o *options, args []string) error {
	to := flagValue(o.fs, "to")
	if bulk, err := wantsBulk(o, args, false); bulk || err != nil {
		if err == nil && to == "" {
			err = usagef("with a filter, name the version to accept with -to V")
		}
		if err != nil {
			return err
		}
		return c.bulk(o, acceptAction(to))
	}
	if v := flagValue(o.fs, "version"); v != "" {
		if to != "" && to != v {
			return usagef("-version %s and -to %s: with a run id, -version is the version to accept (as -to); give one", v, to)
		}
		to = v
	}
	j, runID, err := c.openRun(o, args)
	if err != nil {
		return err
	}
	defer j.Close()
	a, err := acceptOne(c, j, runID, to)
	if err != nil {
		return err
	}
	return c.report(o, a)
}

// acceptOne moves run runID, stopped on a version change, to version want
// of its workflow (the newest stored one when want is "").
func acceptOne(c *cli, j journal.Journal, runID, want string) (actionJSON, error) {
	return runops.Accept(c.ctx, j, runID, want)
}

func forkFlags(fs *flag.FlagSet) {
	fs.String("from", "", "the `STEP` (its journal key, as runs show lists it) the new run executes from: the steps journaled before it are copied, and replay")
	fs.String("input", "", "the new run's input, a `JSON` array of the workflow's arguments (default the run's own)")
	fs.String("id", "", "the new run's `id` (default ID~forkN, the first N free); forking again with the same id returns that run")
}

// runsFork starts a new run from a run's journal up to -from: see runs
// fork.
func runsFork(c *cli, o *options, args []string) error {
	if err := wantArgs(args, "ID"); err != nil {
		return err
	}
	if flagValue(o.fs, "from") == "" {
		return usagef("name the step the fork executes from with -from STEP (runs show %s lists them)", args[0])
	}
	j, runID, err := c.openRun(o, args)
	if err != nil {
		return err
	}
	defer j.Close()
	if err := c.canWriteValue(o, "the fork's copied steps and input"); err != nil {
		return err
	}
	a, err := runops.Fork(c.ctx, j, runID, flagValue(o.fs, "from"), flagValue(o.fs, "input"), flagValue(o.fs, "id"))
	if errors.Is(err, runops.ErrUsage) {
		return usagef("%s", strings.TrimPrefix(err.Error(), runops.ErrUsage.Error()+": "))
	}
	if err != nil {
		return err
	}
	return c.report(o, a)
}

// childJSON is one child run in show's output.
type childJSON struct {
	Step     string `json:"step"`
	RunID    string `json:"run_id"`
	Workflow string `json:"workflow"`
	Status   string `json:"status"`
}

func runsSignal(c *cli, o *options, args []string) error {
	if err := wantArgs(args, "ID", "NAME", "JSON"); err != nil {
		return err
	}
	if !json.Valid([]byte(args[2])) {
		return usagef("the payload %q is not valid JSON", args[2])
	}
	j, err := c.open(o)
	if err != nil {
		return err
	}
	defer j.Close()
	if err := c.canWriteValue(o, "the signal's payload"); err != nil {
		return err
	}
	a, err := runops.SignalWith(c.ctx, j, args[0], args[1], args[2], signalOptions(o))
	if err != nil {
		return err
	}
	return c.report(o, a)
}
