package check_test

import (
	"testing"

	"github.com/resumegen/resumegen/generator/internal/check"
	"github.com/resumegen/resumegen/generator/internal/pipetest"
)

// TestHandles refuses two awaited events whose senders would be one
// method of the run handle, and an event name that names no method.
func TestHandles(t *testing.T) {
	pipetest.Want(t, check.Handles, `package p

import (
	"context"
	"time"

	"github.com/resumegen/resumegen/runtime/resume"
)

//resume:workflow
func W(ctx context.Context) error {
	if _, err := resume.Await[bool](ctx, "payment-received", time.Hour); err != nil {
		return err
	}
	if _, err := resume.Await[int](ctx, "payment_received", time.Hour); err != nil { // want "its sender WRun\\.SignalPaymentReceived is also the sender of the event \"payment-received\""
		return err
	}
	if _, err := resume.Await[int](ctx, "approval", time.Hour); err != nil {
		return err
	}
	_, err := resume.Await[int](ctx, "--", time.Hour) // want "the event name has no letter or digit to name its sender on WRun"
	return err
}
`)
}
