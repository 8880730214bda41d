package main

//go:generate go tool resumegen

import (
	"context"
	"fmt"
	"slices"

	"github.com/resumegen/resumegen/runtime/resume"
)

// Input names the customer to onboard.
type Input struct {
	CustomerID string
}

// Record is one of the customer's records.
type Record struct {
	ID    string
	Owner string // the owner's email address
	Value int
}

// Score is a record's score from the paid scoring service.
type Score struct {
	RecordID string
	Owner    string
	Points   int
}

// Owner is a person to tell about their scored records.
type Owner struct {
	Email   string
	Records int
}

// Summary is what a run of Onboard returns.
type Summary struct {
	Scored   int
	Notified int
}

// Onboard scores a customer's records, stores the scores and tells the
// owners, in five steps.
//
//resume:workflow
func Onboard(ctx context.Context, in Input) (Summary, error) {
	data, err := FetchRecords(ctx, in)
	if err != nil {
		return Summary{}, err
	}
	scored, err := ScoreAll(ctx, data) // costs money: must not run twice
	if err != nil {
		return Summary{}, err
	}
	if err := WriteScores(ctx, scored); err != nil {
		return Summary{}, err
	}
	notified := 0
	for _, o := range owners(scored) { // plain deterministic code between steps
		if err := NotifyOwner(ctx, o); err != nil {
			return Summary{}, err
		}
		notified++
	}
	return Summary{Scored: len(scored), Notified: notified}, MarkComplete(ctx, in.CustomerID)
}

// FetchRecords reads the customer's records. It has no effect outside, so
// the default policy (at least once) is right.
//
//resume:step
func FetchRecords(ctx context.Context, in Input) ([]Record, error) {
	w := worldFrom(ctx)
	defer w.track(ctx, "FetchRecords")()
	if err := w.injectedFailure("FetchRecords"); err != nil {
		return nil, err
	}
	return []Record{
		{ID: in.CustomerID + "-r1", Owner: "alice@example.com", Value: 3},
		{ID: in.CustomerID + "-r2", Owner: "bob@example.com", Value: 5},
		{ID: in.CustomerID + "-r3", Owner: "alice@example.com", Value: 8},
		{ID: in.CustomerID + "-r4", Owner: "carol@example.com", Value: 13},
	}, nil
}

// ScoreAll sends the records to the paid scoring service, which charges
// once per idempotency key: a repeat after a crash is answered without a
// second charge.
//
//resume:step retry=5 backoff=200ms..30s
func ScoreAll(ctx context.Context, recs []Record) ([]Score, error) {
	w := worldFrom(ctx)
	defer w.track(ctx, "ScoreAll")()
	if err := w.injectedFailure("ScoreAll"); err != nil {
		return nil, err
	}
	return w.scoring.Score(ctx, resume.IdempotencyKey(ctx), recs)
}

// WriteScores stores the scores in the journal's database (SQLite or
// PostgreSQL), in the step's own transaction: exactly once.
//
//resume:step tx
func WriteScores(ctx context.Context, scores []Score) error {
	w := worldFrom(ctx)
	defer w.track(ctx, "WriteScores")()
	if err := w.injectedFailure("WriteScores"); err != nil {
		return err
	}
	return w.scores.Insert(ctx, scores)
}

// NotifyOwner sends one email over plain SMTP, which cannot say whether a
// message was delivered: at most once, and a person decides after a crash.
//
//resume:step once
func NotifyOwner(ctx context.Context, o Owner) error {
	w := worldFrom(ctx)
	defer w.track(ctx, "NotifyOwner")()
	if err := w.injectedFailure("NotifyOwner"); err != nil {
		return err
	}
	info, _ := resume.StepFromContext(ctx)
	return w.outbox.Send(o.Email, info.RunID+" "+info.StepKey,
		fmt.Sprintf("Hello %s, %d of your records were scored.", o.Email, o.Records))
}

// MarkComplete records that the customer is onboarded.
//
//resume:step
func MarkComplete(ctx context.Context, customerID string) error {
	w := worldFrom(ctx)
	defer w.track(ctx, "MarkComplete")()
	if err := w.injectedFailure("MarkComplete"); err != nil {
		return err
	}
	return nil
}

// owners lists the owners of the scored records, sorted by address so that
// every execution visits them in the same order.
func owners(scores []Score) []Owner {
	counts := map[string]int{}
	for _, s := range scores {
		counts[s.Owner]++
	}
	var out []Owner
	for email, n := range counts {
		out = append(out, Owner{Email: email, Records: n})
	}
	slices.SortFunc(out, func(a, b Owner) int {
		if a.Email < b.Email {
			return -1
		}
		if a.Email > b.Email {
			return 1
		}
		return 0
	})
	return out
}
