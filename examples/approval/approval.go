package main

//go:generate go tool resumegen

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/resumegen/resumegen/runtime/resume"
)

// Expense is an expense report to approve and pay.
type Expense struct {
	ID        string
	Submitter string // who is paid, and told the outcome
	Approver  string // who decides
	Amount    int    // cents
	// RemindAfter is how long the approver has before a reminder, and
	// DecideWithin how long after it: the company's policy, carried by
	// the report so that a run keeps the policy it started with.
	RemindAfter  time.Duration
	DecideWithin time.Duration
}

// Decision is the "approval" event an approver sends to a run:
//
//	resumectl runs signal ID approval '{"approved":true,"by":"dana"}'
type Decision struct {
	Approved bool   `json:"approved"`
	By       string `json:"by"`
	Note     string `json:"note,omitempty"`
}

// Outcome is what a run of Approve comes to.
type Outcome struct {
	Status  string `json:"status"` // "paid", "rejected" or "timed out"
	By      string `json:"by,omitempty"`
	Note    string `json:"note,omitempty"`
	Payment string `json:"payment,omitempty"` // the payment's id, when paid
}

// Approve is the approval gate: the report is submitted, the approver is
// reminded after a while, and the run waits for their decision, at most
// DecideWithin; an approved report is paid, and the submitter is told the
// outcome (paid, rejected, or timed out). While it sleeps and while it
// waits, the run holds no worker, no lease and no connection: it is rows
// in the journal, and any process resumes it when the time comes or the
// decision arrives.
//
//resume:workflow
func Approve(ctx context.Context, e Expense) (Outcome, error) {
	if err := Submit(ctx, e); err != nil {
		return Outcome{}, err
	}
	if err := resume.Sleep(ctx, e.RemindAfter); err != nil {
		return Outcome{}, err
	}
	if err := Remind(ctx, e); err != nil {
		return Outcome{}, err
	}
	out, err := decide(ctx, e)
	if err != nil {
		return Outcome{}, err
	}
	if err := Tell(ctx, e.Submitter, out); err != nil {
		return Outcome{}, err
	}
	return out, nil
}

// decide waits for the approver's decision and pays an approved report.
func decide(ctx context.Context, e Expense) (Outcome, error) {
	d, err := resume.Await[Decision](ctx, "approval", e.DecideWithin)
	switch {
	case errors.Is(err, resume.ErrTimeout):
		return Outcome{Status: "timed out"}, nil
	case err != nil:
		return Outcome{}, err
	case !d.Approved:
		return Outcome{Status: "rejected", By: d.By, Note: d.Note}, nil
	}
	id, err := Pay(ctx, e)
	if err != nil {
		return Outcome{}, err
	}
	return Outcome{Status: "paid", By: d.By, Note: d.Note, Payment: id}, nil
}

// The steps below act on a pretend outside world (world.go): the expense
// system, the approver's and the submitter's inboxes and a payment
// service, each keeping a durable record that the demo and the tests
// count.

// Submit files the report in the expense system, which keeps one entry
// per report: submitting it again is harmless.
//
//resume:step
func Submit(ctx context.Context, e Expense) error {
	return worldFrom(ctx).act(ctx, "Submit", e.ID, fmt.Sprintf("%s asks %d cents", e.Submitter, e.Amount))
}

// Remind emails the approver that the report waits for them. An email
// cannot be taken back, nor asked whether it left: at most once.
//
//resume:step once
func Remind(ctx context.Context, e Expense) error {
	return worldFrom(ctx).email(ctx, "Remind", e.Approver, "expense "+e.ID+" waits for your decision")
}

// Pay pays the submitter, with the step's idempotency key: the payment
// service pays a key once and answers a repeated request with the first
// payment's id, so a Pay executed again after a crash pays nothing more.
//
//resume:step
func Pay(ctx context.Context, e Expense) (string, error) {
	return worldFrom(ctx).pay(ctx, resume.IdempotencyKey(ctx), e.Submitter, e.Amount)
}

// Tell emails the submitter the outcome, at most once.
//
//resume:step once
func Tell(ctx context.Context, to string, o Outcome) error {
	msg := "expense " + o.Status
	if o.By != "" {
		msg += " by " + o.By
	}
	return worldFrom(ctx).email(ctx, "Tell", to, msg)
}
