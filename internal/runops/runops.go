// Package runops holds the operator's actions on a run (resolve, retry,
// cancel, accept a version, signal) with their checks and the message
// that says what each did, so that resumectl's commands and its web UI
// (runtime/resumeui) act alike: one set of checks, one wording.
package runops

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/resumegen/resumegen/runtime/journal"
	"github.com/resumegen/resumegen/runtime/resume"
)

// Result is what an action did to a run; resumectl prints it with -json.
type Result struct {
	RunID      string   `json:"run_id"`
	Action     string   `json:"action"`
	Status     string   `json:"status"`
	Step       string   `json:"step,omitempty"`
	Version    string   `json:"version,omitempty"`
	OldVersion string   `json:"old_version,omitempty"`
	Steps      []string `json:"steps,omitempty"`
	// From is, for a fork, the original run (RunID is the new one).
	From    string `json:"from,omitempty"`
	Message string `json:"message"`
}

// ResumedElsewhere ends the message of every action that makes a run
// pending: the tool that acted does not execute it.
const ResumedElsewhere = "resumectl does not execute workflows: a worker (Engine.Work) or the application (Engine.Resume, ResumeAll) resumes it"

// ErrUsage marks an action refused for its arguments, before the journal
// is touched.
var ErrUsage = errors.New("usage")

// Actor is who acts on runs, from where, through which tool. Every
// action of this package is recorded in the journal with it
// (journal.ActionRecord, resume_actions), in the action's own
// transaction.
type Actor struct {
	// Name is who: the UI's signed-in user, the user a trusted proxy
	// vouched for, or resumectl's operating-system user.
	Name string
	// Origin is from where: a remote address, or a host name.
	Origin string
	// Via is the tool: "resumectl" or "ui".
	Via string
}

type actorKey struct{}

// WithActor returns ctx carrying a: the actions done with ctx are
// recorded as a's.
func WithActor(ctx context.Context, a Actor) context.Context {
	return context.WithValue(ctx, actorKey{}, a)
}

// audited returns ctx carrying the journal.ActionRecord of action (with
// detail) by the actor in ctx, which j records with the write. It
// refuses an action without an actor, or on a journal that cannot record
// it: no operator's write goes unrecorded.
func audited(ctx context.Context, j journal.Journal, action, detail string) (context.Context, error) {
	a, ok := ctx.Value(actorKey{}).(Actor)
	if !ok || a.Name == "" {
		return nil, fmt.Errorf("%s: no actor to record it as (runops.WithActor)", action)
	}
	if _, ok := journal.Find[journal.Auditor](j); !ok {
		return nil, fmt.Errorf("%s: this journal cannot record operators' actions (journal.Auditor): refused, so that none goes unrecorded", action)
	}
	return journal.WithAction(ctx, journal.ActionRecord{Action: action, Detail: detail, Actor: a.Name, Origin: a.Origin, Via: a.Via}), nil
}

// Actions lists the operators' actions on run runID, oldest first; none
// for a journal that does not record them.
func Actions(ctx context.Context, j journal.Journal, runID string) ([]journal.ActionRecord, error) {
	au, ok := journal.Find[journal.Auditor](j)
	if !ok {
		return nil, nil
	}
	return au.ListActions(ctx, runID)
}

// CheckResolve checks a resolution's arguments: exactly one of done and
// redo, a result only with done, and a result that is JSON.
func CheckResolve(done, redo bool, result string) error {
	switch {
	case done == redo:
		return fmt.Errorf("%w: say what happened: exactly one of -done and -redo", ErrUsage)
	case redo && result != "":
		return fmt.Errorf("%w: -result goes with -done only", ErrUsage)
	case result != "" && !json.Valid([]byte(result)):
		return fmt.Errorf("%w: -result %q is not valid JSON", ErrUsage, result)
	}
	return nil
}

