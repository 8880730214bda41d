package main

import (
	"errors"
	"fmt"
	"time"

	"github.com/resumegen/resumegen/runtime/journal"
)

// scheduleJSON is a schedule as schedules list -json carries it.
type scheduleJSON struct {
	Name         string     `json:"name"`
	Workflow     string     `json:"workflow"`
	Spec         string     `json:"spec"`
	Missed       string     `json:"missed"`
	CatchUpLimit int        `json:"catch_up_limit"`
	LastTick     *time.Time `json:"last_tick"` // null before the first
	NextTick     time.Time  `json:"next_tick"`
	// LastRun is the run of the last tick, NAME@TICK ("" before the first
	// tick), and LastRunStatus its status ("" when the journal no longer
	// holds it).
	LastRun       string    `json:"last_run"`
	LastRunStatus string    `json:"last_run_status"`
	UpdatedAt     time.Time `json:"updated_at"`
}

// schedulesList prints every schedule stored in the journal (see
// resume.Engine.Schedule), reading only.
func schedulesList(c *cli, o *options, args []string) error {
	if err := wantArgs(args); err != nil {
		return err
	}
	j, err := c.openReadOnly(o)
	if err != nil {
		return err
	}
	defer j.Close()
	rows, err := j.ListSchedules(c.ctx)
	if err != nil {
		return err
	}
	out := []scheduleJSON{}
	for _, r := range rows {
		s, err := c.scheduleJSON(j, r)
		if err != nil {
			return err
		}
		out = append(out, s)
	}
	if o.json {
		return c.writeJSON(out)
	}
	if len(out) == 0 {
		fmt.Fprintln(c.stdout, "no schedules")
		return nil
	}
	t := c.table("NAME", "WORKFLOW", "SPEC", "MISSED", "LAST TICK", "NEXT TICK", "LAST RUN")
	for _, s := range out {
		last, status := "-", orDash(s.LastRunStatus)
		if s.LastTick != nil {
			last = s.LastTick.Format(time.RFC3339)
			if s.LastRunStatus == "" {
				status = "(not in the journal)"
			}
		}
		t.row(s.Name, shortName(s.Workflow), s.Spec, missedText(s), last, s.NextTick.Format(time.RFC3339), c.paint(statusColor(status), status))
	}
	return t.flush()
}

// scheduleJSON reads the status of the schedule's last run.
func (c *cli) scheduleJSON(j journal.Journal, r journal.ScheduleRecord) (scheduleJSON, error) {
	s := scheduleJSON{Name: r.Name, Workflow: r.Workflow, Spec: r.Spec, Missed: r.Missed, CatchUpLimit: r.CatchUpLimit,
		NextTick: r.NextTick.UTC(), UpdatedAt: r.UpdatedAt}
	if r.LastTick.IsZero() {
		return s, nil
	}
	last := r.LastTick.UTC()
	s.LastTick, s.LastRun = &last, r.Name+"@"+last.Format(time.RFC3339)
	run, _, err := j.LoadRun(c.ctx, s.LastRun)
	switch {
	case errors.Is(err, journal.ErrRunNotFound):
	case err != nil:
		return s, fmt.Errorf("schedule %s: read its last run %s: %w", r.Name, s.LastRun, err)
	default:
		s.LastRunStatus = statusText(run)
	}
	return s, nil
}

// missedText is the policy as people read it: catch-up says its limit.
func missedText(s scheduleJSON) string {
	if s.Missed == "catch_up" {
		return fmt.Sprintf("catch_up (%d)", s.CatchUpLimit)
	}
	return s.Missed
}
