package main

//go:generate go tool resumegen

import (
	"context"
	"fmt"
)

// Batch is a batch of items to settle, and the amount above which settling
// stops for a person to look.
type Batch struct {
	ID    string
	Limit int
}

// Item is one item of a batch.
type Item struct {
	ID     string
	Amount int
}

// Quote is an item's price, as Charge receives it.
type Quote struct {
	Cents int
	Error string
}

// Report is what a run of Settle returns.
type Report struct {
	Charged int
	Stopped string // the item that stopped the batch, if any
}

// Settle charges each item of a batch at its quoted price. It is written to
// exercise what a resume must get right: a step nested in another step's
// arguments inside a loop, a step keyed by item (key=), and an early return
// from inside the loop.
//
//resume:workflow
func Settle(ctx context.Context, b Batch) (Report, error) {
	items, err := ListItems(ctx, b.ID)
	if err != nil {
		return Report{}, err
	}
	var rep Report
	for _, it := range items {
		if it.Amount > b.Limit {
			rep.Stopped = it.ID
			return rep, nil // early return from inside the loop
		}
		// Price runs first, on every iteration; Charge gets its result.
		// The directive marks Charge: two steps end on the next line, so
		// it goes on a line only Charge spans.
		if err := Charge(ctx, it, //resume:step key=it.ID
			quote(Price(ctx, it))); err != nil {
			return Report{}, err
		}
		rep.Charged++
	}
	return rep, Close(ctx, b.ID)
}

// quote packs Price's results for Charge: plain code between steps.
func quote(cents int, err error) Quote {
	if err != nil {
		return Quote{Error: err.Error()}
	}
	return Quote{Cents: cents}
}

// ListItems reads the batch's items.
//
//resume:step
func ListItems(ctx context.Context, batchID string) ([]Item, error) {
	track(ctx, "ListItems")
	var items []Item
	for i, amount := range []int{120, 80, 300, 45} {
		items = append(items, Item{ID: fmt.Sprintf("%s-item-%d", batchID, i+1), Amount: amount})
	}
	return items, nil
}

// Price quotes an item.
//
//resume:step
func Price(ctx context.Context, it Item) (int, error) {
	track(ctx, "Price")
	return it.Amount * 100, nil
}

// Charge charges an item.
//
//resume:step
func Charge(ctx context.Context, it Item, q Quote) error {
	track(ctx, "Charge")
	if q.Error != "" {
		return fmt.Errorf("charge %s: no price: %s", it.ID, q.Error)
	}
	return nil
}

// Close closes the batch.
//
//resume:step
func Close(ctx context.Context, batchID string) error {
	track(ctx, "Close")
	return nil
}
