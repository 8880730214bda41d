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

// TestConcurrencyAcrossPackages refuses a goroutine and a select two
// packages down from the body, each with the whole path from the workflow
// and the fix; a call marked //resume:step on the way runs them inside
// the journaled call.
func TestConcurrencyAcrossPackages(t *testing.T) {
	pipetest.WantModule(t, check.Concurrency, map[string]string{
		"p.go": `package p

import (
	"context"

	"example.com/p/util"
)

//resume:workflow
func Onboard(ctx context.Context) error {
	util.Fan()
	util.Fan() //resume:step name=Fan
	return nil
}
`,
		"util/util.go": `package util

import "example.com/p/util/deep"

// Fan fans out.
func Fan() { deep.Race(make(chan int), make(chan int)) }
`,
		"util/deep/deep.go": `package deep

// Race starts a goroutine and takes whichever channel is ready.
func Race(a, b chan int) {
	go func() { a <- 1 }() // want "^go statement in deep\\.Race, called from workflow Onboard along Onboard → util\\.Fan → deep\\.Race → go statement, starts a goroutine, which runs concurrently with the body in no fixed order, so what it does may differ when the run resumes: do the concurrent work inside a step \\(it may start goroutines and wait for them\\), call it directly, or run child workflows in parallel with resume.Map \\(docs/reference.md, Fan-out\\)$"
	select { // want "^select in deep\\.Race, called from workflow Onboard along Onboard → util\\.Fan → deep\\.Race → select, picks a ready case at random, so it may take another one when the run resumes: receive in a step and branch on what it returns, or wait with resume\\.Await\\[T\\]\\(ctx, NAME, timeout\\)$"
	case <-a:
	case <-b:
	}
}
`,
	})
}
