package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/resumegen/resumegen/internal/pgtest"
)

// The tests run the real resumectl binary against journals written by the
// real example binary (examples/onboard), on SQLite and on PostgreSQL.

var (
	ctlBin     string // resumectl, built by TestMain
	onboardBin string // the example as committed, built by TestMain
	binDir     string
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "resumectl-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binDir = dir
	ctlBin, onboardBin = filepath.Join(dir, "resumectl"), filepath.Join(dir, "onboard")
	code := 1
	if err := goCmd("", "build", "-o", ctlBin, "."); err != nil {
		fmt.Fprintln(os.Stderr, err)
	} else if err := goCmd("", "build", "-o", onboardBin, "../../examples/onboard"); err != nil {
		fmt.Fprintln(os.Stderr, err)
	} else {
		code = m.Run()
	}
	os.RemoveAll(dir)
	os.Exit(code)
}

func goCmd(dir string, args ...string) error {
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, b)
	}
	return nil
}

// backends runs f once per journal: a SQLite file and a fresh PostgreSQL
// database.
func backends(t *testing.T, f func(t *testing.T, e env)) {
	for _, b := range []string{"sqlite", "postgres"} {
		t.Run(b, func(t *testing.T) {
			dir := t.TempDir()
			e := env{t: t, dir: dir, db: filepath.Join(dir, "journal.db")}
			if b == "postgres" {
				e.db = pgtest.FreshDatabase(t)
			}
			f(t, e)
		})
	}
}

// env is one journal and the worlds of its runs.
type env struct {
	t   *testing.T
	dir string
	db  string
}

// exitCode returns the exit status of a finished command, -9 for SIGKILL.
func exitCode(t *testing.T, err error) int {
	t.Helper()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &exit):
		if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL {
			return -9
		}
		return exit.ExitCode()
	}
	t.Fatalf("run: %v", err)
	return 0
}

// example runs the example binary bin on run id with its own world.
//
// On PostgreSQL the example's lease is 1 s, and a run that a killed
// example's lease still holds ("run is busy") is tried again for up to
// 10 s: no session proves a process dead there, so its lease is waited
// out (issue 19).
func (e env) example(bin, id string, extra ...string) (int, string) {
	e.t.Helper()
	args := []string{"-db", e.db, "-run", id, "-world", filepath.Join(e.dir, "world-"+id)}
	postgres := strings.HasPrefix(e.db, "postgres")
	if postgres {
		args = append(args, "-lease", "1s")
	}
	args = append(args, extra...)
	for end := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		b, err := exec.Command(bin, args...).CombinedOutput()
		code := exitCode(e.t, err)
		if !postgres || code != 1 || !strings.Contains(string(b), "run is busy") || time.Now().After(end) {
			return code, string(b)
		}
	}
}

// mustExample runs the example and checks its exit status.
func (e env) mustExample(bin, id string, want int, extra ...string) {
	e.t.Helper()
	if code, out := e.example(bin, id, extra...); code != want {
		e.t.Fatalf("onboard -run %s %v exited %d, want %d\n%s", id, extra, code, want, out)
	}
}

// report is what the example's -report prints.
type report struct {
	Status     string         `json:"status"`
	Executions map[string]int `json:"executions"`
	Emails     map[string]int `json:"emails"`
}

func (e env) report(id string) report {
	e.t.Helper()
	code, out := e.example(onboardBin, id, "-report")
	var r report
	if code != 0 || json.Unmarshal([]byte(out), &r) != nil {
		e.t.Fatalf("report %s: exit %d\n%s", id, code, out)
	}
	return r
}

// ctl runs resumectl with -db last (flags after arguments must work) in
// dir, or the current directory.
func (e env) ctlIn(dir string, args ...string) (code int, stdout, stderr string) {
	e.t.Helper()
	cmd := exec.Command(ctlBin, append(args, "-db", e.db)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "RESUME_DB=", "NO_COLOR=")
	var o, s bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &s
	err := cmd.Run()
	return exitCode(e.t, err), o.String(), s.String()
}

func (e env) ctl(args ...string) (int, string, string) {
	e.t.Helper()
	return e.ctlIn("", args...)
}

// mustCtl runs resumectl and fails the test unless it exits 0.
func (e env) mustCtl(args ...string) string {
	e.t.Helper()
	code, out, errOut := e.ctl(args...)
	if code != 0 {
		e.t.Fatalf("resumectl %v exited %d\nstdout: %s\nstderr: %s", args, code, out, errOut)
	}
	return out
}

