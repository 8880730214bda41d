package resume

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/resumegen/resumegen/runtime/journal"
)

// A workflow waits durably: [Sleep], [SleepUntil] and [Await] journal
// what they wait for once, then the run gives up its worker and lease
// (status waiting) until the time passes or the event arrives, and any
// worker resumes it there.

// ErrTimeout is the error of an [Await] whose timeout passed before its
// event arrived. It is journaled as the await's outcome and replays as
// itself: errors.Is(err, ErrTimeout) holds on replay too.
var ErrTimeout = errors.New("resume: wait timed out")

// ErrRunWaiting matches (errors.Is) the *[RunError] of a run that is
// waiting: it suspended in a Sleep or an Await, or was enqueued to start
// later. A worker resumes it when its wait is over; [Engine.Wait] waits
// for its outcome.
var ErrRunWaiting = errors.New("run waiting")

// sleepStep names the journal rows of Sleep and SleepUntil: resume.Sleep,
// resume.Sleep#2, ... whichever of the two is called.
const sleepStep = "resume.Sleep"

// waitCallees are the callees the generator lists for the waits of a
// workflow's step list (see [StepDef]): they are journaled points of the
// runtime, not step functions.
var waitCallees = map[string]bool{
	"github.com/resumegen/resumegen/runtime/resume.Sleep":      true,
	"github.com/resumegen/resumegen/runtime/resume.SleepUntil": true,
	"github.com/resumegen/resumegen/runtime/resume.Await":      true,
}

// isWait reports whether s is a Sleep, SleepUntil or Await of the
// workflow rather than a step.
func (s *StepDef) isWait() bool { return waitCallees[s.Callee] }

// Sleep pauses the workflow for d, durably: inside a workflow run the
// wake-up time is journaled once (a resumed run does not restart the
// clock), the run gives up its worker and lease, and a worker resumes it
// once the time has passed. Outside a workflow (a direct call, or in a
// step's code) it is a plain sleep. It returns ctx.Err() if ctx ends
// first; in a run that suspends, it returns an error that ends the body's
// entry (return it: the run is resumed there).
func Sleep(ctx context.Context, d time.Duration) error {
	st := waitState(ctx)
	if st == nil {
		return sleepCtx(ctx, d)
	}
	return st.sleepUntil(ctx, func(now time.Time) time.Time { return now.Add(d) })
}

// SleepUntil is [Sleep] until t.
func SleepUntil(ctx context.Context, t time.Time) error {
	st := waitState(ctx)
	if st == nil {
		return sleepCtx(ctx, time.Until(t))
	}
	return st.sleepUntil(ctx, func(time.Time) time.Time { return t })
}

// sleepCtx sleeps for d unless ctx ends first.
func sleepCtx(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return sleep(ctx, d)
}

// waitState is the run whose body calls a wait in ctx, or nil outside a
// body: no run, or a step's code (a wait there is a plain one).
func waitState(ctx context.Context) *runState {
	if _, inStep := StepFromContext(ctx); inStep {
		return nil
	}
	return stateFrom(ctx)
}

// Await waits for the event name addressed to this run ([Engine.Signal],
// resumectl runs signal) for at most timeout (0: no timeout), and returns
// its payload, decoded into T. The run suspends while it waits. Each
// signal is delivered to one await; one sent before the await is kept for
// it, and a second one for the next await of that name. When the timeout
// passes first, Await returns [ErrTimeout], journaled: a resumed run
// replays it. Outside a workflow run no event can reach it: Await returns
// an error at once.
func Await[T any](ctx context.Context, name string, timeout time.Duration) (T, error) {
	var out T
	st := waitState(ctx)
	if st == nil {
		return out, fmt.Errorf("resume.Await(%q) outside a workflow run: no event can reach it; start the workflow with an Engine", name)
	}
	err := st.await(ctx, name, timeout, func(raw json.RawMessage) error { return decodeResult(raw, &out) })
	return out, err
}

// suspension stops a run's entry because it waits; the run is stored
// waiting (see runEntry).
type suspension struct {
	runID string
	kind  string // journal.WaitSleep, WaitSignal, WaitChild
	name  string
	until time.Time // zero: for ever
}

func (s *suspension) Error() string {
	return fmt.Sprintf("run %s waits (%s): the run is suspended and resumes when the wait is over", s.runID, s.describe())
}

// describe says what the run waits for, for people.
func (s *suspension) describe() string {
	return describeWait(s.kind, s.name, s.until)
}

func describeWait(kind, name string, until time.Time) string {
	var what string
	switch kind {
	case journal.WaitSleep:
		what = "sleep"
	case journal.WaitSignal:
		what = "event " + name
	case journal.WaitStart:
		what = "start"
	case journal.WaitChild:
		what = "child run " + name
	case journal.WaitChildren:
		what = "its fanned-out child runs (resume.Map)"
	default:
		what = kind
	}
	if until.IsZero() {
		return what
	}
	return what + " until " + until.UTC().Format(time.RFC3339Nano)
}

