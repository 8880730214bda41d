package journaltest

import (
	"context"
	"errors"
	"math"

	"github.com/resumegen/resumegen/runtime/resume"
)

// TransferPlan steers Transfer, the suite's workflow for faithful replay:
// failures the body handles, values returned with errors, results JSON
// cannot carry. It is the run's input.
type TransferPlan struct {
	FailLookup     int  // Lookup (3 attempts) fails this many times, transiently
	DeclineDeposit bool // Deposit's first execution fails permanently; later ones succeed
	FailDeposit    int  // Deposit (3 attempts) fails transiently this many times
	QuoteErr       bool // Quote returns its value together with a permanent error
	NaN            bool // Measure (once) returns NaN on its first execution
	BadUTF8        bool // Label returns a string that is not valid UTF-8
	FailFinish     int  // Finish (1 attempt) fails this many times
	BodyFails      bool // the body returns an error of its own at the end
}

// Account is Lookup's result: a struct, which JSON null cannot be.
type Account struct {
	ID    string
	Cents int
}

// Quoted is Quote's result.
type Quoted struct{ Cents int }

// TransferOut is what Transfer's body saw, so a test can compare a resumed
// run's path with an uninterrupted one's.
type TransferOut struct {
	Account          Account
	Branch           string // "deposited", or "refunded" after a failed Deposit
	DepositErr       string
	DepositPermanent bool
	Quote            int
	QuoteErr         string
	Measure          float64
}

// ErrDeclined is Deposit's permanent failure.
var ErrDeclined = errors.New("deposit declined")

// Lookup is a default step returning a struct, with a retry budget.
func Lookup(ctx context.Context, p TransferPlan) (Account, error) {
	if n := seen.record(ctx, "Lookup"); n <= p.FailLookup {
		return Account{}, errTransient
	}
	return Account{ID: "acct-1", Cents: 500}, nil
}

// Deposit is a default step whose permanent failure the body handles.
func Deposit(ctx context.Context, p TransferPlan) error {
	n := seen.record(ctx, "Deposit")
	if n == 1 && p.DeclineDeposit {
		return resume.Permanent(ErrDeclined)
	}
	if n <= p.FailDeposit {
		return errTransient
	}
	return nil
}

// Refund compensates a failed Deposit.
func Refund(ctx context.Context, p TransferPlan) error {
	seen.record(ctx, "Refund")
	return nil
}

// Quote returns a value and, with p.QuoteErr, an error beside it.
func Quote(ctx context.Context, p TransferPlan) (Quoted, error) {
	seen.record(ctx, "Quote")
	if p.QuoteErr {
		return Quoted{Cents: 42}, resume.Permanent(errors.New("quote is stale"))
	}
	return Quoted{Cents: 40}, nil
}

// Measure is a once step that may return NaN.
func Measure(ctx context.Context, p TransferPlan) (float64, error) {
	if n := seen.record(ctx, "Measure"); n == 1 && p.NaN {
		return math.NaN(), nil
	}
	return 1.5, nil
}

// Label may return a string that is not valid UTF-8.
func Label(ctx context.Context, p TransferPlan) (string, error) {
	seen.record(ctx, "Label")
	if p.BadUTF8 {
		return "caf\xe9", nil
	}
	return "café", nil
}

// Finish is the last step, with a budget of one attempt.
func Finish(ctx context.Context, p TransferPlan) error {
	if n := seen.record(ctx, "Finish"); n <= p.FailFinish {
		return errors.New("finish failed")
	}
	return nil
}

// Transfer is the replay workflow, written as a user would.
func Transfer(ctx context.Context, p TransferPlan) (TransferOut, error) {
	return transferBody(ctx, p, transferSteps{
		lookup: Lookup, deposit: Deposit, refund: Refund, quote: Quote,
		measure: Measure, label: Label, finish: Finish,
	})
}

// transferSteps are the calls of Transfer's body: the plain functions, or
// their durable wrappers (what resumegen swaps in).
type transferSteps struct {
	lookup  func(context.Context, TransferPlan) (Account, error)
	deposit func(context.Context, TransferPlan) error
	refund  func(context.Context, TransferPlan) error
	quote   func(context.Context, TransferPlan) (Quoted, error)
	measure func(context.Context, TransferPlan) (float64, error)
	label   func(context.Context, TransferPlan) (string, error)
	finish  func(context.Context, TransferPlan) error
}