// refused runs resumectl, wants exit 1 with one line on stderr containing
// want, and returns that line.
func (e env) refused(want string, args ...string) {
	e.t.Helper()
	code, out, errOut := e.ctl(args...)
	if code != 1 {
		e.t.Errorf("resumectl %v exited %d, want 1 (refused)\nstdout: %s\nstderr: %s", args, code, out, errOut)
		return
	}
	if lines := strings.Split(strings.TrimSpace(errOut), "\n"); len(lines) != 1 || !strings.Contains(errOut, want) {
		e.t.Errorf("resumectl %v: stderr %q, want one line containing %q", args, errOut, want)
	}
}

// listed is runs list -json.
type listed struct {
	RunID         string    `json:"run_id"`
	Workflow      string    `json:"workflow"`
	Version       string    `json:"version"`
	Status        string    `json:"status"`
	AttentionKind string    `json:"attention_kind"`
	AttentionStep string    `json:"attention_step"`
	CurrentStep   string    `json:"current_step"`
	Attempts      int       `json:"attempts"`
	CreatedAt     time.Time `json:"created_at"`
	UpdatedAt     time.Time `json:"updated_at"`
}

func (e env) list(args ...string) map[string]listed {
	e.t.Helper()
	var rs []listed
	out := e.mustCtl(append([]string{"runs", "list", "-json"}, args...)...)
	if err := json.Unmarshal([]byte(out), &rs); err != nil {
		e.t.Fatalf("runs list -json: %v\n%s", err, out)
	}
	m := map[string]listed{}
	for _, r := range rs {
		m[r.RunID] = r
	}
	return m
}

// shown is runs show -json.
type shown struct {
	Run   listed `json:"run"`
	Error string `json:"error"`
	Steps []struct {
		StepKey    string          `json:"step_key"`
		Status     string          `json:"status"`
		Attempt    int             `json:"attempt"`
		Result     json.RawMessage `json:"result"`
		Error      string          `json:"error"`
		DurationMS *float64        `json:"duration_ms"`
	} `json:"steps"`
	VersionChange *struct {
		From string `json:"from"`
		To   string `json:"to"`
		Diff []struct {
			Op   string `json:"op"`
			Step string `json:"step"`
		} `json:"diff"`
	} `json:"version_change"`
}

func (e env) show(id string) (shown, string) {
	e.t.Helper()
	out := e.mustCtl("runs", "show", id, "-json")
	var s shown
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		e.t.Fatalf("runs show -json: %v\n%s", err, out)
	}
	return s, out
}

// unchanged fails when run id's journal moved since before.
func (e env) unchanged(id, before string) {
	e.t.Helper()
	_, after := e.show(id)
	strip := func(s string) string {
		var lines []string
		for _, l := range strings.Split(s, "\n") {
			if !strings.Contains(l, `"age_seconds"`) {
				lines = append(lines, l)
			}
		}
		return strings.Join(lines, "\n")
	}
	if strip(before) != strip(after) {
		e.t.Errorf("run %s changed after a refused command:\nbefore %s\nafter %s", id, before, after)
	}
}

func wantExecutions(t *testing.T, r report, want map[string]int) {
	t.Helper()
	for step, n := range want {
		if r.Executions[step] != n {
			t.Errorf("%s executed %d times, want %d (all: %v)", step, r.Executions[step], n, r.Executions)
		}
	}
}

