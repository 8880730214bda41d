package resume

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/resumegen/resumegen/runtime/journal"
)

// heldUntil is how long this process may count on a lease of length d
// whose claim or renewal was sent at sent: the journal counts the lease
// from its own clock once the claim holds the run, which is no earlier
// than sent, so sent+d is a lower bound of the stored expiry. It carries
// sent's monotonic reading: a wall clock step does not move it.
func heldUntil(sent time.Time, d time.Duration) time.Time { return sent.Add(d) }

// leaseMargin is the part of the lease a step must have left when it
// starts: a third, the renewal period. A step never starts on a lease that
// may expire before the next renewal could extend it.
func (e *Engine) leaseMargin() time.Duration { return e.lease / 3 }

// renewLease extends the run's lease by the engine's lease length and
// moves this process's bound of it.
func (st *runState) renewLease(ctx context.Context) error {
	sent := time.Now()
	if err := st.e.journal.RenewLease(ctx, st.lease, st.e.lease); err != nil {
		return err
	}
	st.leaseRenewed(sent)
	return nil
}

// holdLease makes sure an attempt of step key starts with at least the
// lease margin left. A lease closer to its end (the claim waited for the
// database's lock, renewals were slow) is renewed first; if the renewal
// fails, or is itself so slow that the margin is still not there, the run
// stops before the step: another process may own it by now (ErrLeaseLost
// when the journal says so).
func (st *runState) holdLease(ctx context.Context, key string) error {
	margin := st.e.leaseMargin()
	left := time.Until(st.leaseDeadline())
	if left >= margin {
		return nil
	}
	if err := st.renewLease(ctx); err != nil {
		return st.stopf("run %s, step %s: the lease had %v left, less than the %v a step starts with, and renewing it failed: %w",
			st.run.RunID, key, left.Round(time.Millisecond), margin, err)
	}
	if left = time.Until(st.leaseDeadline()); left < margin {
		return st.stopf("run %s, step %s: the lease renewal took so long that only %v of the lease is left, less than the %v a step starts with",
			st.run.RunID, key, left.Round(time.Millisecond), margin)
	}
	return nil
}

// livenessOf returns j's liveness signal, looking through decorators (a
// journal with an Unwrap method, such as the codec's): they store values,
// not owners.
func livenessOf(j Journal) (journal.Liveness, bool) {
	for j != nil {
		if l, ok := j.(journal.Liveness); ok {
			return l, true
		}
		u, ok := j.(interface{ Unwrap() Journal })
		if !ok {
			return nil, false
		}
		j = u.Unwrap()
	}
	return nil, false
}

// guardsLiveOwners reports whether j (looking through decorators) never
// lets a lapsed lease of a live owner be taken (journal.LiveOwnerGuard).
func guardsLiveOwners(j Journal) bool {
	for j != nil {
		if g, ok := j.(journal.LiveOwnerGuard); ok {
			return g.GuardsLiveOwners()
		}
		u, ok := j.(interface{ Unwrap() Journal })
		if !ok {
			return false
		}
		j = u.Unwrap()
	}
	return false
}

// ErrLeaseExpiring is the cause of the cancellation of a run's context
// (context.Cause) when the engine could not renew the run's lease and
// stops the run before the lease expires: after it, another process may
// take the run over and execute its step. errors.Is(err, ErrLeaseExpiring)
// holds for the run's stop error too.
var ErrLeaseExpiring = errors.New("resume: the run's lease could not be renewed and is about to expire")

// Overrun is what an overrun action ([WithOverrunAction]) is told: a
// step whose code still executed when the run's lease, which the engine
// could not renew, was about to expire, although its context was
// cancelled (with [ErrLeaseExpiring]) a quarter of the lease before.
type Overrun struct {
	RunID   string
	StepKey string
	// LeaseUntil is this process's bound of the lease's expiry (no later
	// than the journal's): from then on another process may execute the
	// step.
	LeaseUntil time.Time
	// Err is why the lease could not be renewed: the last renewal's error.
	Err error
}

// OverrunExitCode is the exit status of a process that [ExitOnOverrun]
// ends (70, EX_SOFTWARE of sysexits.h).
const OverrunExitCode = 70

// ExitOnOverrun is the default overrun action: it writes what happened to
// standard error and ends the process with [OverrunExitCode], before the
// lease expires, so that the step executes in no two processes at once.
// The run is resumed by the process that takes it over (a default step
// executes again, a once step parks: its outcome is unknown).
func ExitOnOverrun(o Overrun) {
	fmt.Fprintf(os.Stderr, "resume: run %s, step %s: the lease could not be renewed (%v) and expires at %s, and the step's code ignored the cancellation of its context: exiting so that no other process executes the step beside it\n",
		o.RunID, o.StepKey, o.Err, o.LeaseUntil.UTC().Format(time.RFC3339Nano))
	os.Exit(OverrunExitCode)
}

// WithOverrunAction sets what the engine does when a step's code still
// executes although the run's lease could not be renewed and is about to
// expire (a tenth of the lease before this process's bound of its
// expiry): it ignored the cancellation of its context, a quarter of the
// lease before. The default, [ExitOnOverrun], ends the process: the only
// way to stop a goroutine, and to keep the step from executing in two
// processes at once once another takes the run over. An action that
// returns leaves the step executing: the program then accepts that it may
// execute beside another process's. Journals that never let a live
// owner's lapsed lease be taken (journal.LiveOwnerGuard: SQLite) never
// call it.
func WithOverrunAction(action func(Overrun)) Option {
	return func(e *Engine) { e.overrun = action }
}

