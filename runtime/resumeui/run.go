package resumeui

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/resumegen/resumegen/internal/runops"
	"github.com/resumegen/resumegen/runtime/deploy"
	"github.com/resumegen/resumegen/runtime/journal"
	"github.com/resumegen/resumegen/runtime/resume"
)

// runPage is a run's page's template data.
type runPage struct {
	Run                     journal.RunRecord
	ID, Workflow, Status    string
	StatusClass             string
	Created, Updated, Lease string
	Input, Output           string
	Parent, ParentURL       string
	Parked                  string // why the run waits for a person, "" if it does not
	Steps                   []stepRow
	Graph                   string
	Plan                    []planRow // the definition's steps, with the run's position
	Moves                   []journal.Move
	Children                []listRow
	Signals                 []journal.SignalRecord
	Audit                   []journal.ActionRecord // the operators' actions on the run
	Actions                 actions
	Write                   bool
	Token                   string
	Poll                    int64 // milliseconds
	Live                    bool  // the run can still change on its own
	Notes                   []string
	Session                 sessionBar
}

// stepRow is one journaled step on the timeline.
type stepRow struct {
	Seq                                   int64
	Key, Name, Status, Result, Error, Pos string
	IdempotencyKey                        string
	Attempt                               int
	Final, Current                        bool
	Started, Duration                     string
	Attempts                              []journal.AttemptRecord
	Problem                               string
}

// planRow is one step of the version's definition, marked with what the
// run journaled of it.
type planRow struct {
	Name, Policy, Pos, Callee, Key string
	Child, Current                 bool
	Journaled                      int    // rows of the run with this name
	Status                         string // the status of the last of them
}

// actions says which actions apply to the run.
type actions struct {
	Resolve, Retry, Cancel, Accept, Signal bool
	ResolveStep                            string
	// Fork offers a fork from one of ForkSteps, the run's journaled step
	// keys in their order of execution.
	Fork       bool
	ForkSteps  []string
	Running    bool
	Versions   []string // with Accept: stored versions newest first
	SignalName string
	// SignalType and SignalSkeleton are the Go type of what the awaited
	// event carries and a JSON value of its shape, to fill in.
	SignalType, SignalSkeleton string
}

func (u *ui) run(w http.ResponseWriter, r *http.Request) {
	id := r.URL.Query().Get("id")
	p, err := u.runPage(r, id)
	switch {
	case errors.Is(err, journal.ErrRunNotFound):
		fail(w, http.StatusNotFound, fmt.Sprintf("run %s: %v", id, err))
		return
	case err != nil:
		fail(w, http.StatusInternalServerError, fmt.Sprintf("run %s: %v", id, err))
		return
	}
	name := "run.html"
	if r.URL.Query().Get("part") == "live" {
		name = "live"
	}
	render(w, name, p)
}