func TestParkedOnceResolved(t *testing.T) {
	backends(t, func(t *testing.T, e env) {
		e.mustExample(onboardBin, "r1", -9, "-crash", "NotifyOwner:effect")
		e.mustExample(onboardBin, "r1", 3)

		out := e.mustCtl("runs", "list")
		if !strings.Contains(out, "r1") || !strings.Contains(out, "needs_attention (step)") || !strings.Contains(out, "NotifyOwner") {
			t.Errorf("runs list does not show r1 parked at NotifyOwner:\n%s", out)
		}
		if r := e.list()["r1"]; r.Status != "needs_attention" || r.AttentionKind != "step" || r.CurrentStep != "NotifyOwner" {
			t.Errorf("runs list -json r1 = %+v, want needs_attention, kind step, at NotifyOwner", r)
		}
		human := e.mustCtl("runs", "show", "r1")
		if !regexpLine(human, `^4\s+NotifyOwner\s+in_flight\s+1\s`) || !strings.Contains(human, "resumectl runs resolve r1 NotifyOwner -done") {
			t.Errorf("runs show r1 does not show NotifyOwner in flight:\n%s", human)
		}
		s, before := e.show("r1")
		if last := s.Steps[len(s.Steps)-1]; last.StepKey != "NotifyOwner" || last.Status != "in_flight" || len(s.Steps) != 4 {
			t.Errorf("runs show -json steps = %+v, want 4 ending with NotifyOwner in_flight", s.Steps)
		}

		// Refusals change nothing.
		e.refused("not in_flight", "runs", "resolve", "r1", "FetchRecords", "-done")
		e.refused("run not found", "runs", "resolve", "nope", "NotifyOwner", "-done")
		e.refused("step not found", "runs", "resolve", "r1", "Nope", "-redo")
		e.refused("not stopped on a version change", "runs", "accept-version", "r1")
		e.refused("not failed", "runs", "retry", "r1")
		e.unchanged("r1", before)
		if code, _, _ := e.ctl("runs", "resolve", "r1", "NotifyOwner"); code != 2 {
			t.Errorf("resolve without -done or -redo exited %d, want 2", code)
		}
		if code, _, _ := e.ctl("runs", "resolve", "r1", "NotifyOwner", "-done", "-result", "{nope"); code != 2 {
			t.Errorf("resolve with a -result that is not JSON exited %d, want 2", code)
		}
		// NotifyOwner returns only an error: it journals null, nothing else.
		e.refused("journals nothing but null", "runs", "resolve", "r1", "NotifyOwner", "-done", "-result", `{"x":1}`)
		e.unchanged("r1", before)

		out = e.mustCtl("runs", "resolve", "r1", "NotifyOwner", "-done")
		if !strings.Contains(out, "pending") || !strings.Contains(out, "does not execute workflows") {
			t.Errorf("resolve -done said %q", out)
		}
		e.refused("not needs_attention", "runs", "resolve", "r1", "NotifyOwner", "-done")
		e.mustExample(onboardBin, "r1", 0)
		r := e.report("r1")
		wantExecutions(t, r, map[string]int{"FetchRecords": 1, "ScoreAll": 1, "WriteScores": 1, "NotifyOwner": 3, "MarkComplete": 1})
		if r.Status != "succeeded" || r.Emails["alice@example.com"] != 1 || len(r.Emails) != 3 {
			t.Errorf("after -done: status %s, emails %v; want succeeded, one email each to 3 owners", r.Status, r.Emails)
		}

		// Redo, in another run: exactly one more execution.
		e.mustExample(onboardBin, "r2", -9, "-crash", "NotifyOwner:effect")
		e.mustExample(onboardBin, "r2", 3)
		e.mustCtl("runs", "resolve", "r2", "NotifyOwner", "-redo")
		e.mustExample(onboardBin, "r2", 0)
		r = e.report("r2")
		wantExecutions(t, r, map[string]int{"NotifyOwner": 4, "MarkComplete": 1})
		if r.Status != "succeeded" || r.Emails["alice@example.com"] != 2 {
			t.Errorf("after -redo: status %s, emails %v; want succeeded, alice twice", r.Status, r.Emails)
		}

		// A run a live process holds.
		slow := exec.Command(onboardBin, "-db", e.db, "-run", "r3", "-world", filepath.Join(e.dir, "world-r3"), "-step-delay", "400ms")
		if err := slow.Start(); err != nil {
			t.Fatal(err)
		}
		var waitOnce sync.Once
		wait := func() { waitOnce.Do(func() { _ = slow.Wait() }) }
		defer wait()
		deadline := time.Now().Add(20 * time.Second)
		for e.list()["r3"].Status != "running" {
			if time.Now().After(deadline) {
				t.Fatal("r3 never ran")
			}
			time.Sleep(50 * time.Millisecond)
		}
		e.refused("is running", "runs", "resolve", "r3", "FetchRecords", "-done")
		e.refused("is running", "runs", "cancel", "r3")
		wait()
		if st := e.list()["r3"].Status; st != "succeeded" {
			t.Errorf("r3 after the refusals: %s, want succeeded", st)
		}
	})
}