// journalTime is t as the journals store times: UTC, to the microsecond.
// A wait's time is journaled so before the run suspends with it, so that
// the time the journal compares and the one the body replays are one.
func journalTime(t time.Time) time.Time { return t.UTC().Truncate(time.Microsecond) }

// suspend stops the run: it waits for kind/name until until.
func (st *runState) suspend(kind, name string, until time.Time) error {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.stop == nil {
		st.stop = &suspension{runID: st.run.RunID, kind: kind, name: name, until: until}
	}
	return st.stop
}

// due reports whether time t has come by the journal's clock: the
// earliest it may read now (now), or its word when it claimed the run
// waiting until a time no earlier than t (journal.RunRecord.WakeAt).
func (st *runState) due(t, now time.Time) bool {
	return !t.After(now) || !st.run.WakeAt.IsZero() && !t.After(st.run.WakeAt)
}

// waitPoint starts a wait of the body: the run must be able to go on, and
// key names this wait's journal row.
func (st *runState) waitPoint(ctx context.Context, name string) (string, error) {
	if st.e.dying.Load() {
		return "", errDying
	}
	st.checkDeadline(ctx)
	if err := st.stopped(); err != nil {
		return "", err
	}
	select {
	case <-st.drain:
		return "", st.stopf("run %s: %w", st.run.RunID, errDraining)
	default:
	}
	return st.nextKey(name, stepKey{})
}

// sleepUntil is Sleep and SleepUntil in a run: the wake-up time, journaled
// once (wake computes it from the journal's clock, the latest it may read
// now), then the run goes on if it is due and suspends otherwise.
func (st *runState) sleepUntil(ctx context.Context, wake func(time.Time) time.Time) error {
	if err := st.waitInFan(ctx, sleepStep); err != nil {
		return err
	}
	key, err := st.waitPoint(ctx, sleepStep)
	if err != nil {
		return err
	}
	var at time.Time
	prev, seen := st.journal[key]
	switch {
	case seen && prev.Status == journal.StepSucceeded:
		if err := json.Unmarshal(prev.Result, &at); err != nil {
			return st.corrupt(key, fmt.Errorf("a sleep's wake-up time %s does not decode: %v", preview(prev.Result), err))
		}
	case seen && prev.Status == journal.StepFailed && prev.Final:
		// The run stopped here (see refuse): it replays as it did.
		return st.replayFailure(key, prev, nil)
	case seen:
		return st.corrupt(key, fmt.Errorf("a sleep's row is %s, not succeeded", prev.Status))
	default:
		if err := ctx.Err(); err != nil {
			return err
		}
		if reason, _ := st.halting(); reason != "" {
			return st.refuse(ctx, sleepStep, key, journal.StepRecord{})
		}
		_, now, err := st.e.journalNow(ctx)
		if err != nil {
			return st.stopf("run %s, sleep %s: %w", st.run.RunID, key, err)
		}
		at = journalTime(wake(now))
		b, _ := json.Marshal(at)
		rec := journal.StepRecord{RunID: st.run.RunID, StepKey: key, Name: sleepStep, Status: journal.StepSucceeded,
			Result: b, Attempt: 1, Seq: st.nextSeq(), StartedAt: now, FinishedAt: now}
		if err := st.holdLease(ctx, key); err != nil {
			return err
		}
		if err := st.write(ctx, rec); err != nil {
			return err
		}
		st.e.fault(key, sleepStep, FaultAfter)
	}
	now, _, err := st.e.journalNow(ctx)
	if err != nil {
		return st.stopf("run %s, sleep %s: %w", st.run.RunID, key, err)
	}
	if st.due(at, now) {
		st.delivered(key, false)
		return nil
	}
	if reason, _ := st.halting(); reason != "" {
		// A run that must stop does not wait: the sleep ends with the stop,
		// journaled in place of its wake-up time.
		return st.refuse(ctx, sleepStep, key, journal.StepRecord{Attempt: 1})
	}
	st.delivered(key, false)
	if err := ctx.Err(); err != nil {
		return err // shutting down: the run is left to a resume
	}
	return st.suspend(journal.WaitSleep, "", at)
}

