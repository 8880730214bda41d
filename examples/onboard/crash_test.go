package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// The crash matrix: a real process running the example is killed with
// SIGKILL at every point of every step, then resumed by a second process,
// and the outside world is counted.

var (
	binary    string // the example as committed, built once by TestMain
	generated string // the example regenerated from scratch by go generate in a fixture module
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "onboard-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "onboard")
	generated = filepath.Join(dir, "onboard-generated")
	err = build(binary)
	if err == nil {
		err = generateAndBuild(filepath.Join(dir, "fixture"), generated)
	}
	code := 1
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
	} else {
		code = m.Run()
	}
	os.RemoveAll(dir)
	os.Exit(code)
}

func build(out string) error {
	if b, err := exec.Command("go", "build", "-o", out, ".").CombinedOutput(); err != nil {
		return fmt.Errorf("build the example: %v\n%s", err, b)
	}
	return nil
}

// generateAndBuild copies the example's hand-written files (not its
// generated one) into a fresh module that requires this repository, runs
// the real resumegen through go generate there, and builds the result.
func generateAndBuild(dir, out string) error {
	repo, err := filepath.Abs("../..")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	gomod := "module example.com/onboardfixture\n\ngo 1.24\n\n" +
		"require github.com/resumegen/resumegen v0.0.0\n\n" +
		"replace github.com/resumegen/resumegen => " + repo + "\n\n" +
		"tool github.com/resumegen/resumegen/cmd/resumegen\n"
	files := map[string][]byte{"go.mod": []byte(gomod)}
	if files["go.sum"], err = os.ReadFile(filepath.Join(repo, "go.sum")); err != nil {
		return err
	}
	sources, err := filepath.Glob("*.go")
	if err != nil {
		return err
	}
	for _, f := range sources {
		if strings.HasSuffix(f, "_test.go") || strings.HasSuffix(f, "_resume.go") {
			continue
		}
		if files[f], err = os.ReadFile(f); err != nil {
			return err
		}
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			return err
		}
	}
	for _, args := range [][]string{
		{"mod", "tidy"},
		{"generate", "./..."},
		{"build", "-o", out, "."},
	} {
		cmd := exec.Command("go", args...)
		cmd.Dir = dir
		if b, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("fixture: go %s: %v\n%s", strings.Join(args, " "), err, b)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "onboard_resume.go")); err != nil {
		return fmt.Errorf("fixture: go generate wrote no onboard_resume.go: %w", err)
	}
	return nil
}

// proc runs the example binary with the run's flags and extra ones.
type proc struct {
	t      *testing.T
	dir    string // the world's files
	db     string // a SQLite file in dir or a PostgreSQL DSN
	binary string
}

func newProc(t *testing.T) proc {
	dir := t.TempDir()
	return proc{t: t, dir: dir, db: filepath.Join(dir, "journal.db"), binary: binary}
}

func (p proc) args(extra ...string) []string {
	return append([]string{"-db", p.db, "-run", "r1", "-world", p.dir}, extra...)
}

// run runs the example and returns its exit code, or -9 when SIGKILL ended it.
func (p proc) run(extra ...string) (code int, out string) {
	p.t.Helper()
	b, err := exec.Command(p.binary, p.args(extra...)...).CombinedOutput()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0, string(b)
	case errors.As(err, &exit):
		if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			if ws.Signal() != syscall.SIGKILL {
				p.t.Fatalf("killed by %v, want SIGKILL\n%s", ws.Signal(), b)
			}
			return -9, string(b)
		}
		return exit.ExitCode(), string(b)
	}
	p.t.Fatalf("run example: %v", err)
	return 0, ""
}

func (p proc) report() report {
	p.t.Helper()
	b, err := exec.Command(p.binary, p.args("-report")...).Output()
	if err != nil {
		p.t.Fatalf("report: %v", err)
	}
	var r report
	if err := json.Unmarshal(b, &r); err != nil {
		p.t.Fatalf("report: %v\n%s", err, b)
	}
	return r
}

func TestCrashMatrix(t *testing.T) {
	// want: executions of each step after the crash and one resume.
	cases := []struct {
		fault      string
		want       map[string]int
		wantStatus string
		calls      int // scoring service calls (charges are always 1)
	}{
		{"FetchRecords:before", execs(1, 1, 1, 3, 1), "succeeded", 1},
		{"FetchRecords:effect", execs(2, 1, 1, 3, 1), "succeeded", 1},
		{"FetchRecords:after", execs(1, 1, 1, 3, 1), "succeeded", 1},
		// default policy: at effect the step runs twice, the provider sees one key.
		{"ScoreAll:before", execs(1, 1, 1, 3, 1), "succeeded", 1},
		{"ScoreAll:effect", execs(1, 2, 1, 3, 1), "succeeded", 2},
		{"ScoreAll:after", execs(1, 1, 1, 3, 1), "succeeded", 1},
		// tx: the user's rows exist once whatever the point.
		{"WriteScores:before", execs(1, 1, 1, 3, 1), "succeeded", 1},
		{"WriteScores:effect", execs(1, 1, 2, 3, 1), "succeeded", 1},
		{"WriteScores:after", execs(1, 1, 1, 3, 1), "succeeded", 1},
		// once: at effect the run waits for a person with one execution.
		{"NotifyOwner:before", execs(1, 1, 1, 3, 1), "succeeded", 1},
		{"NotifyOwner:effect", execs(1, 1, 1, 1, 0), "needs_attention", 1},
		{"NotifyOwner:after", execs(1, 1, 1, 3, 1), "succeeded", 1},
		{"NotifyOwner#2:effect", execs(1, 1, 1, 2, 0), "needs_attention", 1},
		{"MarkComplete:before", execs(1, 1, 1, 3, 1), "succeeded", 1},
		{"MarkComplete:effect", execs(1, 1, 1, 3, 2), "succeeded", 1},
		{"MarkComplete:after", execs(1, 1, 1, 3, 1), "succeeded", 1},
	}
	for _, tc := range cases {
		for _, variant := range []string{"sqlite", "regenerated", "postgres"} {
			t.Run(variant+"/"+tc.fault, func(t *testing.T) {
				p := newProc(t)
				switch variant {
				case "regenerated":
					p.binary = generated
				case "postgres":
					p.db = freshDatabase(t)
				}
				t.Parallel()
				crashAndResume(t, p, tc.fault, tc.wantStatus, tc.want, tc.calls)
			})
		}
	}
}