// Resolve resolves step of run runID done (with result, JSON, "" for
// null) or redo, after CheckResolve.
func Resolve(ctx context.Context, j journal.Journal, runID, step string, done, redo bool, result string) (Result, error) {
	if err := CheckResolve(done, redo, result); err != nil {
		return Result{}, err
	}
	res := journal.Resolution{Done: done}
	detail := "step " + step + " redo"
	if done {
		detail = "step " + step + " done"
	}
	if result != "" {
		res.Result = json.RawMessage(result)
		detail += ", with a result"
	}
	ctx, err := audited(ctx, j, "resolve", detail)
	if err != nil {
		return Result{}, err
	}
	if err := resume.NewEngine(j).Resolve(ctx, runID, step, res); err != nil {
		return Result{}, err
	}
	how := map[bool]string{true: "done", false: "redo"}[done]
	return Result{RunID: runID, Action: "resolve", Status: string(journal.StatusPending), Step: step,
		Message: fmt.Sprintf("run %s: step %s resolved %s; the run is pending. %s.", runID, step, how, ResumedElsewhere)}, nil
}

// Retry makes failed run runID pending again: see resumectl runs retry.
func Retry(ctx context.Context, j journal.Journal, runID string) (Result, error) {
	before, _, err := j.LoadRun(ctx, runID)
	if err != nil {
		return Result{}, fmt.Errorf("retry: %w", err)
	}
	detail := ""
	if before.FailedStep != "" {
		detail = "step " + before.FailedStep + " reopened"
	}
	actx, err := audited(ctx, j, "retry", detail)
	if err != nil {
		return Result{}, err
	}
	if err := j.Retry(actx, runID); err != nil {
		return Result{}, fmt.Errorf("retry: %w", err)
	}
	var reopened []string
	what := "no step executes again: the workflow failed on its own, and its journal replays to it"
	if before.Status == journal.StatusNeedsAttention && before.AttentionKind == journal.AttentionKindJournal {
		what = "its journal read anew at its next entry; it parks again if a row still cannot be used"
	}
	if before.FailedStep != "" {
		reopened = []string{before.FailedStep}
		what = "a fresh retry budget for " + before.FailedStep + ", whose failure ended it; steps that succeeded, and failures the workflow handled, will not run again"
	}
	return Result{RunID: runID, Action: "retry", Status: string(journal.StatusPending), Steps: reopened,
		Message: fmt.Sprintf("run %s is pending again, with %s. %s.", runID, what, ResumedElsewhere)}, nil
}

// Cancel cancels run runID (also while a live process runs it, with
// running); now is the clock that says whether its lease is live. A
// running run refused without running says to add hint ("-running").
func Cancel(ctx context.Context, j journal.Journal, runID string, running bool, now time.Time, hint string) (Result, error) {
	before, _, err := j.LoadRun(ctx, runID)
	if err != nil {
		return Result{}, err
	}
	detail := ""
	if running {
		detail = "also while running"
	}
	actx, err := audited(ctx, j, "cancel", detail)
	if err != nil {
		return Result{}, err
	}
	if err := j.Cancel(actx, runID, journal.CancelOptions{Running: running}); err != nil {
		if errors.Is(err, journal.ErrRunBusy) && before.Status == journal.StatusRunning && !running {
			return Result{}, fmt.Errorf("cancel: %w; to stop it while it runs, add %s", err, hint)
		}
		if now, _, lerr := j.LoadRun(ctx, runID); lerr == nil && (now.Status == journal.StatusSucceeded || now.Status == journal.StatusCancelled) {
			// Not busy: finished, with nothing left to cancel.
			return Result{}, fmt.Errorf("cancel: run %s is already %s: nothing to cancel", runID, now.Status)
		}
		return Result{}, fmt.Errorf("cancel: %w", err)
	}
	after, _, err := j.LoadRun(ctx, runID)
	if err != nil {
		return Result{}, fmt.Errorf("cancel: the run was cancelled; reading it back: %w", err)
	}
	if after.Status == journal.StatusCancelled {
		why := "it had executed nothing, so there was nothing to unwind"
		switch before.Status {
		case journal.StatusFailed:
			why = "it had failed: its body had returned already"
		case journal.StatusNeedsAttention:
			why = "a run waiting for a person does not unwind: the steps it calls from defer did not execute (to have them execute, settle the run first, then cancel it)"
		}
		return Result{RunID: runID, Action: "cancel", Status: string(journal.StatusCancelled),
			Message: fmt.Sprintf("run %s cancelled at once: %s; it will not execute again", runID, why)}, nil
	}
	msg := fmt.Sprintf("run %s is being cancelled (%s): it executes no step any more but those its workflow calls from defer (its compensations), "+
		"then ends cancelled; its unfinished child runs stop with it", runID, after.Status)
	if before.Status == journal.StatusRunning && before.LeaseUntil.After(now) {
		msg += fmt.Sprintf(". %s, which is running it, stops within a second: the step executing now has its context cancelled, and its outcome is journaled", before.LeaseOwner)
	} else {
		msg += ". " + ResumedElsewhere
	}
	return Result{RunID: runID, Action: "cancel", Status: string(after.Status), Message: msg + "."}, nil
}