func TestRetryFailed(t *testing.T) {
	backends(t, func(t *testing.T, e env) {
		e.mustExample(onboardBin, "r1", 1, "-fail", "ScoreAll")
		if r := e.list("-status", "failed")["r1"]; r.Status != "failed" || r.CurrentStep != "ScoreAll" {
			t.Fatalf("runs list -status failed: r1 = %+v, want failed at ScoreAll", r)
		}
		out := e.mustCtl("runs", "retry", "r1")
		if !strings.Contains(out, "ScoreAll") || !strings.Contains(out, "does not execute workflows") {
			t.Errorf("retry said %q", out)
		}
		if st := e.list()["r1"].Status; st != "pending" {
			t.Errorf("after retry: %s, want pending", st)
		}
		e.refused("not failed", "runs", "retry", "r1")
		e.mustExample(onboardBin, "r1", 0)
		r := e.report("r1")
		if r.Status != "succeeded" {
			t.Errorf("after retry and resume: %s, want succeeded", r.Status)
		}
		// Only the failed step executed again.
		wantExecutions(t, r, map[string]int{"FetchRecords": 1, "ScoreAll": 2, "WriteScores": 1, "NotifyOwner": 3, "MarkComplete": 1})
	})
}

func TestJSONAndCancel(t *testing.T) {
	backends(t, func(t *testing.T, e env) {
		e.mustExample(onboardBin, "ok", 0)
		e.mustExample(onboardBin, "bad", 1, "-fail", "WriteScores")

		// list: the table and -json carry the same facts.
		runs := e.list()
		if len(runs) != 2 {
			t.Fatalf("runs list -json: %v, want 2 runs", runs)
		}
		table := e.mustCtl("runs", "list")
		for id, r := range runs {
			pattern := fmt.Sprintf(`^%s\s+onboard\.Onboard\s+%s\s+%s\s+%s\s+%d\s+\S+$`, id, r.Version, r.Status, r.CurrentStep, r.Attempts)
			if !regexpLine(table, pattern) {
				t.Errorf("runs list has no row %q:\n%s", pattern, table)
			}
			if !strings.HasSuffix(r.Workflow, "/examples/onboard.Onboard") || r.CreatedAt.IsZero() {
				t.Errorf("run %s: %+v", id, r)
			}
		}
		if runs["ok"].Status != "succeeded" || runs["ok"].CurrentStep != "MarkComplete" || runs["bad"].Status != "failed" || runs["bad"].CurrentStep != "WriteScores" {
			t.Errorf("runs = %+v", runs)
		}
		// show: the timeline and -json carry the same steps.
		s, _ := e.show("bad")
		human := e.mustCtl("runs", "show", "bad")
		if len(s.Steps) != 3 {
			t.Fatalf("show bad: %d steps, want 3", len(s.Steps))
		}
		for i, st := range s.Steps {
			if !regexpLine(human, fmt.Sprintf(`^%d\s+%s\s+%s\s+%d\s`, i+1, st.StepKey, st.Status, st.Attempt)) {
				t.Errorf("runs show has no row for %+v:\n%s", st, human)
			}
		}
		if w := s.Steps[2]; w.StepKey != "WriteScores" || w.Status != "failed" || !strings.Contains(w.Error, "injected") || !strings.Contains(human, "error: WriteScores: failure injected") {
			t.Errorf("show bad: last step %+v\n%s", w, human)
		}
		if s.Steps[0].Status != "succeeded" || len(s.Steps[0].Result) == 0 || s.Steps[0].DurationMS == nil {
			t.Errorf("show bad: first step %+v, want succeeded with a result and a duration", s.Steps[0])
		}

		// Filters.
		if got := e.list("-status", "failed,cancelled"); len(got) != 1 || got["bad"].RunID == "" {
			t.Errorf("-status failed,cancelled: %v", got)
		}
		if got := e.list("-workflow", "onboard.Onboard", "-since", "1h"); len(got) != 2 {
			t.Errorf("-workflow onboard.Onboard -since 1h: %d runs, want 2", len(got))
		}
		if got := e.list("-workflow", "Other"); len(got) != 0 {
			t.Errorf("-workflow Other: %v", got)
		}
		if got := e.list("-version", runs["ok"].Version); len(got) != 2 {
			t.Errorf("-version: %d runs, want 2", len(got))
		}

		// cancel.
		_, before := e.show("ok")
		e.refused("already succeeded", "runs", "cancel", "ok")
		e.unchanged("ok", before)
		e.refused("run not found", "runs", "cancel", "nope")
		e.refused("run not found", "runs", "show", "nope")
		out := e.mustCtl("runs", "cancel", "bad", "-json")
		var a struct{ RunID, Status string }
		if err := json.Unmarshal([]byte(out), &a); err != nil || a.Status != "cancelled" {
			t.Errorf("cancel -json: %q (%v)", out, err)
		}
		if st := e.list()["bad"].Status; st != "cancelled" {
			t.Errorf("after cancel: %s", st)
		}
		e.mustExample(onboardBin, "bad", 1) // a cancelled run does not execute
		wantExecutions(t, e.report("bad"), map[string]int{"WriteScores": 1, "NotifyOwner": 0})
	})
}

