package resume

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/resumegen/resumegen/runtime/journal"
)

// A run stops before its next step when a person cancels it
// ([Engine.Cancel]) or its deadline passes ([WorkflowDef.Timeout],
// [WithRunTimeout]). Its body is not abandoned: a worker takes the run,
// the body replays its journal, and the first step call that would
// execute returns a *[StopError] instead (journaled as that step's
// outcome, so that a resumed run replays it). The body returns it, its
// deferred calls run, and the steps they call (a saga's compensations,
// [StepDef.Deferred]) execute, with a context that the stop does not
// cancel, bounded by the engine's unwind timeout ([WithUnwindTimeout]). A
// cancelled run ends cancelled, a run past its deadline failed with
// [ErrDeadline]. Child runs stop with their parent: a cancellation
// reaches every unfinished descendant, and a child's deadline is no
// later than its parent's.

// ErrDeadline matches (errors.Is) the *[StopError] of a run past its
// deadline, and the error of a run that failed so: the body can test it,
// and so can a parent that runs it as a child run.
var ErrDeadline = errors.New("resume: run deadline exceeded")

// Why a run stops, as in [StopError.Reason].
const (
	StopCancelled = "cancelled"
	StopDeadline  = "deadline"
)

// StopError is what a step call returns, without executing the step, in a
// run that must stop: cancelled (errors.Is(err, [ErrRunCancelled])) or
// past its deadline (errors.Is(err, [ErrDeadline])). A body should return
// it: its deferred calls then run, and the steps they call still execute.
// It is journaled as the step's outcome and replays as itself.
type StopError struct {
	// RunID is the run that stops, Step the step key not executed.
	RunID string `json:"run_id"`
	Step  string `json:"step"`
	// Reason is StopCancelled or StopDeadline.
	Reason string `json:"reason"`
	// At is when the cancellation was asked, or the deadline, by the
	// journal's clock.
	At time.Time `json:"at"`
}

// Error says which run stopped, why, and which step did not execute.
func (e *StopError) Error() string {
	why := "was cancelled at " + e.At.UTC().Format(time.RFC3339)
	if e.Reason == StopDeadline {
		why = "passed its deadline, " + e.At.UTC().Format(time.RFC3339)
	}
	if e.Step == "" {
		return fmt.Sprintf("run %s %s", e.RunID, why)
	}
	return fmt.Sprintf("run %s %s: step %s not executed", e.RunID, why, e.Step)
}

// Is matches ErrRunCancelled or ErrDeadline, by Reason.
func (e *StopError) Is(target error) bool {
	return target == ErrRunCancelled && e.Reason == StopCancelled || target == ErrDeadline && e.Reason == StopDeadline
}

// DefaultUnwindTimeout is how long the steps a stopping run calls from
// defer may take, in all, unless [WithUnwindTimeout] says otherwise.
const DefaultUnwindTimeout = 5 * time.Minute

// WithUnwindTimeout bounds the unwinding of a run that must stop: the
// steps its body calls from defer (its compensations) execute with a
// context whose deadline is d after this engine began unwinding the run
// (each entry anew: a crash does not spend the next entry's time). The
// default is [DefaultUnwindTimeout].
func WithUnwindTimeout(d time.Duration) Option {
	return func(e *Engine) { e.unwindTimeout = d }
}

type runTimeoutKey struct{}

// WithRunTimeout returns a context under which [Engine.Start],
// [Engine.Enqueue] and [Engine.EnqueueAt] create runs with deadline d
// after their creation (by the journal's clock), in place of the
// workflow's timeout= (0: none). The deadline is journaled with the run:
// resuming it under another context keeps it. It does not apply to runs
// that exist already, nor to child runs, which have their own timeout=
// and end no later than their parent.
func WithRunTimeout(ctx context.Context, d time.Duration) context.Context {
	return context.WithValue(ctx, runTimeoutKey{}, d)
}

// runTimeout is the deadline's distance a run of def created under ctx
// gets: WithRunTimeout's, or def's.
func runTimeout(ctx context.Context, def *WorkflowDef) time.Duration {
	if d, ok := ctx.Value(runTimeoutKey{}).(time.Duration); ok {
		return d
	}
	return def.Timeout
}

// cancelPoll is how often an engine asks the journal whether a run it
// executes was cancelled: a third of a lease, between a quarter of a
// second and a second.
func (e *Engine) cancelPoll() time.Duration {
	return min(max(e.lease/3, 250*time.Millisecond), time.Second)
}

// halt records that the run must stop, for reason (the first reason
// wins, but a cancellation overrides a deadline: the run ends
// cancelled), and cancels the context of the step executing now.
func (st *runState) halt(reason string, at time.Time) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.haltReason == StopCancelled || st.haltReason == reason {
		return
	}
	if st.haltReason == "" {
		st.unwindBy = time.Now().Add(st.e.unwindTimeout)
	}
	st.haltReason, st.haltAt = reason, at
	if st.cancelAttempt != nil {
		st.cancelAttempt(&StopError{RunID: st.run.RunID, Reason: reason, At: at})
	}
}

