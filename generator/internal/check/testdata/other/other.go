// Package other is another package of the user's module for the tests of
// the checks: a test's package p imports it, and the checks read its
// directives and bodies from this source, as they read those of a
// package loaded from export data.
package other

import (
	"context"
	"time"

	"github.com/resumegen/resumegen/runtime/resume"
)

// Send is a step declared in another package.
//
//resume:step
func Send(ctx context.Context, to string) error { return nil }

// Notify is no step but calls one.
func Notify(ctx context.Context) error { return Send(ctx, "owner") }

// Pause is no step but waits.
func Pause(ctx context.Context) error { return resume.Sleep(ctx, time.Second) }

// Pure reaches no journaled call.
func Pure(ctx context.Context) error { return nil }

// StartsChild is no step but calls a workflow.
func StartsChild(ctx context.Context) error {
	_, err := Child(ctx, 1)
	return err
}

// Child is a workflow a workflow of package p may call as a child run.
//
//resume:workflow
func Child(ctx context.Context, n int) (int, error) { return n, nil }

// Generic, NoContext, ChanInput, TwoInts and ChanOutput are workflows
// whose signature no workflow may have: this package's own check refuses
// them, and a child call of one is refused at the call.
//
//resume:workflow
func Generic[T any](ctx context.Context, t T) error { return nil }

//resume:workflow
func NoContext(n int) error { return nil }

//resume:workflow
func ChanInput(ctx context.Context, c chan int) error { return nil }

//resume:workflow
func TwoInts(ctx context.Context) (int, int) { return 0, 0 }

//resume:workflow
func ChanOutput(ctx context.Context) (chan int, error) { return nil, nil }

// ManyChans is a variadic workflow whose input JSON cannot carry;
// ManyInts one whose input it can.
//
//resume:workflow
func ManyChans(ctx context.Context, cs ...chan int) error { return nil }

//resume:workflow
func ManyInts(ctx context.Context, xs ...int) error { return nil }

// TakesPointer is a workflow whose input is a pointer.
//
//resume:workflow
func TakesPointer(ctx context.Context, n *int) error { return nil }

// Counter is a package-level variable a workflow may not write.
var Counter int

// codeError is an error type other packages cannot name.
type codeError struct{ Code int }

func (e *codeError) Error() string { return "code" }

// NewCodeError returns an error of a type other packages cannot name.
func NewCodeError() *codeError { return &codeError{Code: 1} }

// Renamed is a step that had the name Renamed before: its renamed-from=
// names itself.
//
//resume:step renamed-from=Renamed
func Renamed(ctx context.Context) error { return nil }