// crashAndResume kills a process at fault, resumes the run in another, and
// checks the world.
func crashAndResume(t *testing.T, p proc, fault, wantStatus string, want map[string]int, calls int) {
	t.Helper()
	if code, out := p.run("-crash", fault); code != -9 {
		t.Fatalf("crash run exited %d, want SIGKILL\n%s", code, out)
	}
	wantCode := map[string]int{"succeeded": 0, "needs_attention": 3}[wantStatus]
	if code, out := p.run(); code != wantCode {
		t.Fatalf("resume exited %d, want %d\n%s", code, wantCode, out)
	}
	r := p.report()
	checkWorld(t, r, wantStatus, want, calls)
	if key := strings.TrimSuffix(fault, ":effect"); wantStatus == "needs_attention" && r.AttentionStep != key {
		t.Errorf("attention step = %q, want %q", r.AttentionStep, key)
	}
}

func checkWorld(t *testing.T, r report, status string, want map[string]int, calls int) {
	t.Helper()
	if r.Status != status {
		t.Errorf("status = %s, want %s", r.Status, status)
	}
	for step, n := range want {
		if r.Executions[step] != n {
			t.Errorf("%s executed %d times, want %d", step, r.Executions[step], n)
		}
	}
	if r.ScoringCalls != calls || r.Charges != 1 {
		t.Errorf("scoring service: %d calls, %d charges; want %d calls, 1 charge", r.ScoringCalls, r.Charges, calls)
	}
	if r.ScoreRows != 4 {
		t.Errorf("score rows = %d, want 4 (exactly once)", r.ScoreRows)
	}
	for to, n := range r.Emails {
		if n != 1 && !(to == "alice@example.com" && n == 2 && want["NotifyOwner"] == 4) {
			t.Errorf("%s got %d emails", to, n)
		}
	}
	if status == "succeeded" && len(r.Emails) != 3 {
		t.Errorf("emails went to %d owners, want 3", len(r.Emails))
	}
	if status == "succeeded" && r.Steps["ScoreAll"] != 1 {
		t.Errorf("resume_steps has %d ScoreAll rows, want 1", r.Steps["ScoreAll"])
	}
}

func TestResolveOnce(t *testing.T) {
	for _, tc := range []struct {
		db          string
		how         string
		notify      int // NotifyOwner executions in all
		aliceEmails int
	}{
		{"sqlite", "done", 3, 1}, // no second execution
		{"sqlite", "redo", 4, 2}, // exactly one more
		{"postgres", "done", 3, 1},
		{"postgres", "redo", 4, 2},
	} {
		t.Run(tc.db+"/"+tc.how, func(t *testing.T) {
			p := newProc(t)
			if tc.db == "postgres" {
				p.db = freshDatabase(t)
			}
			t.Parallel()
			if code, _ := p.run("-crash", "NotifyOwner:effect"); code != -9 {
				t.Fatal("no crash")
			}
			if code, out := p.run(); code != 3 {
				t.Fatalf("resume exited %d, want 3 (needs attention)\n%s", code, out)
			}
			if code, out := p.run("-resolve", "NotifyOwner:"+tc.how); code != 0 {
				t.Fatalf("resolve %s exited %d\n%s", tc.how, code, out)
			}
			r := p.report()
			checkWorld(t, r, "succeeded", execs(1, 1, 1, tc.notify, 1), 1)
			if r.Emails["alice@example.com"] != tc.aliceEmails {
				t.Errorf("alice got %d emails, want %d", r.Emails["alice@example.com"], tc.aliceEmails)
			}
			// Resolving again is refused: the step is no longer in flight.
			if code, _ := p.run("-resolve", "NotifyOwner:done"); code != 1 {
				t.Errorf("a second resolution exited %d, want 1", code)
			}
		})
	}
}

// TestRunTwice is the acceptance run: the same command twice, the
// first time killed before the last step.
func TestRunTwice(t *testing.T) {
	p := newProc(t)
	if code, _ := p.run("-crash", "MarkComplete:before"); code != -9 {
		t.Fatal("no crash")
	}
	if code, out := p.run(); code != 0 || !strings.Contains(out, "succeeded") {
		t.Fatalf("second run exited %d: %s", code, out)
	}
	r := p.report()
	checkWorld(t, r, "succeeded", execs(1, 1, 1, 3, 1), 1)
	// A third run of a finished run executes nothing.
	if code, _ := p.run(); code != 0 {
		t.Fatal("third run failed")
	}
	checkWorld(t, p.report(), "succeeded", execs(1, 1, 1, 3, 1), 1)
}

func TestDemo(t *testing.T) {
	var out strings.Builder
	if err := narrate(context.Background(), binary, &out); err != nil {
		t.Log(out.String())
		t.Fatal(err)
	}
}
