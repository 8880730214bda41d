package resume

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime/debug"
	"time"

	"github.com/resumegen/resumegen/runtime/journal"
)

// What a run's faults come to (issue 10):
//
//   - A panic in a step's code is that attempt's failure, a *[PanicError]
//     carrying the panic value and stack: a default or tx step (its
//     transaction rolled back) journals it and retries per its policy; a
//     once step, whose effect may have happened, parks the run in
//     needs_attention with the stack, its row left in_flight for a person
//     to resolve. A panic in the workflow body fails the run with the
//     stack. No panic of a run ends the process, in Start, Resume, Work or
//     a child run.
//   - A process that dies (killed, out of memory, os.Exit, a crash in cgo)
//     cannot record anything. A run whose claims keep ending that way goes
//     to failed with the reason "crash loop" (see [WithCrashLoopLimit]),
//     so that it cannot take down every worker that claims it.
//   - A journal write that records what already happened (a step's
//     outcome, a once step's in_flight row, the run's end) is retried with
//     backoff while the run's lease holds, so a database restart of a few
//     seconds neither parks a run nor repeats a step.

// PanicError is a panic raised by a step's code or a workflow body,
// recovered by the engine: the panic value and the stack of the goroutine
// that panicked. Its text, stack included, is what the journal records.
type PanicError struct {
	Value any
	Stack string
}

// maxPanicStack bounds the stack a PanicError keeps (and the journal
// stores): the frames nearest the panic come first.
const maxPanicStack = 16 << 10

// Error returns "panic: VALUE" and the stack.
func (p *PanicError) Error() string {
	return fmt.Sprintf("panic: %v\n\n%s", p.Value, p.Stack)
}

// Unwrap returns the panic value when it is an error.
func (p *PanicError) Unwrap() error {
	err, _ := p.Value.(error)
	return err
}

// WithCrashLoopLimit sets how many claims of a run in a row may end without
// progress before the next claim fails the run with the reason "crash
// loop" instead of executing it (default 5; 0 or less: never). A claim
// makes progress when a step row is journaled during it (a success, a
// failed attempt, a once step's in_flight row) or when the engine ends the
// entry itself (the run finished, parked, or was released). A claim that
// makes none ended because its process died (killed, out of memory,
// os.Exit, a crash in cgo) or lost the lease before writing anything. The
// other runs of a dying worker count such claims too, when they journal
// nothing before it dies.
func WithCrashLoopLimit(n int) Option {
	return func(e *Engine) { e.crashLoopLimit = n }
}

// DefaultCrashLoopLimit is the crash loop limit of an engine without
// [WithCrashLoopLimit].
const DefaultCrashLoopLimit = 5

// WithCrashPanics makes the engine let panics whose value isCrash accepts
// unwind unrecovered, as in-process stand-ins for the process's death (see
// [WithFaultAction]): a test that panics to simulate SIGKILL must not have
// the engine record the panic as a step's failure. Every other panic of a
// run is recovered. A panic raised by the fault action itself always
// unwinds.
func WithCrashPanics(isCrash func(v any) bool) Option {
	return func(e *Engine) { e.isCrash = isCrash }
}

// recovered turns a recovered panic value v into a *PanicError, or, for a
// panic that stands for the process's death, panics again with v.
func (e *Engine) recovered(v any) *PanicError {
	if e.dying.Load() || (e.isCrash != nil && e.isCrash(v)) {
		e.dying.Store(true) // the process is dead: nothing of it recovers
		panic(v)
	}
	stack := trimStack(debug.Stack())
	if len(stack) > maxPanicStack {
		stack = append(stack[:maxPanicStack:maxPanicStack], "\n... (stack cut)"...)
	}
	return &PanicError{Value: v, Stack: string(stack)}
}

// trimStack drops the frames of the recovery from a stack taken in a
// deferred function, up to and including the call to panic: the stack then
// starts where the panic was raised.
func trimStack(stack []byte) []byte {
	lines := bytes.SplitAfter(stack, []byte("\n"))
	for i := 1; i+1 < len(lines); i++ {
		if bytes.HasPrefix(lines[i], []byte("panic(")) {
			return bytes.Join(append(lines[:1:1], lines[i+2:]...), nil)
		}
	}
	return stack
}

// callBody runs a step's body, turning a panic into a *PanicError, which
// it returns as panicked and as the error (a *PanicError the body returned,
// from a child run, is only its error).
func (st *runState) callBody(ctx context.Context, body func(context.Context) (json.RawMessage, error)) (raw json.RawMessage, panicked *PanicError, err error) {
	defer func() {
		if v := recover(); v != nil {
			panicked = st.e.recovered(v)
			raw, err = nil, panicked
		}
	}()
	raw, err = body(ctx)
	return raw, nil, err
}

// runBody runs a workflow body. A panic of the body itself is returned as
// panicked (and as err); resume.Unwind's, by a step that returns no error,
// is that step's outcome, returned as err like any step error the body
// returns: a step's *PanicError the body returns is the step's failure,
// not the body's panic.
func (e *Engine) runBody(ctx context.Context, def *WorkflowDef, input Args) (out any, err error, panicked *PanicError) {
	defer func() {
		if v := recover(); v != nil {
			if u, ok := v.(*unwinding); ok {
				out, err, panicked = nil, u.err, nil
				return
			}
			panicked = e.recovered(v)
			out, err = nil, panicked
		}
	}()
	out, err = def.Run(ctx, input)
	return out, err, nil
}

// Journal writes after an effect are retried between these delays
// (exponential, full jitter).
const (
	writeRetryMin = 20 * time.Millisecond
	writeRetryMax = time.Second
)

// retryWrite calls write until it succeeds, the lease is lost
// ([ErrLeaseLost]: another process owns the run, and retrying cannot
// help), write returns an error marked [Permanent], or the lease as last
// renewed (until) expires; the first call is
// always made. Each call gets its own timeout, at most the engine's write
// timeout. Between calls it waits with exponential backoff and full
// jitter. It is not cancelled with ctx: what it records already happened.
// It returns the last error.
func (e *Engine) retryWrite(ctx context.Context, runID, what string, until func() time.Time, write func(context.Context) error) error {
	ctx = context.WithoutCancel(ctx)
	bound := writeRetryMin
	for n := 1; ; n++ {
		timeout := e.writeTimeout
		if left := time.Until(until()); n > 1 && left < timeout {
			timeout = max(left, writeRetryMin)
		}
		wctx, cancel := context.WithTimeout(ctx, timeout)
		err := write(wctx)
		cancel()
		if err == nil {
			if n > 1 {
				e.logger.Info("journal write succeeded after retries", "run", runID, "write", what, "attempts", n)
			}
			return nil
		}
		if errors.Is(err, ErrLeaseLost) || errors.Is(err, journal.ErrLimit) || IsPermanent(err) {
			return err
		}
		wait := time.Duration(rand.Int64N(int64(bound) + 1))
		if !time.Now().Add(wait).Before(until()) {
			return fmt.Errorf("%w (gave up after %d attempts: the lease expires)", err, n)
		}
		if n == 1 {
			e.logger.Warn("journal write failed; retrying while the lease holds", "run", runID, "write", what, "err", err)
		}
		time.Sleep(wait)
		bound = min(2*bound, writeRetryMax)
	}
}
