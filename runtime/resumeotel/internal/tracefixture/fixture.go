// Package tracefixture holds the workflows the tests of package resumeotel
// trace: a retried step, a child run, a failed step, a once step that
// parks, a wait.
package tracefixture

//go:generate go tool resumegen

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/resumegen/resumegen/runtime/resume"
)

// Order reserves (its first failures attempts fail, then it succeeds),
// charges once and has a child run notify.
//
//resume:workflow
func Order(ctx context.Context, id string, failures int) (string, error) {
	n, err := Reserve(ctx, failures)
	if err != nil {
		return "", err
	}
	if err := Charge(ctx, id); err != nil {
		return "", err
	}
	sent, err := Notify(ctx, id)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%s reserved at attempt %d, %s", id, n, sent), nil
}

// Reserve fails its first failures attempts and returns the attempt that
// succeeded.
//
//resume:step retry=3 backoff=1ms..2ms
func Reserve(ctx context.Context, failures int) (int, error) {
	info, _ := resume.StepFromContext(ctx)
	if info.Attempt <= failures {
		return 0, fmt.Errorf("out of stock at attempt %d", info.Attempt)
	}
	return info.Attempt, nil
}

// Charge takes money: at most once.
//
//resume:step once
func Charge(ctx context.Context, id string) error { return nil }

// Notify is a child workflow of Order.
//
//resume:workflow
func Notify(ctx context.Context, id string) (string, error) {
	return Send(ctx, id)
}

// Send sends a message.
//
//resume:step
func Send(ctx context.Context, id string) (string, error) { return "sent to " + id, nil }

// ErrBroken is what Broken always fails with.
var ErrBroken = errors.New("broken for good")

// Failing fails: its step fails both attempts.
//
//resume:workflow
func Failing(ctx context.Context, id string) error {
	return Broken(ctx)
}

// Broken always fails.
//
//resume:step retry=2 backoff=1ms..2ms
func Broken(ctx context.Context) error { return ErrBroken }

// Parking's once step panics: its outcome is unknown, and the run parks.
//
//resume:workflow
func Parking(ctx context.Context, id string) error {
	return Explode(ctx)
}

// Explode panics.
//
//resume:step once
func Explode(ctx context.Context) error { panic("lost the connection mid-transfer") }

// Napping sleeps between two steps.
//
//resume:workflow
func Napping(ctx context.Context, id string) (string, error) {
	if _, err := Send(ctx, id); err != nil {
		return "", err
	}
	if err := resume.Sleep(ctx, time.Hour); err != nil {
		return "", err
	}
	return Send(ctx, id+" again") //resume:step name=SendAgain
}
