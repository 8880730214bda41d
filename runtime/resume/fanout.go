package resume

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/resumegen/resumegen/runtime/journal"
)

// A fan-out: [Map] calls its function for each item, in the items' order,
// each call reaching child workflows and steps with key=. In a run, a
// child workflow called there does not execute in the parent: it becomes
// a run any worker claims (journal.FanOut.Detach), and the parent, once
// every item is dispatched, suspends (status waiting, no lease, no
// worker) until the last child is done; the worker that finishes it wakes
// the parent (journal.FanOut.WakeParent). On each entry of the parent the
// items whose calls are journaled replay; the others are dispatched again
// (their child runs exist: they are only looked at), so a crash loses
// nothing and executes nothing twice.

// fanRecheck is how long a parent waiting for its fanned-out children
// waits at most before it looks at them again by itself: a bound on a
// lost wake-up (a worker that died between finishing the last child and
// waking the parent), not the way it is normally woken.
const fanRecheck = 30 * time.Second

// errFanPending is the outcome of a journaled call in a fan-out item
// whose child run has not finished yet: nothing is journaled for it, and
// the item is dispatched again on the parent's next entry.
var errFanPending = errors.New("resume.Map: this item's child run has not finished yet: the run waits for it")

type fanKey struct{}

// fanState is one [Map] of one run: the item whose function executes now.
type fanState struct {
	st *runState
	// blocked is set once the current item met a child run that has not
	// finished: every later journaled call of that item returns
	// errFanPending without executing (its inputs may be zero values).
	blocked bool
}

// fanFrom is the fan-out of run st that ctx is in, or nil.
func fanFrom(ctx context.Context, st *runState) *fanState {
	f, _ := ctx.Value(fanKey{}).(*fanState)
	if f == nil || f.st != st {
		return nil
	}
	return f
}

// admit is a journaled call of step def inside a fan-out item: it may go
// on (nil), or must not execute.
func (f *fanState) admit(def *StepDef, key stepKey) error {
	if f.blocked {
		return errFanPending
	}
	if !key.set {
		return f.st.refuseInFan(fmt.Sprintf("step %s is called inside resume.Map without key= (%s): the items' calls are journaled by key, not by their order; end its line with //resume:step key=EXPR (the item's id)", def.Name, def.Pos))
	}
	if def.Child && def.Policy == PolicyOnce {
		return f.st.refuseInFan(fmt.Sprintf("child workflow %s is called once inside resume.Map (%s): a fanned-out child runs on its own; drop once", def.Name, def.Pos))
	}
	return nil
}

// refuseInFan fails the run: its code calls what a fan-out cannot
// journal. The run fails rather than the item, so that no body can take
// the refusal for an item's outcome.
func (st *runState) refuseInFan(msg string) error {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.stop == nil {
		st.stop = &RunError{RunID: st.run.RunID, Status: StatusFailed, Msg: msg}
	}
	return st.stop
}

