package resume

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/resumegen/resumegen/runtime/journal"
)

// A workflow called from a workflow body is a child run: a run of its own,
// with its own journal and version, whose id is the parent's id, a slash
// and the call's step key (order-7/Notify, order-7/Notify#2). The parent
// journals the child's outcome, value and error, as the outcome of that
// step, so a resumed parent replays it like any step's. The parent drives
// the child: it executes the child's body in its own process and goroutine,
// under a lease of its own, and resumes it where it stopped after a crash.
// Workers never claim a child run by themselves.

func callChild[T any](ctx context.Context, def *StepDef, key stepKey, wf any, fn func(context.Context) (T, error), args []any) (T, error) {
	st := stateFrom(ctx)
	if st == nil {
		return fn(ctx)
	}
	var out T
	_, noValue := any(out).(struct{})
	err := st.step(ctx, def, key, func(sctx context.Context) (json.RawMessage, error) {
		raw, err := st.runChild(sctx, wf, args)
		if noValue {
			return nullResult, err
		}
		if raw == nil {
			return nil, err
		}
		// The body gets the child's output as the journal carries it, on
		// first execution as on replay.
		if derr := decodeResult(raw, &out); derr != nil {
			return nil, errors.Join(err, fmt.Errorf("child output does not decode: %w", derr))
		}
		return raw, err
	}, func(raw json.RawMessage) error {
		if noValue {
			return nil
		}
		return decodeResult(raw, &out)
	})
	return out, err
}

// ChildRunID is the id of the child run that step key of run runID starts,
// for a run that never moved with a rename of that step; [ChildRunOf]
// covers every run.
func ChildRunID(runID, stepKey string) string { return runID + "/" + stepKey }

// ChildRunOf is the id of the child run that step key of run starts: the
// run's id, a slash and the step's origin key (journal.OriginKey), so
// that a renamed step (renamed-from=) finds the child its earlier name
// started. run's Moves must be filled (LoadRun, Claim and ClaimNext do).
func ChildRunOf(run journal.RunRecord, stepKey string) string {
	return ChildRunID(run.RunID, journal.OriginKey(run.Moves, stepKey))
}

// childRunID is the id of the child run of the step info describes. A
// renamed step's child is under its origin key; one an older runtime
// started after the move, under the step's own key, is kept when it
// exists.
func (st *runState) childRunID(ctx context.Context, info StepInfo) (string, error) {
	id := ChildRunID(st.run.RunID, info.originKey())
	if info.originKey() == info.StepKey {
		return id, nil
	}
	own := ChildRunID(st.run.RunID, info.StepKey)
	_, _, err := st.e.journal.LoadRun(ctx, own)
	switch {
	case err == nil:
		return own, nil
	case errors.Is(err, journal.ErrRunNotFound):
		return id, nil
	}
	return "", fmt.Errorf("look for child run %s: %w", own, err)
}

// runChild executes the child run of the step running in sctx to its end
// and returns its output (JSON) and the error its body returned. A child
// that stops without an outcome stops the parent: the parent parks when the
// child needs a person, and is left to a resume otherwise.
func (st *runState) runChild(sctx context.Context, wf any, args []any) (json.RawMessage, error) {
	e := st.e
	info, _ := StepFromContext(sctx)
	cdef, err := lookupStart(wf)
	if err != nil {
		return nil, Permanent(err)
	}
	input, err := encodeArgs(args)
	if err != nil {
		return nil, Permanent(err)
	}
	// The child's body must not see the parent's step: it runs steps of
	// its own, under its own run.
	// Nor its fan-out, if the call is in one.
	fan := fanFrom(sctx, st)
	ctx := context.WithValue(context.WithValue(sctx, stepInfoKey{}, nil), fanKey{}, (*fanState)(nil))
	childID, err := st.childRunID(ctx, info)
	if err != nil {
		return nil, st.stopf("run %s, step %s: %w", st.run.RunID, info.StepKey, err)
	}
	if err := journal.CheckRunID(childID); err != nil {
		return nil, Permanent(fmt.Errorf("run %s, step %s: the child run's id (the run's id, a slash and the step key): %w", st.run.RunID, info.StepKey, err))
	}
	if err := e.saveManifest(ctx, cdef); err != nil {
		return nil, st.stopf("run %s, step %s: %w", st.run.RunID, info.StepKey, err)
	}
	if fo, ok := journal.Find[journal.FanOut](e.journal); ok && fan != nil {
		return st.dispatchChild(ctx, fan, fo, cdef, info, childID, input)
	}
	now := e.clockNow()
	rec := journal.RunRecord{
		RunID: childID, Workflow: cdef.QualifiedName(), Version: cdef.Version, Parent: st.run.RunID,
		Status: StatusPending, Input: json.RawMessage(input), CreatedAt: now, UpdatedAt: now,
		LeaseOwner: e.owner, LeaseUntil: now.Add(e.lease),
	}
	if cdef.Timeout > 0 {
		rec.Deadline = now.Add(cdef.Timeout) // no later than the parent's: the journal sees to it
	}
	sent := time.Now()
	stored, created, err := e.journal.CreateRun(ctx, rec)
	if err != nil {
		return nil, st.stopf("run %s, step %s: create child run %s: %w", st.run.RunID, info.StepKey, childID, err)
	}
	if created {
		stored.LeaseUntil = heldUntil(sent, e.lease)
	}
	if !created && (!cdef.named(stored.Workflow) || !bytes.Equal(compactJSON(stored.Input), compactJSON(input))) {
		return nil, Permanent(fmt.Errorf("run %s, step %s: child run %s: %w: it is %s with other input", st.run.RunID, info.StepKey, childID, ErrRunConflict, stored.Workflow))
	}
	var steps []journal.StepRecord
	if !created {
		var done bool
		stored, steps, done, err = st.claimChild(ctx, stored, info)
		if err != nil || done {
			return st.childOutcome(stored, cdef, info.StepKey, err)
		}
	}
	var outcome entryOutcome
	st.mu.Lock()
	st.child = childID
	st.mu.Unlock()
	if reason, _ := st.halting(); reason == StopCancelled {
		// The run was cancelled as it created its child: pass it on.
		st.cancelChild(ctx)
	}
	res, err := e.tracedEntry(ctx, stored, steps, st.drain, &outcome, st.def)
	st.mu.Lock()
	st.child = ""
	st.mu.Unlock()
	if res.Status == StatusFailed && outcome.bodyErr != nil {
		return res.Output, outcome.bodyErr // the body's own error, with its identity, and its value
	}
	stored.Status, stored.Output, stored.Error, stored.AttentionStep, stored.AttentionKind = res.Status, res.Output, res.Error, res.AttentionStep, res.AttentionKind
	stored.WakeAt = res.WakeAt
	return st.childOutcome(stored, cdef, info.StepKey, err)
}