// Accept moves run runID, stopped on a version change, to version want of
// its workflow (the newest stored one when want is "").
func Accept(ctx context.Context, j journal.Journal, runID, want string) (Result, error) {
	r, _, err := j.LoadRun(ctx, runID)
	if err != nil {
		return Result{}, err
	}
	if r.Status != journal.StatusNeedsAttention || r.AttentionKind != journal.AttentionKindVersion {
		return Result{}, fmt.Errorf("run %s is %s: %w", runID, StatusText(r), journal.ErrNotVersionStop)
	}
	ms, err := j.ListManifests(ctx, r.Workflow)
	if err != nil {
		return Result{}, err
	}
	var to *journal.ManifestRecord
	for i := range ms {
		if (want == "" && i == 0) || ms[i].Version == want {
			to = &ms[i]
			break
		}
	}
	switch {
	case to == nil && want != "":
		known := make([]string, len(ms))
		for i, m := range ms {
			known[i] = m.Version
		}
		return Result{}, fmt.Errorf("run %s: version %s of %s is not in the journal (stored: %s)", runID, want, r.Workflow, strings.Join(known, ", "))
	case to == nil || to.Version == r.Version:
		return Result{}, fmt.Errorf("run %s: no version of %s newer than the run's own %s is stored: start the new code first, or name one with -to", runID, r.Workflow, r.Version)
	}
	actx, err := audited(ctx, j, "accept-version", "version "+r.Version+" → "+to.Version)
	if err != nil {
		return Result{}, err
	}
	if err := resume.NewEngine(j).AcceptVersion(actx, runID, to.Version); err != nil {
		return Result{}, err
	}
	return Result{RunID: runID, Action: "accept-version", Status: string(journal.StatusPending),
		Version: to.Version, OldVersion: r.Version,
		Message: fmt.Sprintf("run %s: accepted version %s of %s (was %s); the run is pending, and its journaled steps whose keys the new version still has will not run again. %s.",
			runID, to.Version, ShortName(r.Workflow), r.Version, ResumedElsewhere)}, nil
}

// Fork starts a new run from run runID's journal up to step from (see
// resume.Engine.Fork): input, JSON, replaces the run's input unless "";
// newID names the new run ("" for runID~forkN). The new run is pending.
func Fork(ctx context.Context, j journal.Journal, runID, from, input, newID string) (Result, error) {
	if from == "" {
		return Result{}, fmt.Errorf("%w: name the step the fork executes from with -from STEP (runs show %s lists them)", ErrUsage, runID)
	}
	opts := resume.ForkOptions{ID: newID}
	if input != "" {
		if !json.Valid([]byte(input)) {
			return Result{}, fmt.Errorf("%w: -input %q is not valid JSON", ErrUsage, input)
		}
		opts.Input = json.RawMessage(input)
	}
	actx, err := audited(ctx, j, journal.ActionFork, "")
	if err != nil {
		return Result{}, err
	}
	res, err := resume.NewEngine(j).Fork(actx, runID, from, opts)
	if err != nil {
		return Result{}, err
	}
	_, steps, err := j.LoadRun(ctx, res.RunID)
	if err != nil {
		return Result{}, fmt.Errorf("run %s forked to %s; reading the fork back: %w", runID, res.RunID, err)
	}
	copied := make([]string, 0, len(steps))
	for _, s := range steps {
		copied = append(copied, s.StepKey)
	}
	what := "with the run's input"
	if input != "" {
		what = "with the input given"
	}
	return Result{RunID: res.RunID, From: runID, Action: journal.ActionFork, Status: string(res.Status), Step: from, Steps: copied,
		Version: res.Version,
		Message: fmt.Sprintf("run %s forked to %s at step %s, %s, pinned to version %s: %d step(s) before %s copied, which replay; %s and what follows execute in %s. %s.",
			runID, res.RunID, from, what, res.Version, len(copied), from, from, res.RunID, ResumedElsewhere)}, nil
}

