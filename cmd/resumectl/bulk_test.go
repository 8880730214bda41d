package main

import (
	"bytes"
	"context"
	"encoding/json"
	"github.com/resumegen/resumegen/internal/runops"
	"github.com/resumegen/resumegen/internal/termesc"

	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// bulked is what a command acting by filter prints with -json.
type bulked struct {
	Action   string   `json:"action"`
	DryRun   bool     `json:"dry_run"`
	Selected []string `json:"selected"`
	Done     []string `json:"done"`
	Failed   []struct {
		RunID string `json:"run_id"`
		Error string `json:"error"`
	} `json:"failed"`
}

// state is every run and its journal as runs show -json prints them,
// without the ages that change as the clock goes on.
func (e env) state(ids ...string) string {
	e.t.Helper()
	var b strings.Builder
	for _, id := range ids {
		_, s := e.show(id)
		for _, l := range strings.Split(s, "\n") {
			if !strings.Contains(l, `"age_seconds"`) {
				b.WriteString(l + "\n")
			}
		}
	}
	return b.String()
}

// TestBulkRefusesUntilConfirmed proves that a filter changes nothing
// until it is confirmed: a dry run counts (and opens the journal
// read-only), a command without -yes and without a terminal refuses with
// exit status 2, a "no" at the terminal refuses, a status the action does
// not apply to is a usage error; then -yes retries every run selected and
// no other.
func TestBulkRefusesUntilConfirmed(t *testing.T) {
	backends(t, func(t *testing.T, e env) {
		ids := []string{"f1", "f2", "f3", "ok"}
		for _, id := range ids[:3] {
			e.mustExample(onboardBin, id, 1, "-fail", "ScoreAll")
		}
		e.mustExample(onboardBin, "ok", 0)
		before := e.state(ids...)
		var files string
		if !strings.Contains(e.db, "://") {
			files = snapshot(t, e.db)
		}
		unchanged := func(what string) {
			t.Helper()
			if after := e.state(ids...); after != before {
				t.Errorf("%s changed the journal:\nbefore %s\nafter %s", what, before, after)
			}
			if files != "" && snapshot(t, e.db) != files {
				t.Errorf("%s changed the SQLite file", what)
			}
		}

		out := e.mustCtl("runs", "retry", "-workflow", "onboard.Onboard", "-dry-run")
		if !strings.Contains(out, "dry run: retry would act on 3 run(s) of onboard.Onboard: f1, f2, f3") || !strings.Contains(out, "Nothing changed") {
			t.Errorf("dry run said %q", out)
		}
		out = e.mustCtl("runs", "retry", "-status", "failed", "-dry-run", "-json")
		var d bulked
		if err := json.Unmarshal([]byte(out), &d); err != nil || !d.DryRun || strings.Join(d.Selected, ",") != "f1,f2,f3" || len(d.Done) != 0 {
			t.Errorf("dry run -json: %+v (%v)\n%s", d, err, out)
		}
		unchanged("a dry run")

		code, out, errOut := e.ctl("runs", "retry", "-workflow", "Onboard")
		if code != 2 || !strings.Contains(errOut, "no terminal") || !strings.Contains(errOut, "-yes") || out != "" {
			t.Errorf("retry by filter without -yes nor a terminal: exit %d\nstdout %q\nstderr %q", code, out, errOut)
		}
		code, _, errOut = e.ctl("runs", "retry", "-status", "succeeded", "-yes")
		if code != 2 || !strings.Contains(errOut, "applies only to runs that are") {
			t.Errorf("retry -status succeeded: exit %d, %q; want 2", code, errOut)
		}
		code, _, errOut = e.ctl("runs", "retry", "f1", "-workflow", "Onboard")
		if code != 2 || !strings.Contains(errOut, "not both") {
			t.Errorf("retry ID -workflow: exit %d, %q; want 2", code, errOut)
		}
		code, _, errOut = e.ctl("runs", "accept-version", "-workflow", "Onboard", "-yes")
		if code != 2 || !strings.Contains(errOut, "-to V") {
			t.Errorf("accept-version by filter without -to: exit %d, %q; want 2", code, errOut)
		}
		for _, answer := range []string{"", "n\n", "no\n", "maybe\n"} {
			code, out, errOut := ctlAt(answer, "runs", "retry", "-workflow", "Onboard", "-db", e.db)
			if code != 1 || !strings.Contains(errOut, "retry 3 run(s) of onboard.Onboard? [y/N]") || !strings.Contains(errOut, "nothing changed") {
				t.Errorf("answer %q: exit %d\nstdout %q\nstderr %q", answer, code, out, errOut)
			}
		}
		unchanged("a refused command")

		code, out, errOut = ctlAt("y\n", "runs", "retry", "-workflow", "Onboard", "-version", e.list()["f1"].Version, "-db", e.db, "-json")
		if err := json.Unmarshal([]byte(out), &d); err != nil || code != 0 || strings.Join(d.Done, ",") != "f1,f2,f3" || len(d.Failed) != 0 {
			t.Fatalf("retry confirmed: exit %d, %+v (%v)\n%s%s", code, d, err, out, errOut)
		}
		for id, r := range e.list() {
			if want := map[bool]string{true: "succeeded", false: "pending"}[id == "ok"]; r.Status != want {
				t.Errorf("after the retry: %s is %s, want %s", id, r.Status, want)
			}
		}
		out = e.mustCtl("runs", "retry", "-workflow", "Onboard", "-yes")
		if !strings.Contains(out, "no run matches") {
			t.Errorf("a second retry said %q", out)
		}
	})
}

// ctlAt runs resumectl in this process as if at a terminal where the
// person types answer.
func ctlAt(answer string, args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	c := &cli{ctx: runops.WithActor(context.Background(), cliActor()), stdout: termesc.Writer(&out, false), stderr: termesc.Writer(&errb, false), now: time.Now,
		stdin: strings.NewReader(answer), tty: true}
	var cmd *command
	name := "runs " + args[1]
	for _, k := range commands() {
		if k.name == name {
			cmd = &k
		}
	}
	code := c.exec(cmd, args[2:], options{})
	return code, out.String(), errb.String()
}

// TestBulkReportsEachFailure: cancelling by filter while a live worker
// executes one of the runs cancels the others, names the one refused and
// why, and exits 1 with the counts.
func TestBulkReportsEachFailure(t *testing.T) {
	backends(t, func(t *testing.T, e env) {
		e.mustExample(onboardBin, "f1", 1, "-fail", "ScoreAll")
		e.mustExample(onboardBin, "f2", 1, "-fail", "WriteScores")
		cmd := exec.Command(onboardBin, "-db", e.db, "-run", "slow", "-world", filepath.Join(e.dir, "world-slow"), "-step-delay", "400ms")
		var slow bytes.Buffer
		cmd.Stdout, cmd.Stderr = &slow, &slow
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		defer func() { cmd.Process.Kill(); cmd.Wait() }()
		for deadline := time.Now().Add(30 * time.Second); e.list()["slow"].Status != "running"; time.Sleep(50 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("the slow run is not running after 30s\n%s", slow.String())
			}
		}
		code, out, errOut := e.ctl("runs", "cancel", "-workflow", "Onboard", "-yes")
		if code != 1 || !strings.Contains(out, "cancel: 2 of 3 run(s) done, 1 failed") {
			t.Errorf("cancel by filter: exit %d, stdout %q; want 1 and the counts", code, out)
		}
		if !strings.Contains(errOut, "run slow: cancel: run slow is running under") || !strings.Contains(errOut, "-running") || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
			t.Errorf("cancel by filter: stderr %q, want one line naming slow and -running", errOut)
		}
		runs := e.list()
		if runs["f1"].Status != "cancelled" || runs["f2"].Status != "cancelled" || runs["slow"].Status != "running" {
			t.Errorf("after a partial cancel: %+v", runs)
		}
	})
}
