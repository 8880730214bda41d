package resume

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/resumegen/resumegen/runtime/journal"
)

// The engine takes every time that decides something durable (a sleep's
// wake-up, an await's timeout, which schedule ticks are due, a run's
// deadline) from the journal's clock (journal.Clock), never from its own
// alone. It reads the journal's clock at most every clockRefresh, and
// between two readings counts on from the last one. A reading brackets the
// journal's time between the engine's clock before and after the round
// trip, so each decision takes the safe end: a wake-up is computed from
// the latest the journal's clock may read (a sleep is never shorter than
// asked), and a time is due only once the earliest it may read has passed
// it (a tick never starts early).
//
// Counting on needs a rate, and the engine does not know which clock the
// journal's keeps pace with: the host's real time (a database server's
// clock), or the engine's clock (WithClock: a test's fake clock given to
// the engine and the journal alike, which must stay exact). By default the
// two are one (the system clock's monotonic reading, which a step of the
// wall clock does not move). The engine counts by its own clock, and reads
// the journal's clock again before deciding anything once its clock has
// counted more or less than real time since the reading by over
// clockDrift (a fake clock moved on or stopped, a custom clock stepped or
// running slow or fast): a decision is off by at most clockDrift, and
// only on an engine clock that is not the host's.

// DefaultClockSkewBound is how far an engine's clock may disagree with the
// journal's before the engine logs it (see [WithClockSkewBound]).
const DefaultClockSkewBound = time.Second

// clockRefresh is how long a reading of the journal's clock is counted on
// from before it is read again.
const clockRefresh = 30 * time.Second

// clockDrift is how far the engine's clock (WithClock) may part from the
// host's real time since a reading of the journal's clock before the
// reading is taken again (see journalNow).
const clockDrift = time.Millisecond

// clockReadAttempts is how many times a reading of the journal's clock
// is taken while the engine's clock moves during it (see
// readJournalClockLocked).
const clockReadAttempts = 3

// clockWarnEvery is how often a disagreement that persists is logged again.
const clockWarnEvery = 10 * time.Minute

// WithClockSkewBound sets how far the engine's clock may disagree with
// the journal's before the engine logs it, loudly (a warning with both
// times and the offset, once, then every 10 minutes while it lasts); the
// default is [DefaultClockSkewBound]. The disagreement is corrected
// whatever its size: durable times are the journal's. The bound only
// decides what is worth a person's attention (a host whose clock is not
// synchronized). Zero or less restores the default.
func WithClockSkewBound(d time.Duration) Option {
	return func(e *Engine) { e.clock.bound = d }
}

// journalClock is the engine's view of the journal's clock.
type journalClock struct {
	bound time.Duration // see WithClockSkewBound
	// real is the host's real time (time.Now, whose monotonic reading
	// counts), against which the engine's clock is checked; a test sets
	// its own.
	real func() time.Time

	mu sync.Mutex
	// src is the journal's clock; nil when the journal tells none (the
	// engine's clock decides).
	src      journal.Clock
	resolved bool // src was looked up
	// A reading: the journal's clock read, between the engine's clock
	// before and after the round trip, and between real time's sent and
	// taken, for the reading's age and the check of the engine's clock.
	read, before, after time.Time
	sent, taken         time.Time
	warned              time.Time // when the last skew warning was logged
	skewed              bool      // the last reading was beyond the bound
}

// clockSource returns the journal's clock, looking through decorators (a
// journal with an Unwrap method), or nil when the journal tells none.
func clockSource(j Journal) journal.Clock {
	for j != nil {
		if c, ok := j.(journal.Clock); ok {
			return c
		}
		u, ok := j.(interface{ Unwrap() Journal })
		if !ok {
			return nil
		}
		j = u.Unwrap()
	}
	return nil
}

// journalNow returns the journal's time now, bracketed: lo is the earliest
// its clock may read (what is due is due by lo), hi the latest (a wake-up
// is counted from hi). It reads the journal's clock when the last reading
// is older than clockRefresh, or when the engine's clock has parted from
// real time since by more than clockDrift; an error reading it is
// returned (nothing durable is decided on a guess). A journal that tells
// no clock has the engine's: lo and hi are both the engine's clock.
func (e *Engine) journalNow(ctx context.Context) (lo, hi time.Time, err error) {
	c := &e.clock
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.resolved {
		c.src, c.resolved = clockSource(e.journal), true
	}
	if c.src == nil {
		now := e.now()
		return now, now, nil
	}
	if c.staleLocked(e.now()) {
		if err := e.readJournalClockLocked(ctx); err != nil {
			return time.Time{}, time.Time{}, err
		}
	}
	lo, hi = c.estimateLocked(e.now())
	return lo, hi, nil
}

// staleLocked reports whether the last reading may not be counted on at
// the engine's time now: there is none, it is clockRefresh old, or the
// engine's clock has counted more or less than real time since it by
// over clockDrift.
func (c *journalClock) staleLocked(now time.Time) bool {
	return c.taken.IsZero() || c.realNow().Sub(c.taken) >= clockRefresh || c.driftedLocked(now)
}

