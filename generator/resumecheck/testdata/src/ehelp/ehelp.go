// Package ehelp holds helpers that reach steps of package mail.
package ehelp

import (
	"context"

	"mail"
)

// All sends to each recipient.
func All(ctx context.Context, to []string) error {
	for _, t := range to {
		if err := mail.Send(ctx, t); err != nil {
			return err
		}
	}
	return nil
}
