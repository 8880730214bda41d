// TEMPORARY: declaration-only stub of issue 13's waiting API so that the
// generator's tests (helper WG, branch wg13) type-check before helper W's
// runtime lands. The integrator deletes this file when W's branch is merged.

package resume

import (
	"context"
	"errors"
	"time"
)

// Sleep pauses the workflow for d, durably; outside a workflow a plain
// context-aware sleep. (Stub: always the plain sleep.)
func Sleep(ctx context.Context, d time.Duration) error {
	return SleepUntil(ctx, time.Now().Add(d))
}

// SleepUntil pauses the workflow until t, durably; outside a workflow a
// plain context-aware sleep. (Stub: always the plain sleep.)
func SleepUntil(ctx context.Context, t time.Time) error {
	timer := time.NewTimer(time.Until(t))
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-timer.C:
		return nil
	}
}

// Await waits for the event name addressed to this run, for at most
// timeout. (Stub: not implemented.)
func Await[T any](ctx context.Context, name string, timeout time.Duration) (T, error) {
	var zero T
	return zero, errors.New("resume.Await: TODO: not implemented in the wg13 stub")
}

// ErrTimeout is the error of an Await whose timeout passed (errors.Is).
var ErrTimeout = errors.New("resume: wait timed out")

// Signal delivers the event name with payload to the run runID. (Stub: not
// implemented.)
func (e *Engine) Signal(ctx context.Context, runID, name string, payload any) error {
	return errors.New("resume: Signal: TODO: not implemented in the wg13 stub")
}

// Wait waits for the run runID to finish and returns its result. (Stub: not
// implemented.)
func (e *Engine) Wait(ctx context.Context, runID string) (Result, error) {
	return Result{}, errors.New("resume: Wait: TODO: not implemented in the wg13 stub")
}
