package resume

import (
	"context"
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
