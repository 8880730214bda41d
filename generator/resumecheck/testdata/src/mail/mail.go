package mail

import "context"

// Send is a step declared in another package: its directive is read from
// this file's source.
//
//resume:step once
func Send(ctx context.Context, to string) error { return nil }

// Plain is not a step.
func Plain(ctx context.Context) error { return nil }
