// Package e calls helpers of another package of the module, which vet
// follows by types as resumegen does: their steps are the workflow's, so
// nothing is refused, and their steps' names clash with the body's.
package e

import (
	"context"

	"ehelp"
	"mail"
)

//resume:workflow
func W(ctx context.Context, to []string) error {
	if err := ehelp.All(ctx, to); err != nil {
		return err
	}
	return mail.Send(ctx, "ops") // want `step name Send is already used by the call at .*ehelp.go:13:13`
}
