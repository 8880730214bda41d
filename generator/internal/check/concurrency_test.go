package check_test

import (
	"testing"

	"github.com/resumegen/resumegen/generator/internal/check"
	"github.com/resumegen/resumegen/generator/internal/pipetest"
)

// TestConcurrency refuses goroutines and selects of more than one case in
// the body and in helpers; a select of one case, and those holding a
// journaled call (Placement's), are not this check's.
func TestConcurrency(t *testing.T) {
	pipetest.Want(t, check.Concurrency, `package p

import "context"

//resume:workflow
func W(ctx context.Context, ch chan int) error {
	done := make(chan bool)
	go func() { done <- true }() // want "go statement in a workflow body starts a goroutine"
	select { // want "select in a workflow body picks a ready case at random"
	case <-done:
	case <-ch:
	}
	select {
	case <-done:
	}
	select { // want "select in a workflow body picks a ready case at random"
	case v := <-ch:
		_ = v
	default:
	}
	go Step(ctx)
	return wait(ch)
}

func wait(ch chan int) error {
	go func() {}() // want "go statement in wait, called from workflow W along W → wait → go statement"
	return nil
}

//resume:step
func Step(ctx context.Context) error { return nil }
`)
}