// halting returns why the run must stop, "" while it goes on, and when.
func (st *runState) halting() (reason string, at time.Time) {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.haltReason, st.haltAt
}

// stopSeen records that the body received the run's own stop (a step's
// refusal, executed or replayed).
func (st *runState) stopSeen(reason string) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.stopDelivered = reason
}

// stopReceived reports whether the body received the stop for reason.
func (st *runState) stopReceived(reason string) bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.stopDelivered == reason
}

// ownStop returns err's *StopError when it is this run's own stop.
func (st *runState) ownStop(err error) (*StopError, bool) {
	var se *StopError
	if errors.As(err, &se) && se.RunID == st.run.RunID {
		return se, true
	}
	return nil, false
}

// refusing reports whether a call of step def must not execute: the run
// must stop, and def is not called from defer.
func (st *runState) refusing(ctx context.Context, def *StepDef) bool {
	st.checkDeadline(ctx)
	reason, _ := st.halting()
	return reason != "" && !def.Deferred
}

// checkDeadline stops the run if its deadline has come by the journal's
// clock (pastDeadline): each step call looks, so that the stop does not
// wait for the timer of watchStop.
func (st *runState) checkDeadline(ctx context.Context) {
	if st.pastDeadline(ctx) {
		st.halt(StopDeadline, st.run.Deadline)
	}
}

// pastDeadline reports whether the run's deadline has come by the
// journal's clock: the earliest it may read now, counted on from the
// engine's last reading of it (journalEarliest: a round trip only once
// the engine's clock has parted from real time), or the journal's word
// when it claimed the run waking at the deadline. A
// process whose clock is fast never stops a run early, nor one whose
// clock is slow late.
func (st *runState) pastDeadline(ctx context.Context) bool {
	d := st.run.Deadline
	if d.IsZero() {
		return false
	}
	now, ok := st.e.journalEarliest(ctx)
	if !ok {
		// No reading of the journal's clock yet: only its word counts.
		return !st.run.WakeAt.IsZero() && !d.After(st.run.WakeAt)
	}
	return st.due(d, now)
}

// childStopped is called when a child run of this one ended cancelled: a
// cancellation of this run reaches its children in the same commit, so
// this run stops now if it was the cause, before its body goes on.
func (st *runState) childStopped(ctx context.Context) {
	at, err := st.e.journal.CancelRequested(ctx, st.run.RunID)
	if err == nil && !at.IsZero() {
		st.halt(StopCancelled, at)
	}
}

// refuse journals that step key (named name) does not execute because
// the run must stop: a final failed row holding the *StopError, after the
// attempts of prev, if any (a step whose retries the stop cut short). It
// returns the *StopError, which the body receives.
func (st *runState) refuse(ctx context.Context, name, key string, prev journal.StepRecord) error {
	reason, at := st.halting()
	serr := &StopError{RunID: st.run.RunID, Step: key, Reason: reason, At: at}
	st.e.fault(key, name, FaultBefore)
	if err := st.holdLease(ctx, key); err != nil {
		return err
	}
	now := st.e.clockNow()
	rec := journal.StepRecord{
		RunID: st.run.RunID, StepKey: key, Name: name, Status: journal.StepFailed, Final: true,
		Error: serr.Error(), ErrorDetail: encodeStepError(st.def, serr),
		Attempt: prev.Attempt, AttemptBase: prev.AttemptBase, History: prev.History,
		Seq: st.nextSeq(), StartedAt: now, FinishedAt: now,
	}
	if err := st.write(ctx, rec); err != nil {
		return err
	}
	st.e.fault(key, name, FaultAfter)
	st.delivered(key, true)
	st.stopSeen(reason)
	return serr
}

// stepContext is the context an attempt of step def executes with: one
// that the run's stop cancels, for a step not called from defer (a child
// run stops by itself: it has its own cancellation and deadline), or, for
// one called from defer while the run stops, one bounded by the unwind
// timeout. cancel releases it.
func (st *runState) stepContext(ctx context.Context, def *StepDef) (context.Context, context.CancelFunc) {
	if def.Child {
		return ctx, func() {}
	}
	if def.Deferred {
		st.mu.Lock()
		unwinding, by := st.haltReason != "", st.unwindBy
		st.mu.Unlock()
		if !unwinding {
			return ctx, func() {}
		}
		return context.WithDeadline(ctx, by)
	}
	sctx, cancel := context.WithCancelCause(ctx)
	st.mu.Lock()
	st.cancelAttempt = cancel
	if st.haltReason != "" {
		// Stopped as the attempt began: it ends at once.
		cancel(&StopError{RunID: st.run.RunID, Reason: st.haltReason, At: st.haltAt})
	}
	st.mu.Unlock()
	return sctx, func() {
		st.mu.Lock()
		st.cancelAttempt = nil
		st.mu.Unlock()
		cancel(nil)
	}
}

