package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"strconv"
	"time"

	"github.com/resumegen/resumegen/internal/termesc"
	"github.com/resumegen/resumegen/runtime/journal"
)

func watchFlags(fs *flag.FlagSet) {
	fs.Duration("interval", 250*time.Millisecond, "how often to read the run")
}

// watchEvent is one line of runs watch -json: a step row that appeared or
// changed (Step), or the run's new status (Status).
type watchEvent struct {
	Run    string    `json:"run"`
	At     time.Time `json:"at"`
	Step   *stepJSON `json:"step,omitempty"`
	Status string    `json:"status,omitempty"`
	Error  string    `json:"error,omitempty"`
}

// runsWatch follows a run until it ends: it reads the run every -interval
// and prints each step row that appeared or changed and each change of the
// run's status. It returns when the run succeeded (exit 0), or failed, was
// cancelled or waits for a person (exit 1); a waiting run is followed on.
func runsWatch(c *cli, o *options, args []string) error {
	interval, _ := time.ParseDuration(flagValue(o.fs, "interval"))
	if interval <= 0 {
		return usagef("-interval must be positive")
	}
	j, runID, err := c.openRunReadOnly(o, args)
	if err != nil {
		return err
	}
	defer j.Close()
	w := &watcher{c: c, o: o, seen: map[string]string{}}
	for {
		r, steps, err := j.LoadRun(c.ctx, runID)
		if err != nil {
			return err
		}
		if err := w.show(r, steps); err != nil {
			return err
		}
		switch r.Status {
		case journal.StatusSucceeded:
			return nil
		case journal.StatusFailed, journal.StatusNeedsAttention:
			if !o.json {
				fmt.Fprintf(c.stderr, "resumectl runs watch: run %s is %s: resumectl runs show %s says why and what to run next\n", esc(runID), statusText(r), esc(shellArg(runID)))
			}
			return reported{exitFail}
		case journal.StatusCancelled:
			return reported{exitFail}
		}
		select {
		case <-c.ctx.Done():
			return fmt.Errorf("run %s: stopped watching: %w", runID, c.ctx.Err())
		case <-time.After(interval):
		}
	}
}

// watcher is what runs watch has printed so far.
type watcher struct {
	c      *cli
	o      *options
	seen   map[string]string // step key → its row as last printed
	status string
}

// show prints what changed since the last read of the run.
func (w *watcher) show(r journal.RunRecord, steps []journal.StepRecord) error {
	for _, s := range steps {
		sig := fmt.Sprintf("%s %d %d %v", s.Status, s.Attempt, len(s.History), s.FinishedAt)
		if w.seen[s.StepKey] == sig {
			continue
		}
		w.seen[s.StepKey] = sig
		if err := w.step(r, s); err != nil {
			return err
		}
	}
	st := statusText(r)
	if st == w.status {
		return nil
	}
	w.status = st
	if w.o.json {
		return w.line(watchEvent{Run: r.RunID, At: w.c.now().UTC(), Status: string(r.Status), Error: r.Error})
	}
	line := fmt.Sprintf("%s  run %s  %s", stamp(w.c.now()), esc(r.RunID), w.c.paint(statusColor(st), st))
	if r.Error != "" && r.Status != journal.StatusRunning {
		line += "  " + preview(oneLine(r.Error), 100)
	}
	_, err := fmt.Fprintln(w.c.stdout, line)
	return err
}

// line prints v as JSON on one line.
func (w *watcher) line(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = w.c.stdout.Write(append(termesc.JSON(b), '\n'))
	return err
}

// step prints one step row that appeared or changed.
func (w *watcher) step(r journal.RunRecord, s journal.StepRecord) error {
	if w.o.json {
		sj := stepRecordJSON(s, "")
		return w.line(watchEvent{Run: r.RunID, At: w.c.now().UTC(), Step: &sj})
	}
	what := ""
	switch s.Status {
	case journal.StepSucceeded:
		what = string(s.Result)
	case journal.StepFailed:
		what = "error: " + s.Error
	case journal.StepInFlight:
		what = "executing"
	}
	_, err := fmt.Fprintf(w.c.stdout, "%s  step %-3s %-24s %-10s attempt %s  %-8s %s\n", stamp(w.c.now()), strconv.FormatInt(s.Seq, 10),
		esc(s.StepKey), w.c.paint(statusColor(string(s.Status)), string(s.Status)), strconv.Itoa(s.Attempt),
		duration(s.StartedAt, s.FinishedAt), preview(what, 60))
	return err
}