// Map calls fn for each item of items and returns their results in the
// items' order, and, if any failed, the errors joined in the items' order
// (errors.Is and errors.As see each), each naming its item's index; the
// result of a failed item is the value fn returned with its error. Every
// item is called, whatever the others return: no item's failure cancels
// another.
//
// In a workflow body, fn is the fan-out's body for one item: it calls a
// child workflow (or several, or steps) with key= (`r, err := Score(ctx,
// it) //resume:step key=it.ID`), and each call is journaled under its key,
// so the results are gathered by key, never by arrival. A child workflow
// called there runs as a run of its own that any worker claims, in
// parallel across workers; the parent dispatches every item, then
// suspends without holding a worker until the last child is done, and
// resumes there (return the error Map returns, as after [Sleep]). A crash
// of the parent or of a worker resumes only the items without a journaled
// outcome. Steps called in fn execute in the parent, one item after
// another. A call without key=, a wait ([Sleep], [Await]) and a Map inside
// fn are refused (the run fails with a message saying so).
//
// Outside a workflow run (a direct call of the workflow function, or in a
// step's code) Map calls fn for all items concurrently, each in a
// goroutine, and returns when all have returned.
func Map[T, R any](ctx context.Context, items []T, fn func(ctx context.Context, item T) (R, error)) ([]R, error) {
	out := make([]R, len(items))
	errs := make([]error, len(items))
	st := waitState(ctx)
	if st == nil {
		var wg sync.WaitGroup
		for i, it := range items {
			wg.Go(func() { out[i], errs[i] = fn(ctx, it) })
		}
		wg.Wait()
		return out, joinItemErrors(errs)
	}
	if f, _ := ctx.Value(fanKey{}).(*fanState); f != nil && f.st == st {
		return nil, st.refuseInFan("resume.Map inside resume.Map: fan out once, over all the items")
	}
	if _, ok := journal.Find[journal.FanOut](st.e.journal); !ok {
		// A journal without detached children: each item's children
		// execute in the parent, one item after another.
		for i, it := range items {
			out[i], errs[i] = fn(ctx, it)
			if err := st.stopped(); err != nil {
				return nil, err
			}
		}
		return out, joinItemErrors(errs)
	}
	fan := &fanState{st: st}
	fctx := context.WithValue(ctx, fanKey{}, fan)
	pending := 0
	for i, it := range items {
		fan.blocked = false
		r, err := fn(fctx, it)
		if stop := st.stopped(); stop != nil {
			return nil, stop
		}
		if fan.blocked {
			pending++
			continue
		}
		if errors.Is(err, errFanPending) {
			// fn returned another item's pending outcome: a call of this
			// run's fan-out from outside its item cannot be told apart.
			return nil, st.refuseInFan(fmt.Sprintf("resume.Map: item %d returned the pending outcome of a call it did not make", i))
		}
		out[i], errs[i] = r, err
	}
	if pending > 0 {
		_, now, err := st.e.journalNow(ctx)
		if err != nil {
			return nil, st.stopf("run %s: resume.Map: %w", st.run.RunID, err)
		}
		st.delivered("", false)
		return nil, st.suspend(journal.WaitChildren, "", journalTime(now.Add(fanRecheck)))
	}
	return out, joinItemErrors(errs)
}

// itemError is the error of one item of a [Map].
type itemError struct {
	index int
	err   error
}

func (e *itemError) Error() string { return fmt.Sprintf("item %d: %v", e.index, e.err) }
func (e *itemError) Unwrap() error { return e.err }

// joinItemErrors joins the items' errors in the items' order.
func joinItemErrors(errs []error) error {
	var all []error
	for i, err := range errs {
		if err != nil {
			all = append(all, &itemError{index: i, err: err})
		}
	}
	return errors.Join(all...)
}

