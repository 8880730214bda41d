package resume

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/resumegen/resumegen/runtime/journal"
)

// ContinueAsNew ends the run executing ctx and starts the next run of the
// same workflow with args as its input, in one commit: the body returns
// it as its error,
//
//	return resume.ContinueAsNew(ctx, cursor, limit)
//
// (a body whose result is (T, error) returns its zero T beside it). The
// run ends succeeded, its [Result.ContinuedAs] naming the next run, and
// the next one, [NextRunID] of it, is created pending, on the program's
// version, for a worker or [Engine.Resume] to execute, with an empty
// journal: a poller or an entity that runs for ever keeps a journal no
// longer than one run's. args are the workflow's parameters after its
// context, as [Engine.Start] takes them; an input the workflow cannot
// decode parks the next run at its entry, as a corrupt row does.
//
// A run asked to stop ([Engine.Cancel]) or past its deadline ends as it
// would have, not continued; a child run cannot continue (it fails
// saying so); nor can a run on a journal without [journal.Continuer].
func ContinueAsNew(ctx context.Context, args ...any) error {
	input, err := encodeArgs(args)
	if err != nil {
		return fmt.Errorf("resume.ContinueAsNew: %w", err)
	}
	return &continueAsNew{input: input}
}

// continueAsNew is the error value of ContinueAsNew: the next run's input.
type continueAsNew struct{ input Args }

func (c *continueAsNew) Error() string {
	return "the body ended with resume.ContinueAsNew outside a run the engine executes"
}

// NextRunID is the id of the run that continues run runID: runID + "~2",
// then "~3" and so on (a run id already ending in ~N, N ≥ 2, has the
// same base), so that every run of a chain has an id known from the
// first one's, and continuing twice names the same run.
func NextRunID(runID string) string {
	if i := strings.LastIndexByte(runID, '~'); i >= 0 {
		if n, err := strconv.Atoi(runID[i+1:]); err == nil && n >= 2 && strconv.Itoa(n) == runID[i+1:] {
			return runID[:i] + "~" + strconv.Itoa(n+1)
		}
	}
	return runID + "~2"
}

// continuation decides whether run, whose body returned c, can
// continue (its next run gets the workflow's own timeout=, counted from
// now by the journal's clock, not a WithRunTimeout of the context that
// started the first run): it returns the next run and the journal that writes both, or
// why not (the run then fails with it).
func (e *Engine) continuation(ctx context.Context, run journal.RunRecord, def *WorkflowDef, c *continueAsNew) (journal.RunRecord, journal.Continuer, string) {
	const how = "the body ended with resume.ContinueAsNew, but "
	next := journal.RunRecord{
		RunID: NextRunID(run.RunID), Workflow: def.QualifiedName(), Version: def.Version,
		Status: StatusPending, Input: []byte(c.input), ContinuedFrom: run.RunID,
	}
	if def.Queue != "" {
		next.Queue, next.QueueKey, next.Priority = def.Queue, run.QueueKey, run.Priority
	}
	if run.Parent != "" {
		return next, nil, how + "run " + run.RunID + " is a child run of " + run.Parent + ": a child run cannot continue as new (its parent waits for it by its id); return its result, and let the parent start the next child"
	}
	if err := journal.CheckRunID(next.RunID); err != nil {
		return next, nil, how + "its next run's id cannot be stored: " + err.Error()
	}
	if err := journal.CheckValue("input", next.Input); err != nil {
		return next, nil, how + "its next run's input cannot be stored: " + err.Error()
	}
	if def.Timeout > 0 {
		// The workflow's timeout= holds for each run of the chain, from
		// its creation, by the journal's clock.
		now, _, err := e.journalNow(ctx)
		if err != nil {
			return next, nil, how + "the journal's clock, for the next run's deadline, could not be read: " + err.Error()
		}
		next.Deadline = now.Add(def.Timeout)
	}
	cj, ok := journal.Find[journal.Continuer](e.journal)
	if !ok {
		return next, nil, how + "the journal does not implement journal.Continuer"
	}
	return next, cj, ""
}

// continueBy ends run succeeded, continued as next, and creates next, in
// one commit, retrying a failed write with backoff until the lease
// expires (until), as finishBy does. A next run that exists already
// (ErrRunConflict: not this chain's, or a run started by hand) fails
// the run instead, saying so.
func (e *Engine) continueBy(ctx context.Context, lease journal.Lease, run, next journal.RunRecord, cj journal.Continuer, until func() time.Time) (Result, error) {
	run.UpdatedAt = e.clockNow()
	run.Status, run.Output, run.Error, run.ContinuedAs = StatusSucceeded, nullResult, "", next.RunID
	run.AttentionStep, run.AttentionKind, run.FailedStep, run.ErrorDetail = "", "", "", nil
	run.WaitKind, run.WaitName, run.WakeAt = "", "", time.Time{}
	retried := false
	err := e.retryWrite(ctx, run.RunID, "continue as "+next.RunID, until, func(wctx context.Context) error {
		_, err := cj.ContinueRun(wctx, lease, run, next)
		if retried && errors.Is(err, ErrLeaseLost) {
			// An earlier try committed, but its answer was lost.
			if got, _, lerr := e.journal.LoadRun(wctx, run.RunID); lerr == nil && got.Epoch == lease.Epoch &&
				got.LeaseOwner == "" && got.ContinuedAs == next.RunID {
				return nil
			}
		}
		if errors.Is(err, ErrRunConflict) {
			return Permanent(err)
		}
		retried = true
		return err
	})
	if errors.Is(err, ErrRunConflict) {
		run.Status, run.Output, run.ContinuedAs = StatusFailed, nil, ""
		run.Error = fmt.Sprintf("the body ended with resume.ContinueAsNew, but its next run %s exists already and does not continue it: %v", next.RunID, err)
		return e.finishBy(ctx, lease, run, until)
	}
	if err != nil {
		return resultOf(run), fmt.Errorf("run %s: continue as %s: %w", run.RunID, next.RunID, err)
	}
	e.logger.Debug("run continued as new", "run", run.RunID, "workflow", run.Workflow, "next", next.RunID)
	return resultOf(run), nil
}
