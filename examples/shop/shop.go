package main

//go:generate go tool resumegen

import (
	"context"
	"fmt"
	"time"
)

// Order is what a customer buys.
type Order struct {
	ID    string
	Items []string
}

// Options change how an order is handled.
type Options struct {
	Gift bool
}

// Receipt is what a checkout comes to.
type Receipt struct {
	Order  string
	Cents  int
	Taxed  bool
	Placed time.Time
	Note   string `json:",omitempty"`
}

// Shop holds the checkout's dependencies: none of it is journaled; the
// engine is given the Shop to run Checkout on (resume.WithReceiver).
type Shop struct {
	ledger *ledger
	prices map[string]int
}

// Checkout prices an order, charges it and ships it, a gift note when
// asked: a workflow that is a method of its dependencies, with two inputs,
// a step of three results, a call of time.Now journaled at the call site,
// and a compensation deferred until the body returns.
//
//resume:workflow
func (s *Shop) Checkout(ctx context.Context, o Order, opts Options) (rec Receipt, err error) {
	placed := time.Now() //resume:step name=now
	cents, taxed, err := s.Quote(ctx, o)
	if err != nil {
		return Receipt{}, err
	}
	if err := s.Charge(ctx, o.ID, cents); err != nil {
		return Receipt{}, err
	}
	defer func() {
		if err != nil {
			_ = s.Refund(ctx, o.ID, cents)
		}
	}()
	if err := s.Ship(ctx, o); err != nil {
		return Receipt{}, err
	}
	rec = Receipt{Order: o.ID, Cents: cents, Taxed: taxed, Placed: placed}
	if opts.Gift {
		rec.Note = s.Wrap(ctx, o.ID)
	}
	return rec, nil
}

// Quote prices the order: its total, whether tax applies, or an error.
//
//resume:step
func (s *Shop) Quote(ctx context.Context, o Order) (int, bool, error) {
	s.ledger.record(ctx, "Quote", 0)
	total := 0
	for _, it := range o.Items {
		p, ok := s.prices[it]
		if !ok {
			return 0, false, fmt.Errorf("no price for %q", it)
		}
		total += p
	}
	return total, total > 1000, nil
}

// Charge takes the money.
//
//resume:step
func (s *Shop) Charge(ctx context.Context, id string, cents int) error {
	s.ledger.record(ctx, "Charge", -cents)
	return nil
}

// Refund gives it back.
//
//resume:step
func (s *Shop) Refund(ctx context.Context, id string, cents int) error {
	s.ledger.record(ctx, "Refund", cents)
	return nil
}

// Ship sends the parcel; an order of a "broken" item fails to ship, for
// good, and the deferred refund runs.
//
//resume:step once
func (s *Shop) Ship(ctx context.Context, o Order) error {
	s.ledger.record(ctx, "Ship", 0)
	for _, it := range o.Items {
		if it == "broken" {
			return fmt.Errorf("cannot ship %q", it)
		}
	}
	return nil
}

// Wrap wraps a gift and returns its note: one result, no error.
//
//resume:step
func (s *Shop) Wrap(ctx context.Context, id string) string {
	s.ledger.record(ctx, "Wrap", 0)
	return "wrapped " + id
}