// clockNow is the journal's time for what is recorded, not decided (a
// run's or a step's timestamps): the last reading counted on, without a
// round trip once there is one that the engine's clock has not parted
// from (see staleLocked; its age does not matter here). Otherwise it
// reads the journal's clock (for at most clockReadTimeout); only a
// journal that tells no clock, or one that cannot be read now, leaves the
// engine's clock, or the reading there is.
func (e *Engine) clockNow() time.Time {
	c := &e.clock
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.resolved {
		c.src, c.resolved = clockSource(e.journal), true
	}
	if c.src != nil && (c.taken.IsZero() || c.driftedLocked(e.now())) {
		ctx, cancel := context.WithTimeout(context.Background(), clockReadTimeout)
		err := e.readJournalClockLocked(ctx)
		cancel()
		if err != nil {
			e.logger.Warn("reading the journal's clock failed; this record takes this process's time", "err", err)
		}
	}
	now := e.now()
	if c.taken.IsZero() {
		return now
	}
	lo, _ := c.estimateLocked(now)
	return lo
}

// journalEarliest is the earliest the journal's clock may read now, from
// the engine's last reading of it, without a round trip unless the
// engine's clock has parted from real time since (see staleLocked; its
// age does not matter here); ok is false when the journal tells a clock
// that was never read, or that cannot be read again now. A journal that
// tells no clock has the engine's.
func (e *Engine) journalEarliest(ctx context.Context) (now time.Time, ok bool) {
	c := &e.clock
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.resolved {
		c.src, c.resolved = clockSource(e.journal), true
	}
	if c.src == nil {
		return e.now(), true
	}
	if c.taken.IsZero() {
		return time.Time{}, false
	}
	if c.driftedLocked(e.now()) {
		if err := e.readJournalClockLocked(ctx); err != nil {
			return time.Time{}, false
		}
	}
	lo, _ := c.estimateLocked(e.now())
	return lo, true
}

// atJournal returns a channel that receives once the journal's clock may
// have reached t, by the engine's last reading of it (the earliest it may
// read, as journalEarliest), on the engine's clock (WithClock). Without a
// reading it waits for t on the engine's clock; the receiver checks again.
func (e *Engine) atJournal(t time.Time) <-chan time.Time {
	c := &e.clock
	c.mu.Lock()
	at := t
	if c.src != nil && !c.taken.IsZero() {
		// estimateLocked's lo reaches t when the engine's clock reads
		// t − read + the later of before and after.
		at = t.Add(latest(c.before, c.after).Sub(c.read))
	}
	c.mu.Unlock()
	return e.at(at)
}

// clockReadTimeout bounds a reading of the journal's clock for a record.
const clockReadTimeout = 2 * time.Second

// driftedLocked reports whether the engine's clock, at now, has counted
// more or less than real time since the last reading by over clockDrift.
func (c *journalClock) driftedLocked(now time.Time) bool {
	return (now.Sub(c.after) - c.realNow().Sub(c.taken)).Abs() > clockDrift
}

// estimateLocked is the journal's time at the engine's time now, from the
// last reading, counted on by the engine's clock. An engine clock that
// stepped back during the round trip (after earlier than before) only
// widens it.
func (c *journalClock) estimateLocked(now time.Time) (lo, hi time.Time) {
	return c.read.Add(now.Sub(latest(c.before, c.after))), c.read.Add(now.Sub(earliest(c.before, c.after)))
}

// realNow is the host's real time.
func (c *journalClock) realNow() time.Time {
	if c.real != nil {
		return c.real()
	}
	return time.Now()
}

// latest is the later of a and b (see earliest).
func latest(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// readJournalClockLocked reads the journal's clock and logs a disagreement
// with the engine's beyond the bound.
func (e *Engine) readJournalClockLocked(ctx context.Context) error {
	c := &e.clock
	for attempt := 1; ; attempt++ {
		sent, before := c.realNow(), e.now()
		read, err := c.src.Now(ctx)
		after, taken := e.now(), c.realNow()
		if err != nil {
			return fmt.Errorf("read the journal's clock: %w", err)
		}
		c.read, c.before, c.after, c.sent, c.taken = read, before, after, sent, taken
		// An engine clock moved during the round trip (stepped, or a
		// fake one advanced) leaves a bracket as wide as the move:
		// safe, but a sleep that long too long. Read again, and keep
		// the third reading whatever it is.
		if (after.Sub(before)-taken.Sub(sent)).Abs() <= clockDrift || attempt == clockReadAttempts {
			break
		}
	}
	bound := c.bound
	if bound <= 0 {
		bound = DefaultClockSkewBound
	}
	// The engine's time at the middle of the round trip, by its wall
	// reading (Round(0) drops the monotonic one), against the journal's.
	mid := c.before.Round(0).Add(c.after.Sub(c.before) / 2)
	offset := c.read.Sub(mid)
	if offset.Abs() <= bound {
		if c.skewed {
			e.logger.Info("this process's clock agrees with the journal's again", "owner", e.owner, "offset", offset.String(), "bound", bound.String())
		}
		c.skewed = false
		return nil
	}
	if !c.skewed || time.Since(c.warned) >= clockWarnEvery {
		e.logger.Warn("this process's clock disagrees with the journal's: durable times (sleeps, timeouts, schedule ticks, leases) follow the journal's clock; fix this host's time synchronization",
			"owner", e.owner, "engine_time", mid.UTC().Format(time.RFC3339Nano), "journal_time", c.read.UTC().Format(time.RFC3339Nano),
			"offset", offset.String(), "bound", bound.String())
		c.warned = time.Now()
	}
	c.skewed = true
	return nil
}
