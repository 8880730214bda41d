package main

//go:generate go tool resumegen

import (
	"context"
	"errors"
	"fmt"
)

// Order asks to move Amount cents from one account to another.
type Order struct {
	ID     string
	From   string
	To     string
	Amount int
}

// Quote is what an order costs: the amount moved and the bank's fee.
type Quote struct {
	Amount int
	Fee    int
}

// Receipt is what a run of Transfer comes to.
type Receipt struct {
	Status   string // "done" or "compensated"
	Moved    int
	Notified int    // how many parties Notify told
	Reason   string `json:",omitempty"` // why the transfer was compensated
}

// ErrLimitExceeded is the bank's refusal of a deposit over the receiving
// account's limit.
var ErrLimitExceeded = errors.New("deposit limit exceeded")

// AccountClosedError is the bank's refusal of a deposit to a closed
// account.
type AccountClosedError struct {
	Account string
	Since   string
}

func (e *AccountClosedError) Error() string {
	return fmt.Sprintf("account %s closed since %s", e.Account, e.Since)
}

// leg is one part of a transfer that happened and that compensation undoes.
type leg struct {
	kind   string // "reserve" or "withdraw"
	amount int
}

// Transfer moves money as a saga: it reserves the fee, withdraws, deposits
// and tells both parties. A deposit the bank refuses for a reason the
// workflow knows (a closed account, a limit) is compensated: the legs that
// happened are undone in reverse order and the run succeeds with the
// reason. Any other failure fails the run.
//
// What a resume must get right here, and resumegen journals: the refusal
// the body saw is replayed with its identity (errors.As, errors.Is), so a
// resumed run takes the branch the first run took; Price's result comes
// back through its pointer argument; the steps inside compensate are
// journaled as if written here; Notify is a child run with a journal of its
// own.
//
//resume:workflow
func Transfer(ctx context.Context, o Order) (Receipt, error) {
	var q Quote
	if err := Price(ctx, o, &q); err != nil {
		return Receipt{}, err
	}
	var done []leg
	if err := Reserve(ctx, o.From, q.Fee); err != nil {
		return Receipt{}, err
	}
	done = append(done, leg{"reserve", q.Fee})
	if err := Withdraw(ctx, o.From, q.Amount); err != nil {
		return compensate(ctx, o, done, err)
	}
	done = append(done, leg{"withdraw", q.Amount})
	if err := Deposit(ctx, o.To, q.Amount); err != nil {
		var closed *AccountClosedError
		switch {
		case errors.As(err, &closed):
			return compensate(ctx, o, done, fmt.Errorf("%s is closed", closed.Account))
		case errors.Is(err, ErrLimitExceeded):
			return compensate(ctx, o, done, err)
		}
		return Receipt{}, err // unexpected: the run fails, for a person to look at
	}
	n, err := Notify(ctx, Notice{Order: o.ID, Parties: []string{o.From, o.To}})
	if err != nil {
		return Receipt{}, err
	}
	return Receipt{Status: "done", Moved: q.Amount, Notified: n}, nil
}

// compensate undoes the legs that happened, last first, and reports why.
func compensate(ctx context.Context, o Order, done []leg, why error) (Receipt, error) {
	for i := len(done) - 1; i >= 0; i-- {
		var err error
		switch done[i].kind {
		case "withdraw":
			err = Refund(ctx, o.From, done[i].amount)
		case "reserve":
			err = Release(ctx, o.From, done[i].amount)
		}
		if err != nil {
			return Receipt{}, err
		}
	}
	return Receipt{Status: "compensated", Reason: why.Error()}, nil
}

// Notice asks Notify to tell the parties of an order.
type Notice struct {
	Order   string
	Parties []string
}

// Notify tells each party of an order, once each: a workflow of its own,
// which Transfer runs as a child run.
//
//resume:workflow
func Notify(ctx context.Context, n Notice) (int, error) {
	sent := 0
	for _, p := range n.Parties {
		if err := Send(ctx, p, "order "+n.Order+" settled"); err != nil { //resume:step key=p
			return sent, err
		}
		sent++
	}
	return sent, nil
}
