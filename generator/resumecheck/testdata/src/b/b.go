// Package b holds near-miss directives and steps reached through helpers,
// which the analyzer reports as resumegen does.
package b

import (
	"context"
	"time"
)

//resume:workflow
func W(ctx context.Context) error {
	if err := Charge(ctx, 1); err != nil { // resume:step once // want `with a space after //, this is an ordinary comment, not a directive`
		return err
	}
	f := notify // want `notify calls step Notify at .*, and is used here as a value`
	_ = f
	return notify(ctx)
}

func notify(ctx context.Context) error {
	_ = later()
	return Notify(ctx)
}

func later() time.Time {
	return time.Now() // want `time\.Now in later, called from workflow W along W → notify → later → time\.Now`
}

// resume:step once // want `with a space after //`
func Charge(ctx context.Context, n int) error { return nil }

// resume: step // want `with a space after //, this is an ordinary comment`
func Refund(ctx context.Context) error { return nil }

//resume:steps // want `did you mean //resume:step\?`
func Audit(ctx context.Context) error { return nil }

//resume:step
func Notify(ctx context.Context) error { return nil }
