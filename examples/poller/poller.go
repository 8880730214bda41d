package main

//go:generate go tool resumegen

import (
	"context"
	"time"

	"github.com/resumegen/resumegen/runtime/resume"
)

// Cursor is where a Watch run starts reading its feed, and how many runs
// of the chain came before it.
type Cursor struct {
	Offset int
	Run    int
}

// Watch reads a feed for ever: it fetches the entries after the cursor,
// every interval, a bounded number of times per run, then continues as a
// new run from where it got to, so that no run's journal holds more than
// PollsPerRun polls and a resume never replays the chain's history.
//
//resume:workflow
func Watch(ctx context.Context, c Cursor, interval time.Duration) (Cursor, error) {
	for i := 0; i < PollsPerRun; i++ {
		n, err := Fetch(ctx, c.Offset)
		if err != nil {
			return c, err
		}
		c.Offset += n
		if err := resume.Sleep(ctx, interval); err != nil {
			return c, err
		}
	}
	if c.Run+1 >= Runs {
		return c, nil
	}
	return Cursor{}, resume.ContinueAsNew(ctx, Cursor{Offset: c.Offset, Run: c.Run + 1}, interval)
}

// PollsPerRun bounds the polls of one run of Watch; Runs the runs of a
// chain (an example's: a real feed's watcher has no end).
const (
	PollsPerRun = 3
	Runs        = 4
)

// Fetch returns how many entries follow offset in the feed (this example's
// feed grows by two each time it is read).
//
//resume:step
func Fetch(ctx context.Context, offset int) (int, error) { return 2, nil }