// claimChild takes an existing child run to execute it, waiting out a lease
// another process holds. done reports a finished child (or one that waits
// for a person), whose outcome is in the returned record.
func (st *runState) claimChild(ctx context.Context, r journal.RunRecord, info StepInfo) (journal.RunRecord, []journal.StepRecord, bool, error) {
	e := st.e
	if r.Status == StatusFailed {
		if prev, ok := st.journal[info.StepKey]; ok && prev.Status == journal.StepFailed {
			// The parent's step was reopened (an operator retried the
			// parent): retry the child's failure too.
			if err := e.journal.Retry(ctx, r.RunID); err != nil && !errors.Is(err, ErrNotFailed) {
				return r, nil, true, fmt.Errorf("retry child run %s: %w", r.RunID, err)
			}
		} else {
			// The child failed and the parent died before journaling it:
			// that failure is the step's outcome.
			return r, nil, true, nil
		}
	}
	for wait := 10 * time.Millisecond; ; wait = min(2*wait, time.Second) {
		if r.Status.Finished() || r.Status == StatusNeedsAttention {
			return r, nil, true, nil
		}
		// A child held by a process that ended (the parent's previous
		// entry) is taken over at once, in the claim.
		sent := time.Now()
		claimed, steps, err := e.journal.Claim(ctx, journal.ClaimRequest{RunID: r.RunID, Owner: e.owner, Lease: e.lease, TakeOverDead: true})
		if err == nil {
			claimed.LeaseUntil = heldUntil(sent, e.lease)
			return claimed, steps, false, nil
		}
		if !errors.Is(err, ErrRunBusy) {
			return r, nil, true, fmt.Errorf("claim child run %s: %w", r.RunID, err)
		}
		r = claimed
		if r.Status.Finished() || r.Status == StatusNeedsAttention {
			return r, nil, true, nil
		}
		// Another process holds the child (its lease has not expired yet):
		// wait for it, as a step waits for its retry.
		if err := sleep(ctx, wait); err != nil {
			return r, nil, true, err
		}
	}
}

// childOutcome turns a child run that did not hand its body's error back
// (err, from the journal or the engine) into the step's outcome or the
// parent's stop.
func (st *runState) childOutcome(r journal.RunRecord, cdef *WorkflowDef, key string, err error) (json.RawMessage, error) {
	switch r.Status {
	case StatusSucceeded:
		return r.Output, nil
	case StatusFailed:
		codec := &WorkflowDef{Errors: append(append([]ErrorDef{}, st.def.Errors...), cdef.Errors...)}
		return r.Output, decodeStepError(codec, r.Error, r.ErrorDetail)
	case StatusCancelled:
		// Its outcome for good: the step is not retried.
		st.childStopped(context.Background())
		return nil, Permanent(&RunError{RunID: r.RunID, Status: StatusCancelled, Msg: "child run cancelled: " + r.Error})
	case StatusWaiting:
		// The child waits: so does its parent, until the child's wake-up
		// time, or until a signal wakes the child (and with it the parent).
		return nil, st.suspend(journal.WaitChild, r.RunID, r.WakeAt)
	case StatusNeedsAttention:
		return nil, st.parkFor(AttentionKindChild, key, fmt.Sprintf(
			"child run %s needs attention (%s): %s; settle it there (resumectl runs show %s), and this run continues", r.RunID, r.AttentionKind, r.Error, r.RunID))
	}
	if err == nil {
		err = fmt.Errorf("child run %s is %s", r.RunID, r.Status)
	}
	return nil, st.stopf("run %s, step %s: child run %s stopped: %w", st.run.RunID, key, r.RunID, err)
}
