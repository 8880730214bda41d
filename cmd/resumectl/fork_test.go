package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestForkFailed: runs fork starts a new run from a failed run's journal
// up to -from, on both journals: the steps before it are copied and never
// execute again, the new run (given its own input) executes from -from
// once a program resumes it, the fork is recorded on both runs, the same
// -id returns the same run, and a fork without -from, from a step the run
// did not journal, or onto another run's id is refused.
func TestForkFailed(t *testing.T) {
	backends(t, func(t *testing.T, e env) {
		e.mustExample(onboardBin, "r1", 1, "-fail", "ScoreAll")
		e.mustExample(onboardBin, "r2", 0)
		_, before := e.show("r1")
		if code, _, stderr := e.ctl("runs", "fork", "r1"); code != exitUsage || !strings.Contains(stderr, "-from") {
			t.Errorf("runs fork without -from: exit %d, %q; want a usage error naming -from", code, stderr)
		}
		e.refused("did not journal", "runs", "fork", "r1", "-from", "Nope")
		e.refused("r2", "runs", "fork", "r1", "-from", "ScoreAll", "-id", "r2")
		e.unchanged("r1", before)

		fork := "r1~fork1"
		input := `[{"CustomerID":"` + fork + `"}]`
		out := e.mustCtl("runs", "fork", "r1", "-from", "ScoreAll", "-input", input)
		if !strings.Contains(out, fork) || !strings.Contains(out, "does not execute workflows") {
			t.Errorf("runs fork said %q", out)
		}
		runs := e.list()
		if runs[fork].Status != "pending" || runs["r1"].Status != "failed" {
			t.Fatalf("after the fork: %s is %q, r1 %q; want pending and failed", fork, runs[fork].Status, runs["r1"].Status)
		}
		var again actionJSON
		if err := json.Unmarshal([]byte(e.mustCtl("runs", "fork", "r1", "-from", "ScoreAll", "-input", input, "-id", fork, "-json")), &again); err != nil {
			t.Fatal(err)
		}
		if again.RunID != fork || again.From != "r1" || strings.Join(again.Steps, ",") != "FetchRecords" {
			t.Errorf("the same fork again: %+v; want %s from r1 with FetchRecords copied", again, fork)
		}
		e.mustExample(onboardBin, fork, 0)
		r := e.report(fork)
		if r.Status != "succeeded" {
			t.Fatalf("the fork after resume: %s, want succeeded", r.Status)
		}
		wantExecutions(t, r, map[string]int{"FetchRecords": 0, "ScoreAll": 1, "WriteScores": 1, "MarkComplete": 1})
		for id, want := range map[string]string{"r1": "forked to " + fork + " from ScoreAll", fork: "forked from r1 at ScoreAll"} {
			var s struct {
				Actions []actionRecordJSON `json:"actions"`
			}
			if err := json.Unmarshal([]byte(e.mustCtl("runs", "show", id, "-json")), &s); err != nil {
				t.Fatal(err)
			}
			if len(s.Actions) != 1 || s.Actions[0].Action != "fork" || s.Actions[0].Detail != want || s.Actions[0].Via != "resumectl" || s.Actions[0].By == "" {
				t.Errorf("run %s's actions %+v; want one fork, %q, by the user via resumectl", id, s.Actions, want)
			}
		}
	})
}
