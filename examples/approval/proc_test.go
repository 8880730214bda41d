package main

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/resumegen/resumegen/internal/pgtest"
	"github.com/resumegen/resumegen/runtime/journal"
)

// These tests drive the example as an operator would: real processes of
// it, killed with SIGKILL, and the real resumectl, on SQLite and (when a
// server is available; required under RESUME_REQUIRE_POSTGRES=1)
// PostgreSQL.

var bin, ctlBin string // the example and resumectl, built once by TestMain

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "approval-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	bin, ctlBin = filepath.Join(dir, "approval"), filepath.Join(dir, "resumectl")
	code := 1
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build: %v\n%s", err, out)
	} else if out, err := exec.Command("go", "build", "-o", ctlBin, "../../cmd/resumectl").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build resumectl: %v\n%s", err, out)
	} else {
		code = m.Run()
	}
	os.RemoveAll(dir)
	os.Exit(code)
}

// journals are the journals the tests run on: a place maker for each.
func journals(t *testing.T) map[string]func(t *testing.T) place {
	return map[string]func(t *testing.T) place{
		"sqlite": func(t *testing.T) place {
			dir := t.TempDir()
			return place{db: filepath.Join(dir, "journal.db"), world: dir}
		},
		"postgres": func(t *testing.T) place {
			return place{db: pgtest.FreshDatabase(t), world: t.TempDir()}
		},
	}
}

// TestDemo plays the narrated demo end to end, on each journal: it fails
// unless the killed run, approved with resumectl while no process ran,
// ended as its uninterrupted twin did, and the timed-out one paid nothing.
func TestDemo(t *testing.T) {
	for name, at := range journals(t) {
		t.Run(name, func(t *testing.T) {
			var out bytes.Buffer
			tl := tools{self: bin, ctl: ctlBin, out: &out}
			err := tl.narrate(context.Background(), func(string) place { return at(t) })
			if err != nil {
				t.Fatalf("%v\n%s", err, out.String())
			}
			for _, want := range []string{"(killed by SIGKILL)", "waiting (signal approval until", "does not fit what the run awaits",
				"woke the run", `{"status":"paid","by":"dana"`, `{"status":"timed out"}`, "Same outcome"} {
				if !strings.Contains(out.String(), want) {
					t.Errorf("the demo does not show %q:\n%s", want, out.String())
				}
			}
		})
	}
}

// killCase is one way a process working on the run dies.
type killCase struct {
	name        string
	crash       string // the process kills itself at STEP:POINT
	killWhile   string // the test kills it while the run waits for this (journal.WaitSleep, WaitSignal)
	signalWhile string // the decision is sent while the first process lives and the run waits for this (else once it died)
	decision    string
	remind      string         // the reminder's sleep (default 1s)
	extra       map[string]int // executions beyond the uninterrupted run's, that the step's policy allows
}

const (
	approve = `{"approved":true,"by":"dana"}`
	reject  = `{"approved":false,"by":"dana","note":"no receipt"}`
)

// TestKills kills the process working on the run at each waiting point
// (while it sleeps and awaits, as each wait is journaled, just after each
// wakes, in the payment), on each journal, the decision sent while the
// process lives or while none runs, and compares the resumed run with
// an uninterrupted one: same outcome, journal and world, but for a Pay
// executed again (with its idempotency key: paid once).
func TestKills(t *testing.T) {
	cases := []killCase{
		{name: "while awaiting, rejected while down", killWhile: journal.WaitSignal, decision: reject},
		{name: "while sleeping, approval kept for the await", killWhile: journal.WaitSleep, decision: approve},
		{name: "as it falls asleep", crash: "resume.Sleep:after", decision: approve},
		{name: "just after the sleep ends", crash: "Remind:before", decision: approve},
		{name: "as it starts awaiting", crash: "approval:after", decision: approve},
		{name: "just after a kept approval is taken", crash: "approval:after", signalWhile: journal.WaitSleep, decision: approve, remind: "3s"},
		{name: "just after the approval wakes it", crash: "Pay:before", signalWhile: journal.WaitSignal, decision: approve},
		{name: "after paying, before journaling it", crash: "Pay:effect", signalWhile: journal.WaitSignal, decision: approve, extra: map[string]int{"Pay": 1}},
		{name: "just after the rejection wakes it", crash: "Tell:before", signalWhile: journal.WaitSignal, decision: reject},
	}
	for name, at := range journals(t) {
		t.Run(name, func(t *testing.T) {
			twins := map[string]report{}
			for _, c := range cases {
				t.Run(c.name, func(t *testing.T) {
					if _, ok := twins[c.decision]; !ok {
						twin, err := tools{self: bin, ctl: ctlBin, out: &bytes.Buffer{}}.uninterrupted(context.Background(), at(t), c.decision)
						if err != nil {
							t.Fatal(err)
						}
						twins[c.decision] = twin
					}
					got := killAndResume(t, at(t), c)
					want := twins[c.decision]
					for step, n := range c.extra {
						want.World.Executions[step] += n
					}
					if err := sameAs(got, want); err != nil {
						t.Error(err)
					}
					for step, n := range c.extra {
						want.World.Executions[step] -= n
					}
				})
			}
		})
	}
}