// stopCause is what the run's stop made the context of a step attempt
// end with, or nil when it did not end it.
func stopCause(sctx context.Context) error {
	if se := new(*StopError); errors.As(context.Cause(sctx), se) {
		return *se
	}
	return nil
}

// watchStop makes the run stop before its next step when a person
// cancels it (asked of the journal every cancelPoll) or its deadline
// passes (by the journal's clock, as the engine counts it on: see
// atJournal), until ctx ends; a cancellation noticed while a child run
// executes is passed on to it.
func (e *Engine) watchStop(ctx context.Context, st *runState) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		var deadline <-chan time.Time
		if d := st.run.Deadline; !d.IsZero() {
			if reason, _ := st.halting(); reason == "" {
				deadline = e.atJournal(d)
			}
		}
		t := time.NewTicker(e.cancelPoll())
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-deadline:
				deadline = nil
				if !st.pastDeadline(ctx) {
					// A newer reading of the journal's clock moved it.
					deadline = e.atJournal(st.run.Deadline)
					continue
				}
				st.halt(StopDeadline, st.run.Deadline)
			case <-t.C:
				if reason, _ := st.halting(); reason == StopCancelled {
					continue
				}
				at, err := e.journal.CancelRequested(ctx, st.run.RunID)
				if err != nil {
					if ctx.Err() == nil {
						e.logger.Warn("cannot tell whether a run was cancelled; asking again", "run", st.run.RunID, "err", err)
					}
					continue
				}
				if !at.IsZero() {
					st.halt(StopCancelled, at)
					st.cancelChild(ctx)
				}
			}
		}
	}()
	return done
}

// cancelChild asks the child run the run executes now, if any, to stop:
// its own engine loop (in this process) notices, as for any run.
func (st *runState) cancelChild(ctx context.Context) {
	st.mu.Lock()
	child := st.child
	st.mu.Unlock()
	if child == "" {
		return
	}
	if err := st.e.journal.Cancel(ctx, child, CancelOptions{Running: true}); err != nil && !errors.Is(err, ErrRunBusy) {
		st.e.logger.Warn("cancelling the child run of a cancelled run failed; it stops at its next claim", "run", st.run.RunID, "child", child, "err", err)
	}
}

// drivesChild reports whether a stopping run executes its child step key
// all the same: its child run exists, and must be driven to its end (it
// unwinds too) for the step to have an outcome. A cancellation is passed
// on to the child first (a child created as its parent was cancelled may
// have missed it).
func (st *runState) drivesChild(ctx context.Context, key string) (bool, error) {
	id := ChildRunID(st.run.RunID, key)
	if _, _, err := st.e.journal.LoadRun(ctx, id); errors.Is(err, ErrRunNotFound) {
		return false, nil
	} else if err != nil {
		return false, st.stopf("run %s, step %s: read its child run %s: %w", st.run.RunID, key, id, err)
	}
	if reason, _ := st.halting(); reason == StopCancelled {
		if err := st.e.journal.Cancel(ctx, id, CancelOptions{Running: true}); err != nil && !errors.Is(err, ErrRunBusy) {
			return false, st.stopf("run %s, step %s: cancel its child run %s: %w", st.run.RunID, key, id, err)
		}
	}
	return true, nil
}

// stopEnd is how a run that had to stop ends, given what its body
// returned: ok is false when the stop does not decide it (a run past its
// deadline whose body finished without receiving the stop ends as it
// returned).
func (st *runState) stopEnd(run *journal.RunRecord, bodyErr error, codec *WorkflowDef) (ok bool) {
	reason, at := st.halting()
	switch {
	case reason == StopCancelled:
		run.Status, run.Output, run.FailedStep, run.ErrorDetail = StatusCancelled, nil, "", nil
		run.Error = "cancelled (asked at " + at.UTC().Format(time.RFC3339) + "); the body returned no error"
		if bodyErr != nil {
			run.Error = "cancelled (asked at " + at.UTC().Format(time.RFC3339) + "); the body returned: " + bodyErr.Error()
		}
		return true
	case reason == StopDeadline && bodyErr == nil && st.stopReceived(StopDeadline):
		// The body swallowed the stop: the run still failed its deadline.
		serr := &StopError{RunID: st.run.RunID, Reason: StopDeadline, At: at}
		run.Status, run.Output, run.Error, run.FailedStep = StatusFailed, nil, serr.Error(), st.failedStep()
		run.ErrorDetail = encodeStepError(codec, serr)
		return true
	}
	return false
}
