package resume

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/resumegen/resumegen/runtime/journal"
)

// Tracer observes what an engine executes, for tracing: each entry of a run
// into this process (from its claim to the end of its body, the run's state
// recorded) and each attempt of a step's code. Package resumeotel adapts it
// to OpenTelemetry. Set it with [WithTracer]; an engine without one does
// not pay for it.
//
// The engine calls the methods on the goroutine that executes the entry or
// the step, concurrently for runs executing in parallel. The context each
// returns is the one what happens inside runs under (the
// body of the entry; the step's code, and a child run it starts, for an
// attempt), so spans nest: a child run's entry happens inside its parent's
// attempt. Each end function is called once, when the entry or the attempt
// ends; a process that dies (killed, out of memory) never calls it.
//
// A step whose outcome the journal already holds is replayed, not
// executed: no attempt. An entry's [EntryInfo.Journaled] says how many
// steps it started from.
type Tracer interface {
	// Entry is called as the engine begins executing an entry of a run.
	Entry(ctx context.Context, entry EntryInfo) (context.Context, func(EntryEnd))
	// Attempt is called as an attempt of a step's code begins.
	Attempt(ctx context.Context, step StepInfo) (context.Context, func(AttemptEnd))
}

// WithTracer makes t observe the runs this engine executes (see [Tracer]).
func WithTracer(t Tracer) Option {
	return func(e *Engine) { e.tracer = t }
}

// EntryInfo describes an entry of a run into this process.
type EntryInfo struct {
	RunID    string
	Workflow string
	Version  string
	// Created is when the run was created, as the journal stored it: with
	// RunID, it tells the run from a run of the same id in another journal.
	Created time.Time
	// Parent is the id of the parent run of a child run, "" otherwise. A
	// child run's entry happens inside an attempt of its parent's step.
	Parent string
	// Entry numbers the entries of the run, from 1, across processes (the
	// journal counts the run's claims): the entries before this one, in
	// this process or in others, are 1 to Entry-1.
	Entry int
	// Journaled counts the step rows the journal held as the entry began:
	// what the body replays rather than executes.
	Journaled int
}

// EntryEnd is how an entry of a run ended.
type EntryEnd struct {
	// Result is the run as the entry left it. Its Status is the entry's
	// outcome: succeeded, failed, needs_attention, waiting or cancelled;
	// pending when the run was given back (a worker shutting down, a
	// journal write that failed), running when another process took it
	// over.
	Result Result
	// Err is what [Engine.Start] or [Engine.Resume] returns for the entry:
	// nil when the run succeeded, a *[RunError] for a run that did not,
	// another error when the engine could not record the run's state.
	Err error
}

// AttemptEnd is how an attempt of a step ended.
type AttemptEnd struct {
	// Outcome is "succeeded" (the step returned; its outcome is
	// journaled), "failed" (journaled; another attempt follows unless
	// Final), "in_flight" (a once step whose outcome is unknown: it
	// panicked, or its result cannot be journaled; its row stays in_flight
	// and the run parks for a person), "waiting" (the child run the step
	// executes waits: the run suspends, and a later entry takes the step up
	// again) or "stopped" (the run stopped during the attempt with nothing
	// journaled for it: the lease was lost, the journal could not be
	// written, a child run needs a person).
	Outcome string
	// Err is the step's error for a failure, why the run stopped
	// otherwise, nil for a success.
	Err error
	// Final is true for a failure the body receives: no attempt follows.
	Final bool
}

// The values of AttemptEnd.Outcome.
const (
	outcomeSucceeded = "succeeded"
	outcomeFailed    = "failed"
	outcomeInFlight  = "in_flight"
	outcomeWaiting   = "waiting"
	outcomeStopped   = "stopped"
)

// tracedEntry is runEntry, observed by the engine's tracer if it has one.
func (e *Engine) tracedEntry(ctx context.Context, run journal.RunRecord, steps []journal.StepRecord, drain <-chan struct{}, outcome *entryOutcome, parent *WorkflowDef) (Result, error) {
	if e.tracer == nil {
		return e.runEntry(ctx, run, steps, drain, outcome, parent)
	}
	ctx, end := e.tracer.Entry(ctx, EntryInfo{
		RunID: run.RunID, Workflow: run.Workflow, Version: run.Version, Created: run.CreatedAt,
		Parent: run.Parent, Entry: run.Attempts, Journaled: len(steps),
	})
	// No defer: a panic standing for the process's death leaves the entry
	// unended, as the death of the process would.
	res, err := e.runEntry(ctx, run, steps, drain, outcome, parent)
	end(EntryEnd{Result: res, Err: err})
	return res, err
}

// tracedAttempt is attempt, observed by the engine's tracer if it has one.
func (st *runState) tracedAttempt(ctx context.Context, def *StepDef, rec *journal.StepRecord, body func(context.Context) (json.RawMessage, error)) error {
	t := st.e.tracer
	if t == nil {
		return st.attempt(ctx, def, rec, body)
	}
	ctx, end := t.Attempt(ctx, st.stepInfo(def, rec))
	err := st.attempt(ctx, def, rec, body)
	end(st.attemptEnd(rec, err))
	return err
}

// attemptEnd tells how the attempt that journaled rec and returned err
// ended.
func (st *runState) attemptEnd(rec *journal.StepRecord, err error) AttemptEnd {
	if err == nil {
		return AttemptEnd{Outcome: outcomeSucceeded}
	}
	stop := st.stopped()
	var runErr *RunError
	switch {
	case stop == nil:
		return AttemptEnd{Outcome: outcomeFailed, Err: err, Final: rec.Final}
	case errors.As(stop, new(*suspension)):
		return AttemptEnd{Outcome: outcomeWaiting, Err: stop}
	case errors.As(stop, &runErr) && runErr.Step == rec.StepKey &&
		(runErr.Kind == AttentionKindStep || runErr.Kind == AttentionKindResult):
		return AttemptEnd{Outcome: outcomeInFlight, Err: stop}
	}
	return AttemptEnd{Outcome: outcomeStopped, Err: stop}
}
