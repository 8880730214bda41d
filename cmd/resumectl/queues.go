package main

import (
	"errors"
	"fmt"
	"time"

	"github.com/resumegen/resumegen/runtime/journal"
)

// queueJSON is a queue as queues list -json carries it. A zero limit is
// no limit; times are UTC, null for none.
type queueJSON struct {
	Name            string     `json:"name"`
	Concurrency     int        `json:"concurrency"`
	PerKey          int        `json:"per_key"`
	Rate            int        `json:"rate"`
	Per             string     `json:"per"` // a Go duration, "" without a rate
	Pending         int        `json:"pending"`
	Running         int        `json:"running"`
	Waiting         int        `json:"waiting"`
	Keys            int        `json:"keys"`
	OldestPending   *time.Time `json:"oldest_pending"`
	StartedInPeriod int        `json:"started_in_period"`
	ConfiguredBy    string     `json:"configured_by"`
	ConfiguredAt    *time.Time `json:"configured_at"`
}

// queuesList prints every queue with stored limits or unfinished runs
// (//resume:workflow queue=NAME, resume.WithQueues), reading only.
func queuesList(c *cli, o *options, args []string) error {
	if err := wantArgs(args); err != nil {
		return err
	}
	j, err := c.openReadOnly(o)
	if err != nil {
		return err
	}
	defer j.Close()
	queuer, ok := journal.Find[journal.Queuer](j)
	if !ok {
		return errors.New("the journal keeps no queues (it does not implement journal.Queuer)")
	}
	qs, err := queuer.ListQueues(c.ctx)
	if err != nil {
		return err
	}
	out := []queueJSON{}
	for _, q := range qs {
		v := queueJSON{Name: q.Limits.Name, Concurrency: q.Limits.Concurrency, PerKey: q.Limits.PerKey, Rate: q.Limits.Rate,
			Pending: q.Pending, Running: q.Running, Waiting: q.Waiting, Keys: q.Keys, StartedInPeriod: q.StartedInPeriod,
			ConfiguredBy: q.ConfiguredBy}
		if q.Limits.Rate > 0 {
			v.Per = q.Limits.Per.String()
		}
		if !q.OldestPending.IsZero() {
			t := q.OldestPending.UTC()
			v.OldestPending = &t
		}
		if !q.ConfiguredAt.IsZero() {
			t := q.ConfiguredAt.UTC()
			v.ConfiguredAt = &t
		}
		out = append(out, v)
	}
	if o.json {
		return c.writeJSON(out)
	}
	if len(out) == 0 {
		fmt.Fprintln(c.stdout, "no queues")
		return nil
	}
	t := c.table("QUEUE", "LIMITS", "PENDING", "RUNNING", "WAITING", "KEYS", "OLDEST PENDING", "STARTED IN PERIOD", "CONFIGURED BY")
	for i, q := range qs {
		oldest := "-"
		if p := out[i].OldestPending; p != nil {
			oldest = fmt.Sprintf("%s (%s ago)", p.Format(time.RFC3339), time.Since(*p).Round(time.Second))
		}
		started := "-"
		if q.Limits.Rate > 0 {
			started = fmt.Sprintf("%d of %d in %s", q.StartedInPeriod, q.Limits.Rate, q.Limits.Per)
		}
		t.row(q.Limits.Name, q.Limits.String(), fmt.Sprint(q.Pending), fmt.Sprint(q.Running), fmt.Sprint(q.Waiting), fmt.Sprint(q.Keys),
			oldest, started, orDash(q.ConfiguredBy))
	}
	return t.flush()
}