// dispatchChild is runChild inside a fan-out: the child run is created
// (or found) claimable by any worker, and its outcome, once it has one, is
// the step's; until then the item is pending.
func (st *runState) dispatchChild(ctx context.Context, fan *fanState, fo journal.FanOut, cdef *WorkflowDef, info StepInfo, childID string, input []byte) (json.RawMessage, error) {
	e := st.e
	_, now, err := e.journalNow(ctx)
	if err != nil {
		return nil, st.stopf("run %s, step %s: %w", st.run.RunID, info.StepKey, err)
	}
	rec := journal.RunRecord{
		RunID: childID, Workflow: cdef.QualifiedName(), Version: cdef.Version, Parent: st.run.RunID,
		Status: StatusPending, Input: json.RawMessage(input), CreatedAt: now, UpdatedAt: now,
		// Created waiting to start, so that no worker takes it before it
		// is detached; Detach makes it pending.
		WaitKind: journal.WaitStart, WakeAt: journalTime(now),
	}
	if cdef.Timeout > 0 {
		rec.Deadline = now.Add(cdef.Timeout)
	}
	if cdef.Queue != "" {
		// Claimed through its queue, counted under its parent's key: a
		// tenant's fan-out is that tenant's share of the queue.
		rec.Queue, rec.QueueKey, rec.Priority = cdef.Queue, st.run.QueueKey, st.run.Priority
	}
	// A child dispatched on an earlier entry is read, not written again:
	// on a journal of one writer, the parent's entry after its children
	// finished would otherwise queue a write per item.
	stored, _, err := e.journal.LoadRun(ctx, childID)
	created := false
	if errors.Is(err, ErrRunNotFound) {
		stored, created, err = e.journal.CreateRun(ctx, rec)
	}
	if err != nil {
		return nil, st.stopf("run %s, step %s: create child run %s: %w", st.run.RunID, info.StepKey, childID, err)
	}
	if !created && (!cdef.named(stored.Workflow) || !bytesEqualJSON(stored.Input, input)) {
		return nil, Permanent(fmt.Errorf("run %s, step %s: child run %s: %w: it is %s with other input", st.run.RunID, info.StepKey, childID, ErrRunConflict, stored.Workflow))
	}
	if stored.Status == StatusFailed {
		if prev, ok := st.journal[info.StepKey]; ok && prev.Status == journal.StepFailed {
			// The parent's step was reopened (an operator retried the
			// parent): retry the child's failure too.
			if err := e.journal.Retry(ctx, childID); err != nil && !errors.Is(err, ErrNotFailed) {
				return nil, st.stopf("run %s, step %s: retry child run %s: %w", st.run.RunID, info.StepKey, childID, err)
			}
			stored.Status = StatusPending
		}
	}
	if stored.Status.Finished() || stored.Status == StatusNeedsAttention {
		return st.childOutcome(stored, cdef, info.StepKey, nil)
	}
	if created || stored.Status == StatusWaiting && stored.WaitKind == journal.WaitStart {
		if err := fo.Detach(ctx, childID); err != nil {
			return nil, st.stopf("run %s, step %s: %w", st.run.RunID, info.StepKey, err)
		}
	}
	fan.blocked = true
	return nil, errFanPending
}

func bytesEqualJSON(a, b []byte) bool { return string(compactJSON(a)) == string(compactJSON(b)) }

// wakeParent wakes parent, the parent of a run this engine claimed by
// itself (a fanned-out child) whose entry just ended with status, if it
// waits for its children (journal.FanOut) and that run was the last. A
// child executed inside its parent never comes here: its parent runs. A
// failure is logged: the parent's own recheck time bounds the delay.
func (e *Engine) wakeParent(ctx context.Context, parent string, status Status) {
	if parent == "" {
		return
	}
	switch status {
	case StatusPending, StatusRunning, StatusWaiting, "":
		return
	}
	fo, ok := journal.Find[journal.FanOut](e.journal)
	if !ok {
		return
	}
	if err := fo.WakeParent(context.WithoutCancel(ctx), parent); err != nil {
		e.logger.Warn("waking the parent of a finished child run failed; it looks again by itself", "parent", parent, "err", err)
	}
}

// parentDef is the workflow of the parent of run, a child run a worker
// claimed by itself (a fanned-out one), whose error identities the run's
// journaled error keeps too; nil for a run of its own, or a parent this
// program does not know.
func (e *Engine) parentDef(ctx context.Context, run journal.RunRecord) *WorkflowDef {
	if run.Parent == "" {
		return nil
	}
	p, _, err := e.journal.LoadRun(ctx, run.Parent)
	if err != nil {
		return nil
	}
	if d, ok := lookupVersion(p.Workflow, p.Version); ok {
		return d
	}
	d, _ := Lookup(p.Workflow)
	return d
}

// waitInFan refuses a wait inside a fan-out item: its journal key counts
// occurrences, which items dispatched again on another entry would shift.
func (st *runState) waitInFan(ctx context.Context, what string) error {
	if fanFrom(ctx, st) == nil {
		return nil
	}
	return st.refuseInFan(what + " inside resume.Map: an item cannot wait; wait in a child workflow the item calls, or before or after the Map")
}

// detachedOf returns which of runs are fanned-out child runs (any worker
// takes them over), by id.
func (e *Engine) detachedOf(ctx context.Context, runs []journal.RunRecord) (map[string]bool, error) {
	fo, ok := journal.Find[journal.FanOut](e.journal)
	if !ok {
		return nil, nil
	}
	var ids []string
	for _, r := range runs {
		if r.Parent != "" {
			ids = append(ids, r.RunID)
		}
	}
	if len(ids) == 0 {
		return nil, nil
	}
	return fo.Detached(ctx, ids)
}
