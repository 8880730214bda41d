package resume

import "time"

// Clock is an engine's time source ([WithClock]): what the engine waits by
// (At: a sleep's timer, a scheduler's next look) and what it counts on
// from between two readings of the journal's clock. It does not decide
// anything durable by itself: every time that does (a [Sleep]'s wake-up,
// an [Await]'s timeout, which ticks of a schedule ([Engine.Schedule]) are
// due, a run's deadline ([WithRunTimeout]), a lease) is the journal's (journal.Clock: the PostgreSQL server's,
// the SQLite journal's). The engine reads the journal's clock at most
// every 30 seconds and counts on from the reading, so that a host whose
// clock is wrong by an hour sleeps, times out and schedules exactly as one
// whose clock is right, and says so in its log (see [WithClockSkewBound]).
// It counts on by this clock, checked against the host's real time: once
// the two have counted apart by more than a millisecond since the reading
// it reads the journal's clock again before deciding anything, so that a
// clock that is moved, stopped, stepped, or runs slow or fast, cuts no
// sleep short and starts no tick early by more than that.
//
// A test fast-forwards time by giving one fake clock to the engine and to
// the journal (resumetest.Clock does both: sqlitejournal.WithClock(c.Now)):
// the two clocks then agree, and the fake clock drives sleeps, timeouts
// and schedules. A fake clock given to the engine alone, over a journal
// with a clock of its own, moves nothing durable: the journal's clock
// decides, and the engine logs the disagreement. Over a journal that tells
// no clock (a decorator that neither implements journal.Clock nor unwraps
// to a journal that does) the engine's clock decides, as it did before
// journals told theirs.
type Clock interface {
	// Now returns the current time.
	Now() time.Time
	// At returns a channel that receives once Now has reached t. A wait
	// is for a time, not a duration, so that a clock moved on while the
	// engine computes its wait loses nothing.
	At(t time.Time) <-chan time.Time
}

// WithClock makes c the engine's clock, in place of the system clock, for
// waits and schedules alike (see [Clock] for how it relates to the
// journal's). A nil c is the system clock.
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