// await is Await in a run. Its row, keyed by the event's name, is waiting
// (its result the deadline) until a signal settles it (succeeded, the
// payload its result) or the deadline passes (a final failed row,
// ErrTimeout), each consuming the signal, if any, in the commit of its
// row. decode hands the payload to the caller.
func (st *runState) await(ctx context.Context, name string, timeout time.Duration, decode func(json.RawMessage) error) error {
	if err := journal.CheckEventName(name); err != nil {
		st.delivered("", false)
		return Permanent(fmt.Errorf("run %s: resume.Await: %w", st.run.RunID, err))
	}
	if err := st.waitInFan(ctx, "resume.Await("+name+")"); err != nil {
		return err
	}
	key, err := st.waitPoint(ctx, name)
	if err != nil {
		return err
	}
	prev, seen := st.journal[key]
	var deadline time.Time
	switch {
	case seen && prev.Status == journal.StepSucceeded:
		if err := decode(prev.Result); err != nil {
			return st.corrupt(key, err)
		}
		return st.replayed(key, nil)
	case seen && prev.Status == journal.StepFailed && prev.Final:
		return st.replayFailure(key, prev, nil)
	case seen && prev.Status == journal.StepWaiting:
		if err := json.Unmarshal(prev.Result, &deadline); err != nil && string(prev.Result) != "null" {
			return st.corrupt(key, fmt.Errorf("an await's deadline %s does not decode: %v", preview(prev.Result), err))
		}
	case seen && prev.Status == journal.StepFailed:
		// A retry reopened the timeout: wait again, from now.
		seen = false
	case seen:
		return st.corrupt(key, fmt.Errorf("an await's row is %s", prev.Status))
	}
	if reason, _ := st.halting(); reason != "" {
		// A run that must stop takes no event and does not wait.
		return st.refuse(ctx, name, key, journal.StepRecord{})
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := st.holdLease(ctx, key); err != nil {
		return err
	}
	// The deadline counts from the latest the journal's clock may read;
	// it has passed once the earliest it may read has.
	lo, now, err := st.e.journalNow(ctx)
	if err != nil {
		return st.stopf("run %s, await %s: %w", st.run.RunID, key, err)
	}
	if !seen && timeout > 0 {
		deadline = journalTime(now.Add(timeout))
	}
	rec := journal.StepRecord{RunID: st.run.RunID, StepKey: key, Name: name, Attempt: 1, Seq: st.nextSeq(), StartedAt: now, FinishedAt: now}
	if seen {
		rec.StartedAt = prev.StartedAt
	}
	sig, ok, err := st.e.journal.KeptSignal(ctx, st.run.RunID, name)
	if errors.Is(err, ErrTampered) {
		// A payload forged on a sealed journal: never delivered.
		return st.corrupt(key, err)
	}
	if err != nil {
		return st.stopf("run %s, await %s: %w", st.run.RunID, key, err)
	}
	switch {
	case ok:
		rec.Status, rec.Result = journal.StepSucceeded, sig.Payload
		if err := decode(sig.Payload); err != nil {
			return st.corrupt(key, fmt.Errorf("signal %d: %w", sig.Seq, err))
		}
		if err := st.takeSignal(ctx, sig.Seq, rec); err != nil {
			return err
		}
		st.delivered(key, false)
		return nil
	case !deadline.IsZero() && st.due(deadline, lo):
		rec.Status, rec.Final, rec.Error, rec.ErrorDetail = journal.StepFailed, true, ErrTimeout.Error(), encodeStepError(st.def, ErrTimeout)
		rec.History = []journal.AttemptRecord{{Attempt: 1, StartedAt: rec.StartedAt, FinishedAt: now, Error: rec.Error, Permanent: true}}
		if err := st.takeSignal(ctx, 0, rec); err != nil {
			return err
		}
		return st.replayed(key, ErrTimeout)
	case !seen:
		rec.Status, rec.Result = journal.StepWaiting, nullResult
		if !deadline.IsZero() {
			rec.Result, _ = json.Marshal(deadline)
		}
		if err := st.takeSignal(ctx, 0, rec); err != nil {
			return err
		}
	}
	return st.suspend(journal.WaitSignal, name, deadline)
}

// takeSignal journals await row rec, consuming signal seq (0: none).
func (st *runState) takeSignal(ctx context.Context, seq int64, rec journal.StepRecord) error {
	err := st.e.retryWrite(ctx, st.run.RunID, rec.StepKey+" "+string(rec.Status), st.leaseDeadline, func(wctx context.Context) error {
		return st.e.journal.TakeSignal(wctx, st.lease, seq, rec)
	})
	if err != nil {
		return st.stopf("run %s, await %s: journal %s: %w", st.run.RunID, rec.StepKey, rec.Status, err)
	}
	st.e.fault(rec.StepKey, rec.Name, FaultAfter)
	return nil
}

// idleWait is how long an idle worker waits before it looks for runs
// again: poll, or less when a waiting run is due sooner, by the journal's
// clock (journal.Journal.NextWake), so that a sleep ends on time without
// the worker polling faster. A due time already passed waits a few
// milliseconds all the same: the claim that missed it raced another.
func (e *Engine) idleWait(ctx context.Context, workflows []string, poll time.Duration) time.Duration {
	d, ok, err := e.journal.NextWake(ctx, workflows)
	if err != nil || !ok {
		return poll
	}
	return min(poll, max(d, 10*time.Millisecond))
}
