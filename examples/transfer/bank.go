package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/resumegen/resumegen/runtime/resume"
)

// The steps below talk to a pretend bank: each execution is appended to the
// world's effects log (see world.go), from which the tests and the demo
// compute balances and count executions.
//
// The bank is deliberately inconsistent, as real ones are: a deposit it
// refuses the first time may go through the second. A resumed run that
// executed a refused deposit again could therefore take the other branch
// (and create money); one that replays the refusal cannot.

// Price quotes an order, writing the quote through q.
//
//resume:step
func Price(ctx context.Context, o Order, q *Quote) error {
	record(ctx, "Price", "", 0)
	q.Amount, q.Fee = o.Amount, 25+o.Amount/100
	return nil
}

// Reserve holds the fee on the payer's account.
//
//resume:step
func Reserve(ctx context.Context, account string, cents int) error {
	record(ctx, "Reserve", account, -cents)
	return nil
}

// Withdraw takes the amount from the payer. The bank is busy on the first
// attempt of every run: a transient failure, retried.
//
//resume:step retry=3 backoff=1ms..5ms
func Withdraw(ctx context.Context, account string, cents int) error {
	if executions(ctx, "Withdraw") == 0 {
		record(ctx, "Withdraw", account, 0)
		return errors.New("bank busy, try again")
	}
	record(ctx, "Withdraw", account, -cents)
	return nil
}

// Deposit pays the amount to the payee. The first time a run asks, the
// bank refuses accounts named "closed" and amounts over 100000 cents, for
// good (a permanent error); asked again, it would accept.
//
//resume:step retry=3 backoff=1ms..5ms
func Deposit(ctx context.Context, account string, cents int) error {
	first := executions(ctx, "Deposit") == 0
	switch {
	case first && account == "closed":
		record(ctx, "Deposit", account, 0)
		return resume.Permanent(&AccountClosedError{Account: account, Since: "2026-11-01"})
	case first && cents > 100000:
		record(ctx, "Deposit", account, 0)
		return resume.Permanent(fmt.Errorf("deposit %d to %s: %w", cents, account, ErrLimitExceeded))
	}
	record(ctx, "Deposit", account, cents)
	return nil
}

// Refund gives a withdrawn amount back.
//
//resume:step
func Refund(ctx context.Context, account string, cents int) error {
	record(ctx, "Refund", account, cents)
	return nil
}

// Release gives a reserved fee back.
//
//resume:step
func Release(ctx context.Context, account string, cents int) error {
	record(ctx, "Release", account, cents)
	return nil
}

// Send sends one notification, at most once: a message may not be
// recalled.
//
//resume:step once
func Send(ctx context.Context, party, text string) error {
	record(ctx, "Send", party, 0)
	return nil
}