// runPage reads everything a run's page shows.
func (u *ui) runPage(r *http.Request, id string) (runPage, error) {
	ctx := r.Context()
	run, steps, err := u.j.LoadRun(ctx, id)
	if err != nil {
		return runPage{}, err
	}
	p := runPage{Run: run, ID: run.RunID, Workflow: run.Workflow, Status: runops.StatusText(run), StatusClass: string(run.Status),
		Created: stamp(run.CreatedAt), Updated: stamp(run.UpdatedAt), Input: u.preview(run.Input), Output: u.preview(run.Output),
		Parent: run.Parent, Moves: run.Moves, Write: u.opts.Write, Token: u.token, Poll: u.opts.Poll.Milliseconds(),
		Live: !run.Status.Finished(), Session: u.sessionBar(r)}
	if run.Parent != "" {
		p.ParentURL = runURL(run.Parent)
	}
	if run.LeaseOwner != "" && !run.LeaseUntil.IsZero() {
		p.Lease = run.LeaseOwner + " until " + stamp(run.LeaseUntil)
	}
	p.Parked = parkedText(run)
	def, err := u.definition(r, run)
	if err != nil {
		p.Notes = append(p.Notes, err.Error())
	}
	p.Steps = u.stepRows(run, steps, def)
	p.Plan = planRows(run, steps, def)
	p.Graph = markedGraph(def, p.Plan)
	kids, err := u.j.ListRuns(ctx, journal.RunFilter{Parent: id})
	if err != nil {
		return p, err
	}
	for _, k := range kids {
		p.Children = append(p.Children, listRow{RunID: k.RunID, URL: runURL(k.RunID), Workflow: runops.ShortName(k.Workflow),
			Version: k.Version, Status: runops.StatusText(k), StatusClass: string(k.Status), Step: strings.TrimPrefix(k.RunID, id+"/")})
	}
	if p.Signals, err = u.j.ListSignals(ctx, id); err != nil {
		// A payload that does not open (tampered, or a key missing) is
		// said on the page, which still shows the run.
		p.Signals, p.Notes = nil, append(p.Notes, "signals: "+err.Error())
	}
	if p.Audit, err = runops.Actions(ctx, u.j, id); err != nil {
		return p, err
	}
	if p.Actions, err = u.applicable(r, run); err != nil {
		return p, err
	}
	if u.opts.Write {
		ordered := slices.Clone(steps)
		slices.SortFunc(ordered, func(a, b journal.StepRecord) int { return cmp.Compare(a.Seq, b.Seq) })
		for _, s := range ordered {
			p.Actions.ForkSteps = append(p.Actions.ForkSteps, s.StepKey)
		}
		p.Actions.Fork = len(ordered) > 0
	}
	return p, nil
}

// definition reads the definition of the run's version, empty when the
// journal holds none.
func (u *ui) definition(r *http.Request, run journal.RunRecord) (deploy.Definition, error) {
	m, found, err := u.j.LoadManifest(r.Context(), run.Workflow, run.Version)
	if err != nil || !found || len(m.Definition) == 0 {
		return deploy.Definition{}, err
	}
	var d deploy.Definition
	if err := json.Unmarshal(m.Definition, &d); err != nil {
		return deploy.Definition{}, fmt.Errorf("the stored definition of %s %s does not decode: %v", run.Workflow, run.Version, err)
	}
	return d, nil
}

func (u *ui) stepRows(run journal.RunRecord, steps []journal.StepRecord, def deploy.Definition) []stepRow {
	steps = slices.Clone(steps)
	slices.SortFunc(steps, func(a, b journal.StepRecord) int { return int(a.Seq - b.Seq) })
	pos := map[string]string{}
	for _, s := range def.Steps {
		pos[s.Name] = s.Pos
	}
	cur := currentStep(run, steps)
	var out []stepRow
	for _, s := range steps {
		row := stepRow{Seq: s.Seq, Key: s.StepKey, Name: s.Name, Status: string(s.Status), Result: u.preview(s.Result),
			Error: s.Error, Pos: pos[s.Name], Attempt: s.Attempt, Final: s.Final, Current: s.StepKey == cur,
			Started: stamp(s.StartedAt), Attempts: s.History, Problem: s.Problem(),
			IdempotencyKey: resume.StepInfo{RunID: run.RunID, StepKey: s.StepKey, OriginKey: journal.OriginKey(run.Moves, s.StepKey)}.IdempotencyKey()}
		if !s.FinishedAt.IsZero() && !s.StartedAt.IsZero() {
			row.Duration = s.FinishedAt.Sub(s.StartedAt).Round(time.Microsecond).String()
		}
		out = append(out, row)
	}
	return out
}

// planRows marks the definition's steps with the run's journal: how many
// rows each has, the last one's status, and which is the run's position.
func planRows(run journal.RunRecord, steps []journal.StepRecord, def deploy.Definition) []planRow {
	cur := journal.StepName(currentStep(run, steps))
	var out []planRow
	for _, d := range def.Steps {
		row := planRow{Name: d.Name, Policy: d.Policy, Pos: d.Pos, Callee: d.Callee, Key: d.Key, Child: d.Child, Current: d.Name == cur}
		var last int64 = -1
		for _, s := range steps {
			if s.Name == d.Name {
				row.Journaled++
				if s.Seq > last {
					last, row.Status = s.Seq, string(s.Status)
				}
			}
		}
		out = append(out, row)
	}
	return out
}