// keepLease renews the run's lease while its body executes, every third of
// the lease, and again soon after a renewal that failed. A lease lost to
// another process stops the run at once: later steps return ErrLeaseLost
// unexecuted, and the run's context is cancelled.
//
// Over a journal that may hand a lapsed lease to another process (any but
// a journal.LiveOwnerGuard), an owner that cannot renew stops itself
// before its lease can expire, by this process's bound of it (heldUntil:
// no later than the journal's expiry). No step starts on a lease with less
// than a third of it left that a renewal could not extend (holdLease). A
// step that executes when a quarter of the lease is left without a renewal
// stops the run (no new step, no new wait) and has its context cancelled
// with ErrLeaseExpiring; if it still executes when a tenth is left, the
// overrun action runs (see WithOverrunAction). Renewals go on meanwhile:
// one that succeeds under the run's epoch proves no other process took
// the run, and moves those deadlines.
func (e *Engine) keepLease(ctx context.Context, cancel context.CancelCauseFunc, st *runState) <-chan struct{} {
	done := make(chan struct{})
	stopsItself := !guardsLiveOwners(e.journal)
	period := e.lease / 3
	retry := max(e.lease/30, 10*time.Millisecond)
	go func() {
		defer close(done)
		// failing is when renewals began to fail, zero after a success;
		// failedAt the last failure, lastErr its error.
		var failing, failedAt time.Time
		var lastErr error
		stopped := false
		for {
			bound := st.leaseDeadline()
			soft, hard := bound.Add(-e.lease/4), bound.Add(-e.lease/10)
			renewAt := bound.Add(period - e.lease) // a third of the lease after the last renewal was sent
			if !failedAt.IsZero() {
				renewAt = failedAt.Add(retry)
			}
			next := renewAt
			if stopsItself {
				deadline := soft
				if stopped {
					deadline = hard
				}
				if deadline.Before(next) {
					next = deadline
				}
			}
			if !waitUntil(ctx, next) {
				return
			}
			if !st.leaseDeadline().Equal(bound) {
				continue // renewed meanwhile (before a step): plan again
			}
			now := time.Now()
			key, executing := st.executing()
			if stopsItself && executing && !now.Before(soft) {
				if !stopped {
					e.stopBeforeExpiry(cancel, st, bound, failing, lastErr)
					stopped = true
				}
				if !now.Before(hard) {
					o := Overrun{RunID: st.run.RunID, StepKey: key, LeaseUntil: bound, Err: lastErr}
					e.logger.Error("a step ignored the cancellation of its context, and the run's lease is about to expire: the overrun action runs",
						"run", o.RunID, "step", key, "lease_until", bound.UTC().Format(time.RFC3339Nano), "err", lastErr)
					e.overrunAction()(o)
					return
				}
			}
			if now.Before(renewAt) {
				continue
			}
			// A renewal never waits past the time to stop a step (one may
			// start meanwhile, on a lease its holdLease renewed); late
			// already (a claim whose answer came late, no step yet), it
			// gets a tenth of the lease at least.
			deadline := now.Add(e.writeTimeout)
			if stopsItself {
				deadline = soft
				if !now.Before(soft) {
					deadline = now.Add(e.lease / 10)
					if executing && hard.After(now) {
						deadline = hard
					}
				}
			}
			rctx, rcancel := context.WithDeadline(ctx, deadline)
			sent := time.Now()
			err := e.journal.RenewLease(rctx, st.lease, e.lease)
			rcancel()
			switch {
			case err == nil:
				st.leaseRenewed(sent)
				failing, failedAt, lastErr = time.Time{}, time.Time{}, nil
			case errors.Is(err, ErrLeaseLost):
				cancel(st.stopf("run %s: %w", st.run.RunID, err))
				return
			case ctx.Err() != nil:
				return
			default:
				if failing.IsZero() {
					failing = sent
					e.logger.Warn("lease renewal failed; retrying", "run", st.run.RunID, "lease_until", bound.UTC().Format(time.RFC3339Nano), "err", err)
				}
				failedAt, lastErr = time.Now(), err
			}
		}
	}()
	return done
}

// stopBeforeExpiry stops a run whose lease was not renewed in time (since
// failing, with the last error err, when renewals failed) and expires at
// bound: no new step starts, and the run's context is cancelled with
// ErrLeaseExpiring.
func (e *Engine) stopBeforeExpiry(cancel context.CancelCauseFunc, st *runState, bound, failing time.Time, err error) {
	why := "no renewal was answered in time"
	if !failing.IsZero() {
		why = fmt.Sprintf("renewing it failed for %v (last: %v)", time.Since(failing).Round(time.Millisecond), err)
	}
	stop := st.stopf("run %s: %w: %s; it expires at %s, after which another process may take the run over: stopped, its context cancelled",
		st.run.RunID, ErrLeaseExpiring, why, bound.UTC().Format(time.RFC3339Nano))
	e.logger.Error("run stopped before its lease expires: the lease could not be renewed", "run", st.run.RunID,
		"lease_until", bound.UTC().Format(time.RFC3339Nano), "err", err)
	cancel(stop)
}

// waitUntil waits for t (by the monotonic clock) and reports true, or
// false when ctx ends first.
func waitUntil(ctx context.Context, t time.Time) bool {
	timer := time.NewTimer(time.Until(t))
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-timer.C:
		return true
	}
}

// overrunAction is the engine's overrun action.
func (e *Engine) overrunAction() func(Overrun) {
	if e.overrun != nil {
		return e.overrun
	}
	return ExitOnOverrun
}
