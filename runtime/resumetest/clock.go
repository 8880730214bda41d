package resumetest

import (
	"sync"
	"time"
)

// Clock is a fake clock that moves only when told: the harness's engines
// and journals tell time by it, so a Sleep or an Await's timeout of days
// passes in a test at once ([Harness.FastForward], or Advance and
// [Harness.Resume]).
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// NewClock returns a clock that reads start until moved.
func NewClock(start time.Time) *Clock { return &Clock{now: start} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock forward by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// advanceTo moves the clock to t, unless it is past t already.
func (c *Clock) advanceTo(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if t.After(c.now) {
		c.now = t
	}
}

// set moves the clock to t, backwards too: each case of CrashEverywhere
// starts at the same time.
func (c *Clock) set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = t
}
