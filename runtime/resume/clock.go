package resume

import "time"

// Clock is an engine's time source ([WithClock]): what [Sleep] and
// [SleepUntil] compute wake-up times from and compare them with, what
// [Await]'s timeouts count from, and what schedules ([Engine.Schedule])
// tick by. The default is the system clock. A test fast-forwards all of
// them with one fake clock (resumetest.Clock is one), given also to the
// journal as its own clock (sqlitejournal.WithClock(c.Now)), which
// decides when a waiting run is due.
type Clock interface {
	// Now returns the current time.
	Now() time.Time
	// At returns a channel that receives once Now has reached t. A wait
	// is for a time, not a duration, so that a clock moved on while the
	// engine computes its wait loses nothing.
	At(t time.Time) <-chan time.Time
}

// WithClock makes c the engine's clock, in place of the system clock, for
// waits and schedules alike (see [Clock]). A nil c is the system clock.
func WithClock(c Clock) Option {
	return func(e *Engine) {
		if c == nil {
			e.now, e.at = time.Now, systemAt
			return
		}
		e.now, e.at = c.Now, c.At
	}
}

// systemAt is the system clock's At: a timer for the time left until t.
func systemAt(t time.Time) <-chan time.Time { return time.After(time.Until(t)) }