func transferBody(ctx context.Context, p TransferPlan, s transferSteps) (TransferOut, error) {
	var out TransferOut
	acct, err := s.lookup(ctx, p)
	if err != nil {
		return out, err
	}
	out.Account = acct
	if err := s.deposit(ctx, p); err != nil {
		out.DepositErr, out.DepositPermanent = err.Error(), resume.IsPermanent(err)
		if err := s.refund(ctx, p); err != nil {
			return out, err
		}
		out.Branch = "refunded"
	} else {
		out.Branch = "deposited"
	}
	q, err := s.quote(ctx, p)
	out.Quote = q.Cents
	if err != nil {
		out.QuoteErr = err.Error()
	}
	m, err := s.measure(ctx, p)
	if err != nil {
		return out, err
	}
	out.Measure = m
	if _, err := s.label(ctx, p); err != nil {
		return out, err
	}
	if err := s.finish(ctx, p); err != nil {
		return out, err
	}
	if p.BodyFails {
		return out, errors.New("the body refuses on its own")
	}
	return out, nil
}

var transferDef = &resume.WorkflowDef{
	Package: "github.com/resumegen/resumegen/runtime/journaltest",
	Name:    "Transfer",
	Version: "transfer-v1",
	Steps:   transferStepDefs,
	Errors:  []resume.ErrorDef{resume.ErrorSentinel("journaltest.ErrDeclined", ErrDeclined)},
	Run: func(ctx context.Context, args resume.Args) (any, error) {
		var p TransferPlan
		if err := args.Decode(&p); err != nil {
			return nil, err
		}
		return transferBody(ctx, p, durableTransfer)
	},
}

var transferStepDefs = []resume.StepDef{
	{Name: "Lookup", Callee: "journaltest.Lookup", Signature: "func(context.Context, TransferPlan) (Account, error)", Attempts: 3, BackoffMin: 1, BackoffMax: 1, JSON: "Account", Shape: []string{"result Account: Cents int", "result Account: ID string"}},
	{Name: "Deposit", Callee: "journaltest.Deposit", Signature: "func(context.Context, TransferPlan) error", Attempts: 3, BackoffMin: 1, BackoffMax: 1, JSON: "null"},
	{Name: "Refund", Callee: "journaltest.Refund", Signature: "func(context.Context, TransferPlan) error", JSON: "null"},
	{Name: "Quote", Callee: "journaltest.Quote", Signature: "func(context.Context, TransferPlan) (Quoted, error)", Attempts: 3, BackoffMin: 1, BackoffMax: 1, JSON: "Quoted", Shape: []string{"result Quoted: Cents int"}},
	{Name: "Measure", Callee: "journaltest.Measure", Signature: "func(context.Context, TransferPlan) (float64, error)", Policy: resume.PolicyOnce, JSON: "float64"},
	{Name: "Label", Callee: "journaltest.Label", Signature: "func(context.Context, TransferPlan) (string, error)", JSON: "string"},
	{Name: "Finish", Callee: "journaltest.Finish", Signature: "func(context.Context, TransferPlan) error", JSON: "null"},
}

// durableTransfer is what resumegen would generate for Transfer's calls.
var durableTransfer = transferSteps{
	lookup: func(ctx context.Context, p TransferPlan) (Account, error) {
		return resume.Call(ctx, &transferStepDefs[0], func(ctx context.Context) (Account, error) { return Lookup(ctx, p) })
	},
	deposit: func(ctx context.Context, p TransferPlan) error {
		return resume.Call0(ctx, &transferStepDefs[1], func(ctx context.Context) error { return Deposit(ctx, p) })
	},
	refund: func(ctx context.Context, p TransferPlan) error {
		return resume.Call0(ctx, &transferStepDefs[2], func(ctx context.Context) error { return Refund(ctx, p) })
	},
	quote: func(ctx context.Context, p TransferPlan) (Quoted, error) {
		return resume.Call(ctx, &transferStepDefs[3], func(ctx context.Context) (Quoted, error) { return Quote(ctx, p) })
	},
	measure: func(ctx context.Context, p TransferPlan) (float64, error) {
		return resume.Call(ctx, &transferStepDefs[4], func(ctx context.Context) (float64, error) { return Measure(ctx, p) })
	},
	label: func(ctx context.Context, p TransferPlan) (string, error) {
		return resume.Call(ctx, &transferStepDefs[5], func(ctx context.Context) (string, error) { return Label(ctx, p) })
	},
	finish: func(ctx context.Context, p TransferPlan) error {
		return resume.Call0(ctx, &transferStepDefs[6], func(ctx context.Context) error { return Finish(ctx, p) })
	},
}

func init() { resume.Register(Transfer, transferDef) }
