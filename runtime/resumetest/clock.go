package resumetest

import (
	"sync"
	"time"
)

// Clock is a fake clock that moves only when told: the harness's engines
// and journals tell time by it, so a Sleep or an Await's timeout of days
// passes in a test at once ([Harness.FastForward], or Advance and
// [Harness.Resume]), and a schedule ([resume.Engine.Schedule]) ticks as
// soon as Advance passes its tick. It is a [resume.Clock]: give it to an
// engine of your own with resume.WithClock.
type Clock struct {
	mu      sync.Mutex
	now     time.Time
	waiters []clockWaiter
}

// clockWaiter is a wait of At: ch receives once the clock reaches at.
type clockWaiter struct {
	at time.Time
	ch chan time.Time
}

// NewClock returns a clock that reads start until moved.
func NewClock(start time.Time) *Clock { return &Clock{now: start} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// At returns a channel that receives the clock's time once the clock
// reaches t (at once if it has).
func (c *Clock) At(t time.Time) <-chan time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	ch := make(chan time.Time, 1)
	if !t.After(c.now) {
		ch <- c.now
		return ch
	}
	c.waiters = append(c.waiters, clockWaiter{at: t, ch: ch})
	return ch
}

// Advance moves the clock forward by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.moveLocked(c.now.Add(d))
}

// advanceTo moves the clock to t, unless it is past t already.
func (c *Clock) advanceTo(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if t.After(c.now) {
		c.moveLocked(t)
	}
}

// Set moves the clock to t, backwards too (each case of CrashEverywhere
// starts at the same time), and ends the waits it reaches.
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.moveLocked(t)
}

// moveLocked sets the clock to t and ends the waits it reaches.
func (c *Clock) moveLocked(t time.Time) {
	c.now = t
	kept := c.waiters[:0]
	for _, w := range c.waiters {
		if t.Before(w.at) {
			kept = append(kept, w)
			continue
		}
		w.ch <- t
	}
	clear(c.waiters[len(kept):])
	c.waiters = kept
}