// preview is a stored value as the page shows it: cut to PreviewBytes,
// "(encrypted)" when a codec sealed it.
func (u *ui) preview(b []byte) string {
	switch {
	case len(b) == 0:
		return ""
	case journal.IsSealed(b):
		return "(encrypted)"
	case len(b) > u.opts.PreviewBytes:
		return strings.ToValidUTF8(string(b[:u.opts.PreviewBytes]), "?") + fmt.Sprintf("… (%d bytes)", len(b))
	}
	return strings.ToValidUTF8(string(b), "?")
}

// parkedText says why a run waits for a person, and what the person can do.
func parkedText(r journal.RunRecord) string {
	if r.Status != journal.StatusNeedsAttention {
		return ""
	}
	why := map[string]string{
		journal.AttentionKindStep:    "once step %s was in flight when its process stopped: whether its effect happened is unknown. Check the effect, then resolve it done (with its result) or redo.",
		journal.AttentionKindResult:  "once step %s happened, but its result cannot be journaled. Resolve it done with the result to use.",
		journal.AttentionKindJournal: "a journal row of the run does not decode (step %s). Repair the row, then retry, or cancel the run.",
		journal.AttentionKindChild:   "a child run (step %s) needs a person; settling the child makes this run pending again.",
		journal.AttentionKindVersion: "the run started under another version of its workflow than the program's%s. Accept a newer version after reading the step list, or cancel the run.",
	}[r.AttentionKind]
	if why == "" {
		return r.Error
	}
	step := r.AttentionStep
	if r.AttentionKind == journal.AttentionKindVersion {
		step = ""
	}
	return strings.TrimSpace(fmt.Sprintf(why, step) + " " + r.Error)
}

// applicable says which actions apply to run r now.
func (u *ui) applicable(req *http.Request, r journal.RunRecord) (actions, error) {
	var a actions
	if !u.opts.Write {
		return a, nil
	}
	attn := r.Status == journal.StatusNeedsAttention
	a.Resolve = attn && (r.AttentionKind == journal.AttentionKindStep || r.AttentionKind == journal.AttentionKindResult)
	a.ResolveStep = r.AttentionStep
	a.Retry = r.Status == journal.StatusFailed || attn && r.AttentionKind == journal.AttentionKindJournal
	a.Cancel = !r.Status.Finished()
	a.Running = r.Status == journal.StatusRunning
	a.Signal = r.Status == journal.StatusWaiting && r.WaitKind == journal.WaitSignal
	a.SignalName = r.WaitName
	if a.Signal {
		a.SignalType, a.SignalSkeleton = u.awaited(req, r)
	}
	if attn && r.AttentionKind == journal.AttentionKindVersion {
		ms, err := u.j.ListManifests(req.Context(), r.Workflow)
		if err != nil {
			return a, err
		}
		for _, m := range ms {
			if m.Version != r.Version {
				a.Versions = append(a.Versions, m.Version)
			}
		}
		a.Accept = len(a.Versions) > 0
	}
	return a, nil
}

// awaited says what run r's await of its event carries, from the manifest
// of its version: the Go type and a JSON skeleton of its shape ("null" when
// the manifest does not record it).
func (u *ui) awaited(req *http.Request, r journal.RunRecord) (typ, skeleton string) {
	m, err := u.j.Manifest(req.Context(), r.Workflow, r.Version)
	if err != nil || m == "" {
		return "", "null"
	}
	b, err := resume.StepSkeleton(m, r.WaitName)
	if err != nil {
		return "", "null"
	}
	for _, l := range strings.Split(m, "\n") {
		if t, ok := strings.CutPrefix(strings.TrimSpace(l), r.WaitName+": journals "); ok {
			typ = t
		}
	}
	return typ, string(b)
}