func TestBadInvocations(t *testing.T) {
	e := env{t: t, dir: t.TempDir()}
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"runs", "list", "-db", "postgres://nobody@127.0.0.1:1/x"}, 1, "127.0.0.1:1"},
		{[]string{"runs", "list", "-db", filepath.Join(e.dir, "missing.db")}, 1, "missing.db"},
		{[]string{"runs", "list", "-db", ""}, 2, "no database"},
		{[]string{"runs", "list", "-status", "bogus", "-db", "x"}, 2, "bogus"},
		{[]string{"runs", "frobnicate"}, 2, "unknown command"},
		{[]string{"runs", "show", "-db", "x"}, 2, "want 1 argument"},
	} {
		cmd := exec.Command(ctlBin, tc.args...)
		cmd.Env = append(os.Environ(), "RESUME_DB=")
		var o, s bytes.Buffer
		cmd.Stdout, cmd.Stderr = &o, &s
		code := exitCode(t, cmd.Run())
		if code != tc.code || !strings.Contains(s.String(), tc.want) {
			t.Errorf("resumectl %v: exit %d, stderr %q; want %d and %q", tc.args, code, s.String(), tc.code, tc.want)
		}
		if first, _, _ := strings.Cut(s.String(), "\n"); tc.code == 1 && strings.TrimSpace(s.String()) != first {
			t.Errorf("resumectl %v: stderr has more than one line: %q", tc.args, s.String())
		}
		if o.Len() != 0 {
			t.Errorf("resumectl %v wrote to stdout: %q", tc.args, o.String())
		}
	}
	// RESUME_DB stands in for -db.
	db := filepath.Join(e.dir, "journal.db")
	e.db = db
	e.mustExample(onboardBin, "r1", 0)
	cmd := exec.Command(ctlBin, "runs", "list")
	cmd.Env = append(os.Environ(), "RESUME_DB="+db)
	if out, err := cmd.Output(); err != nil || !strings.Contains(string(out), "r1") {
		t.Errorf("RESUME_DB: %v\n%s", err, out)
	}
}

// regexpLine reports whether a line of text matches pattern.
func regexpLine(text, pattern string) bool {
	re := regexp.MustCompile(pattern)
	for _, l := range strings.Split(text, "\n") {
		if re.MatchString(strings.TrimRight(l, " ")) {
			return true
		}
	}
	return false
}

// A run a live process is executing is cancelled only with -running; the
// process then stops at its next step instead of finishing the run.
func TestCancelRunning(t *testing.T) {
	backends(t, func(t *testing.T, e env) {
		// Every step takes 400ms: the run lasts seconds.
		cmd := exec.Command(onboardBin, "-db", e.db, "-run", "slow", "-world", filepath.Join(e.dir, "world-slow"), "-step-delay", "400ms")
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		defer cmd.Process.Kill()
		// Until the example has created its database, resumectl refuses.
		journaled := func() bool {
			code, stdout, _ := e.ctl("runs", "list", "-json")
			return code == 0 && strings.Contains(stdout, `"current_step": "`) && !strings.Contains(stdout, `"current_step": ""`)
		}
		for deadline := time.Now().Add(30 * time.Second); !journaled(); time.Sleep(50 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("the run journaled no step in 30s\n%s", out.String())
			}
		}

		_, before := e.show("slow")
		e.refused("add -running", "runs", "cancel", "slow")
		if st := e.list()["slow"].Status; st != "running" {
			t.Fatalf("after a refused cancel: %s, want running", st)
		}
		msg := e.mustCtl("runs", "cancel", "slow", "-running")
		if !strings.Contains(msg, "stops within a second") || !strings.Contains(msg, "is being cancelled") {
			t.Errorf("cancel -running said %q", msg)
		}
		select {
		case err := <-exited:
			if code := exitCode(t, err); code != 1 || !strings.Contains(out.String(), "cancelled") {
				t.Errorf("the cancelled run's process exited %d, want 1 saying it was cancelled\n%s", code, out.String())
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("the process running the cancelled run did not stop within 30s\n%s", out.String())
		}
		if st := e.list()["slow"].Status; st != "cancelled" {
			t.Errorf("after cancel -running: %s, want cancelled", st)
		}
		if r := e.report("slow"); r.Executions["MarkComplete"] != 0 {
			t.Errorf("the cancelled run went on to its last step: %v (journal before cancel:\n%s)", r.Executions, before)
		}
	})
}
