package resume

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"
)

// permanentError marks an error that retrying cannot fix.
type permanentError struct{ err error }

func (p *permanentError) Error() string { return p.err.Error() }
func (p *permanentError) Unwrap() error { return p.err }

// Permanent marks err as permanent: a step that returns it is not retried,
// whatever its retry budget. errors.Is and errors.As see through the mark.
// Permanent(nil) is nil.
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return &permanentError{err: err}
}

// IsPermanent reports whether err, or an error it wraps, was marked with
// [Permanent].
func IsPermanent(err error) bool {
	var p *permanentError
	return errors.As(err, &p)
}

// backoff returns the delay before the retry that follows failed attempt n
// (1-based) of the current budget: exponential from min, capped at max, with
// full jitter (a uniform draw from zero to that bound).
func backoff(def *StepDef, n int) time.Duration {
	lo, hi := def.BackoffMin, def.BackoffMax
	if lo <= 0 {
		lo = DefaultBackoffMin
	}
	if hi <= 0 {
		hi = max(DefaultBackoffMax, lo)
	}
	bound := lo
	for i := 1; i < n && bound < hi; i++ {
		bound *= 2
	}
	bound = min(bound, hi)
	return time.Duration(rand.Int64N(int64(bound) + 1))
}

// sleep waits for d or until ctx is done, whichever is first.
func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
