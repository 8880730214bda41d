package main

//go:generate go tool resumegen

import (
	"context"
	"fmt"
	"time"

	"github.com/resumegen/resumegen/runtime/resume"
)

// Batch is what a run of Scores scores: N items, each of whose scoring
// takes Work (a call to a slow service).
type Batch struct {
	ID   string
	N    int
	Work time.Duration
}

// Item is one item of a batch.
type Item struct {
	ID   string
	Seed int
}

// Summary is what a run of Scores returns: each item's score, in the
// items' order, and their total.
type Summary struct {
	Scores []int
	Total  int
}

// Scores fans out: each item is scored by a child workflow, ScoreItem,
// which any worker claims, so that the items are scored in parallel across
// workers; the results are gathered by item (key=), in the items' order,
// whatever order the children finish in. A crash resumes only the items
// not scored yet.
//
//resume:workflow
func Scores(ctx context.Context, b Batch) (Summary, error) {
	items, err := ListItems(ctx, b)
	if err != nil {
		return Summary{}, err
	}
	scores, err := resume.Map(ctx, items, func(ctx context.Context, it Item) (int, error) {
		return ScoreItem(ctx, it, b.Work) //resume:step key=it.ID
	})
	if err != nil {
		return Summary{}, err
	}
	total := 0
	for _, s := range scores {
		total += s
	}
	return Summary{Scores: scores, Total: total}, nil
}

// ScoreItem scores one item: a child run of Scores.
//
//resume:workflow
func ScoreItem(ctx context.Context, it Item, work time.Duration) (int, error) {
	v, err := Fetch(ctx, it)
	if err != nil {
		return 0, err
	}
	return Weigh(ctx, it, v, work)
}

// ListItems lists a batch's items.
//
//resume:step
func ListItems(ctx context.Context, b Batch) ([]Item, error) {
	track(ctx, "ListItems", b.ID)
	items := make([]Item, b.N)
	for i := range items {
		items[i] = Item{ID: fmt.Sprintf("i%02d", i), Seed: i*7 + 3}
	}
	return items, nil
}

// Fetch reads an item's value.
//
//resume:step
func Fetch(ctx context.Context, it Item) (int, error) {
	track(ctx, "Fetch", it.ID)
	return it.Seed * 11 % 97, nil
}

// Weigh scores an item's value, taking work (a slow call elsewhere).
//
//resume:step
func Weigh(ctx context.Context, it Item, v int, work time.Duration) (int, error) {
	track(ctx, "Weigh", it.ID)
	select {
	case <-time.After(work):
	case <-ctx.Done():
		return 0, ctx.Err()
	}
	return v*v%1000 + len(it.ID), nil
}

// ScoresInline is Scores without the fan-out, for the benchmark: the
// same children, called one after another in a loop, each executing inside
// the parent.
//
//resume:workflow
func ScoresInline(ctx context.Context, b Batch) (Summary, error) {
	items, err := ListItems(ctx, b)
	if err != nil {
		return Summary{}, err
	}
	var sum Summary
	for _, it := range items {
		s, err := ScoreItem(ctx, it, b.Work) //resume:step key=it.ID
		if err != nil {
			return Summary{}, err
		}
		sum.Scores = append(sum.Scores, s)
		sum.Total += s
	}
	return sum, nil
}
