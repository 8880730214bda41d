package check_test

import (
	"testing"

	"github.com/resumegen/resumegen/generator/internal/check"
	"github.com/resumegen/resumegen/generator/internal/pipetest"
)

// TestUnboundedLoops warns about step loops with no bound and no exit
// (for {}, for ;; with a post statement, an exit only by failure, a
// break that leaves an inner switch or loop, a step reached through a
// helper) and keeps loops with a condition, a break, a labelled break
// from inside a select, a return of nil or of ContinueAsNew, a goto, and
// loops without steps.
func TestUnboundedLoops(t *testing.T) {
	pipetest.WantWarnings(t, check.UnboundedLoops, `package p

import (
	"context"
	"time"

	"github.com/resumegen/resumegen/runtime/resume"
)

//resume:step
func Poll(ctx context.Context) (bool, error) { return false, nil }

func helper(ctx context.Context) error {
	_, err := Poll(ctx)
	return err
}

//resume:workflow
func Forever(ctx context.Context) error {
	for { // want "workflow Forever: this loop journals steps and has no bound and no exit.*return resume\\.ContinueAsNew"
		if _, err := Poll(ctx); err != nil {
			return err
		}
		if err := resume.Sleep(ctx, time.Minute); err != nil {
			return err
		}
	}
}

//resume:workflow
func Counting(ctx context.Context) (int, error) {
	n := 0
	for i := 0; ; i++ { // want "workflow Counting: this loop journals steps"
		done, err := Poll(ctx)
		if err != nil {
			return n, err
		}
		switch {
		case done:
			break // leaves the switch, not the loop
		}
		for range 2 {
			break
		}
		n++
	}
}

//resume:workflow
func ByHelper(ctx context.Context) error {
	for { // want "workflow ByHelper: this loop journals steps"
		if err := helper(ctx); err != nil {
			return err
		}
	}
}

//resume:workflow
func Bounded(ctx context.Context, n int) error {
	for i := 0; i < n; i++ {
		if _, err := Poll(ctx); err != nil {
			return err
		}
	}
	return nil
}

//resume:workflow
func Exits(ctx context.Context) error {
	for {
		done, err := Poll(ctx)
		if err != nil {
			return err
		}
		if done {
			break
		}
	}
	for {
		if done, _ := Poll(ctx); done {
			return nil
		}
	}
}

//resume:workflow
func Labelled(ctx context.Context, ch chan int) error {
outer:
	for {
		if _, err := Poll(ctx); err != nil {
			return err
		}
		select {
		case <-ch:
			break outer
		default:
		}
	}
	return nil
}

//resume:workflow
func Continues(ctx context.Context, n int) error {
	for i := 0; ; i++ {
		if _, err := Poll(ctx); err != nil {
			return err
		}
		if i == 100 {
			return resume.ContinueAsNew(ctx, n+i)
		}
	}
}

//resume:workflow
func NoSteps(ctx context.Context) error {
	if _, err := Poll(ctx); err != nil {
		return err
	}
	n := 0
	for {
		n++
	}
}
`)
}
