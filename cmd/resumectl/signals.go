package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"time"

	"github.com/resumegen/resumegen/runtime/journal"
	"github.com/resumegen/resumegen/runtime/resume"
)

// signalFlags are runs signal's own flags.
func signalFlags(fs *flag.FlagSet) {
	fs.Bool("unawaited", false, "keep the signal even though the run's version never awaits its name (for a run that will move to a version that does)")
}

// signalOptions are the engine's options runs signal's flags set.
func signalOptions(o *options) resume.SignalOptions {
	return resume.SignalOptions{Unawaited: flagValue(o.fs, "unawaited") == "true"}
}

// keptJSON is a signal sent to a run that no await has consumed yet.
type keptJSON struct {
	Name    string          `json:"name"`
	Seq     int64           `json:"seq"`
	SentAt  time.Time       `json:"sent_at"`
	Payload json.RawMessage `json:"payload"`
}

// keptSignals lists the signals sent to the run that no await consumed:
// kept for an await to come, or for one that never comes.
func keptSignals(ctx context.Context, j journal.Journal, runID string) ([]keptJSON, error) {
	all, err := j.ListSignals(ctx, runID)
	if err != nil {
		return nil, fmt.Errorf("run %s: signals: %w", runID, err)
	}
	var out []keptJSON
	for _, s := range all {
		if s.ConsumedKey == "" {
			out = append(out, keptJSON{Name: s.Name, Seq: s.Seq, SentAt: s.SentAt, Payload: storedJSON(s.Payload)})
		}
	}
	return out, nil
}

// printKeptSignals prints the signals kept for the run, if any.
func (c *cli) printKeptSignals(kept []keptJSON) {
	if len(kept) == 0 {
		return
	}
	fmt.Fprintln(c.stdout)
	fmt.Fprintln(c.stdout, "Signals kept, not yet consumed by an await:")
	t := c.table("SEQ", "NAME", "SENT (UTC)", "PAYLOAD")
	for _, s := range kept {
		t.row(fmt.Sprint(s.Seq), s.Name, stamp(s.SentAt), preview(string(s.Payload), 60))
	}
	t.flush()
}