// Signal sends event name with payload (JSON) to run runID.
func Signal(ctx context.Context, j journal.Journal, runID, name, payload string) (Result, error) {
	return SignalWith(ctx, j, runID, name, payload, resume.SignalOptions{})
}

// SignalWith is Signal with the engine's options: Unawaited keeps a signal
// whose name the run's version never awaits, which Signal refuses
// (resume.ErrNotAwaited).
func SignalWith(ctx context.Context, j journal.Journal, runID, name, payload string, opts resume.SignalOptions) (Result, error) {
	if !json.Valid([]byte(payload)) {
		return Result{}, fmt.Errorf("%w: the payload %q is not valid JSON", ErrUsage, payload)
	}
	actx, err := audited(ctx, j, "signal", "event "+name)
	if err != nil {
		return Result{}, err
	}
	if err := resume.NewEngine(j).SignalWith(actx, runID, name, json.RawMessage(payload), opts); err != nil {
		return Result{}, err
	}
	r, _, err := j.LoadRun(ctx, runID)
	if err != nil {
		return Result{}, fmt.Errorf("signal sent; reading the run back: %w", err)
	}
	what := "kept for its next await of " + name
	if r.Status == journal.StatusPending {
		what = "it woke the run, which is pending"
	}
	return Result{RunID: runID, Action: "signal", Status: string(r.Status), Step: name,
		Message: fmt.Sprintf("run %s: signal %s sent, %s. %s.", runID, name, what, ResumedElsewhere)}, nil
}

// StatusText is the status as people read it: a run waiting for a person
// or an event says why.
func StatusText(r journal.RunRecord) string {
	if !r.CancelRequested.IsZero() && !r.Status.Finished() && r.Status != journal.StatusNeedsAttention {
		return string(r.Status) + " (cancelling)"
	}
	if r.Status == journal.StatusNeedsAttention && r.AttentionKind != "" {
		return string(r.Status) + " (" + r.AttentionKind + ")"
	}
	if r.Status == journal.StatusWaiting && r.WaitKind != "" {
		return string(r.Status) + " (" + WaitText(r) + ")"
	}
	return string(r.Status)
}

// WaitText says what a waiting run waits for and until when.
func WaitText(r journal.RunRecord) string {
	what := r.WaitKind
	if r.WaitName != "" {
		what += " " + r.WaitName
	}
	if r.WakeAt.IsZero() {
		return what + ", no time limit"
	}
	return what + " until " + r.WakeAt.UTC().Format("2006-01-02 15:04:05.000") + " UTC"
}

// CurrentStep is the step a person must look at, or else the last
// journaled one: r.LastStep for a listed run, else found in steps.
func CurrentStep(r journal.RunRecord, steps []journal.StepRecord) string {
	if r.AttentionStep != "" {
		return r.AttentionStep
	}
	if r.LastStep != "" {
		return r.LastStep
	}
	var last journal.StepRecord
	for _, s := range steps {
		if s.Seq >= last.Seq {
			last = s
		}
	}
	return last.StepKey
}

// ShortName is a qualified workflow name without its package path's
// directories: "example.com/shop.Checkout" -> "shop.Checkout".
func ShortName(qualified string) string {
	return qualified[strings.LastIndex(qualified, "/")+1:]
}