// killAndResume plays c on p and returns what the run did once a new
// process finished it.
func killAndResume(t *testing.T, p place, c killCase) report {
	t.Helper()
	ctx := context.Background()
	var out bytes.Buffer
	tl := tools{self: bin, ctl: ctlBin, out: &out}
	defer func() {
		if t.Failed() {
			t.Logf("what happened:\n%s", out.String())
		}
	}()
	const run = "exp-42"
	flags := []string{"-remind", cmp.Or(c.remind, "1s")}
	pr, err := tl.start(ctx, p, run, append(flags, crashFlag(c.crash)...)...)
	if err != nil {
		t.Fatal(err)
	}
	if c.signalWhile != "" {
		if err := waitUntil(ctx, p, run, c.signalWhile, pr); err != nil {
			t.Fatal(err)
		}
		if err := tl.resumectl(ctx, p, "runs", "signal", run, "approval", c.decision); err != nil {
			t.Fatal(err)
		}
	}
	if c.killWhile != "" {
		if err := waitUntil(ctx, p, run, c.killWhile, pr); err != nil {
			t.Fatal(err)
		}
		if err := pr.kill(&out); err != nil {
			t.Fatal(err)
		}
	} else if _, killed, err := pr.wait(&out); err != nil || !killed {
		t.Fatalf("the process was not killed at %s: %v", c.crash, err)
	}
	if c.signalWhile == journal.WaitSleep {
		// The signal was kept while the run slept, and the await took it
		// before the process died.
		if r, err := tl.report(ctx, p, run); err != nil || !slices.Contains(r.Journal, "approval succeeded") {
			t.Fatalf("after the crash, the journal is %v (%v); want the approval taken", r.Journal, err)
		}
	}
	if c.signalWhile == "" {
		if err := tl.resumectl(ctx, p, "runs", "signal", run, "approval", c.decision); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := tl.finish(ctx, p, run, flags...); err != nil {
		t.Fatal(err)
	}
	r, err := tl.report(ctx, p, run)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func crashFlag(fault string) []string {
	if fault == "" {
		return nil
	}
	return []string{"-crash", fault}
}

// TestTellParksWhenItsEmailMayHaveLeft: the process dies after Tell's
// email left but before the journal recorded it. Tell is once, so the new
// process does not send it again: the run needs attention (exit 3). A
// person resolves the step done with resumectl, and a third process
// finishes the run; sam got one email.
func TestTellParksWhenItsEmailMayHaveLeft(t *testing.T) {
	for name, at := range journals(t) {
		t.Run(name, func(t *testing.T) {
			ctx, p := context.Background(), at(t)
			var out bytes.Buffer
			tl := tools{self: bin, ctl: ctlBin, out: &out}
			defer func() {
				if t.Failed() {
					t.Logf("what happened:\n%s", out.String())
				}
			}()
			const run = "exp-42"
			pr, err := tl.start(ctx, p, run, "-remind", "1s", "-crash", "Tell:effect")
			if err != nil {
				t.Fatal(err)
			}
			if err := waitUntil(ctx, p, run, journal.WaitSignal, pr); err != nil {
				t.Fatal(err)
			}
			if err := tl.resumectl(ctx, p, "runs", "signal", run, "approval", approve); err != nil {
				t.Fatal(err)
			}
			if _, killed, err := pr.wait(&out); err != nil || !killed {
				t.Fatalf("not killed at Tell:effect: %v", err)
			}
			last, err := tl.finish(ctx, p, run, "-remind", "1s")
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != 3 || !strings.Contains(last, "needs attention") {
				t.Fatalf("the resumed process: %q, %v; want exit 3, needs attention", last, err)
			}
			if err := tl.resumectl(ctx, p, "runs", "resolve", run, "Tell", "-done"); err != nil {
				t.Fatal(err)
			}
			if _, err := tl.finish(ctx, p, run, "-remind", "1s"); err != nil {
				t.Fatal(err)
			}
			r, err := tl.report(ctx, p, run)
			if err != nil {
				t.Fatal(err)
			}
			if r.Status != "succeeded" || r.World.Emails["sam@example.com"] != 1 || r.World.Payments != 1 || r.World.Executions["Tell"] != 1 {
				t.Errorf("run %s: %s %s, %s; want succeeded, paid once, sam told once", run, r.Status, r.Outcome, r.World.summary())
			}
		})
	}
}
