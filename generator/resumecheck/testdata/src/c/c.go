// Package c holds calls of workflows from a workflow (child runs) that the
// analyzer refuses as resumegen does.
package c

import "context"

//resume:workflow
func Parent(ctx context.Context) error {
	go Kid(ctx) // want `child workflow Kid is called in a go statement`
	run := Kid  // want `Kid is a //resume:workflow, whose call from a workflow is a child run, and is used here as a value`
	_ = run
	return Kid(ctx) /* want `a call of workflow Kid is a child run, which takes no once` */ //resume:step once
}

//resume:workflow
func Kid(ctx context.Context) error { return Touch(ctx) }

//resume:step
func Touch(ctx context.Context) error { return nil }
