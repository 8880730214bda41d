package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"

	_ "modernc.org/sqlite" // the demo reads the journal with plain SQL
)

// demo narrates four scenes, each in a fresh folder: a crash at the last
// step and a resume, then each step guarantee at its dangerous point. Every
// crash is a real child process killing itself with SIGKILL.
func demo(ctx context.Context, out io.Writer) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	return narrate(ctx, self, out)
}

// narrate runs the demo's scenes with the example binary self.
func narrate(ctx context.Context, self string, out io.Writer) error {
	root, err := os.MkdirTemp("", "resumegen-demo-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(root)
	d := &narrator{ctx: ctx, out: out, self: self, root: root}

	d.scene("1. A run dies at its last step, and resumes",
		"Onboard runs FetchRecords, ScoreAll (paid), WriteScores, NotifyOwner (once per owner) and\n"+
			"MarkComplete. The process is killed just before MarkComplete, as an OOM kill would.")
	d.crashAndResume("last", "MarkComplete:before")
	d.show("last", expect{status: "succeeded", exec: execs(1, 1, 1, 3, 1), calls: 1, charges: 1, rows: 4, emailsEach: 1},
		"Nothing ran twice: one paid scoring call, one email per owner.")
	d.sql("last", `SELECT step_key, status, attempt FROM resume_steps WHERE run_id = 'last' ORDER BY seq`)

	d.scene("2. At least once, with an idempotency key (ScoreAll, the default policy)",
		"Killed after the scoring service answered but before the journal recorded it: the step\n"+
			"runs again on resume, with the same idempotency key, so the service does not charge twice.")
	d.crashAndResume("atleast", "ScoreAll:effect")
	d.show("atleast", expect{status: "succeeded", exec: execs(1, 2, 1, 3, 1), calls: 2, charges: 1, rows: 4, emailsEach: 1},
		"ScoreAll ran twice; the service saw 2 calls and charged once.")

	d.scene("3. Exactly once (WriteScores, tx)",
		"Killed after WriteScores inserted its rows but before they committed: the rows and the\n"+
			"journal row share one transaction, so the resume inserts them once.")
	d.crashAndResume("exactly", "WriteScores:effect")
	d.show("exactly", expect{status: "succeeded", exec: execs(1, 1, 2, 3, 1), calls: 1, charges: 1, rows: 4, emailsEach: 1},
		"WriteScores ran twice, but the scores table has each score once (4 rows).")

	d.scene("4. At most once (NotifyOwner, once)",
		"Killed after the first email left but before the journal recorded it. SMTP cannot say\n"+
			"whether it was delivered, so the resume does not guess: the run waits for a person.")
	d.crashAndResume("atmost", "NotifyOwner:effect")
	d.show("atmost", expect{status: "needs_attention", exec: execs(1, 1, 1, 1, 0), calls: 1, charges: 1, rows: 4, emailsEach: 1},
		"The run needs attention; alice got exactly one email.")
	d.say("A person looks at the outbox, sees the email to alice went out, and resolves the step as done:")
	d.child("atmost", "-resolve", "NotifyOwner:done")
	d.show("atmost", expect{status: "succeeded", exec: execs(1, 1, 1, 3, 1), calls: 1, charges: 1, rows: 4, emailsEach: 1},
		"Done: the run finished without sending alice a second email.")
	return d.err
}

// narrator runs the scenes and keeps the first error.
type narrator struct {
	ctx  context.Context
	out  io.Writer
	self string
	root string
	err  error
}

func (d *narrator) say(format string, args ...any) {
	if d.err == nil {
		fmt.Fprintf(d.out, format+"\n", args...)
	}
}

func (d *narrator) scene(title, text string) {
	d.say("\n== %s ==\n%s\n", title, text)
}

func (d *narrator) args(run string, extra ...string) []string {
	dir := filepath.Join(d.root, run)
	return append([]string{"-db", filepath.Join(dir, "journal.db"), "-run", run, "-outbox", filepath.Join(dir, "outbox")}, extra...)
}

// child runs the example in a child process and shows its output.
func (d *narrator) child(run string, extra ...string) (killed bool) {
	if d.err != nil {
		return false
	}
	if err := os.MkdirAll(filepath.Join(d.root, run), 0o755); err != nil {
		d.err = err
		return false
	}
	args := d.args(run, extra...)
	d.say("$ onboard %s", strings.Join(extra, " "))
	cmd := exec.CommandContext(d.ctx, d.self, args...)
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	err := cmd.Run()
	for _, l := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		if l != "" {
			d.say("  %s", l)
		}
	}
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL {
			d.say("  (killed by SIGKILL)")
			return true
		}
		if exit.ExitCode() == 3 {
			return false // needs attention: shown by the child
		}
	}
	if err != nil {
		d.err = fmt.Errorf("onboard %s: %w", strings.Join(args, " "), err)
	}
	return false
}

func (d *narrator) crashAndResume(run, fault string) {
	if !d.child(run, "-crash", fault) && d.err == nil {
		d.err = fmt.Errorf("run %s: the process was not killed at %s", run, fault)
		return
	}
	d.say("The process is gone. Running the same command again resumes the run:")
	d.child(run)
}

// expect is what a scene must have done to the world; the demo fails when
// the world disagrees, so its verdicts are measured, not recited.
type expect struct {
	status     string
	exec       map[string]int
	calls      int
	charges    int
	rows       int
	emailsEach int
}

var stepOrder = []string{"FetchRecords", "ScoreAll", "WriteScores", "NotifyOwner", "MarkComplete"}

// execs maps the five steps, in order, to their expected executions.
func execs(n ...int) map[string]int {
	m := map[string]int{}
	for i, step := range stepOrder {
		m[step] = n[i]
	}
	return m
}

func (x expect) check(r report) error {
	var bad []string
	if r.Status != x.status {
		bad = append(bad, fmt.Sprintf("status %s, want %s", r.Status, x.status))
	}
	for _, step := range stepOrder {
		if r.Executions[step] != x.exec[step] {
			bad = append(bad, fmt.Sprintf("%s executed %d times, want %d", step, r.Executions[step], x.exec[step]))
		}
	}
	if r.ScoringCalls != x.calls || r.Charges != x.charges || r.ScoreRows != x.rows {
		bad = append(bad, fmt.Sprintf("scoring %d calls %d charged, %d rows; want %d, %d, %d", r.ScoringCalls, r.Charges, r.ScoreRows, x.calls, x.charges, x.rows))
	}
	for to, n := range r.Emails {
		if n != x.emailsEach {
			bad = append(bad, fmt.Sprintf("%s got %d emails, want %d", to, n, x.emailsEach))
		}
	}
	if len(bad) > 0 {
		return errors.New(strings.Join(bad, "; "))
	}
	return nil
}

// show prints what each step did to the world, and checks it.
func (d *narrator) show(run string, want expect, verdict string) {
	if d.err != nil {
		return
	}
	cmd := exec.CommandContext(d.ctx, d.self, d.args(run, "-report")...)
	b, err := cmd.Output()
	if err != nil {
		d.err = fmt.Errorf("report %s: %w", run, err)
		return
	}
	var r report
	if err := json.Unmarshal(b, &r); err != nil {
		d.err = err
		return
	}
	d.say("  run status: %s%s", r.Status, map[bool]string{true: " (step " + r.AttentionStep + ")", false: ""}[r.AttentionStep != ""])
	d.say("  executions: %s", counts(r.Executions, stepOrder))
	d.say("  scoring service: %d calls, %d charged; score rows: %d", r.ScoringCalls, r.Charges, r.ScoreRows)
	d.say("  emails: %s", counts(r.Emails, nil))
	if err := want.check(r); err != nil {
		d.err = fmt.Errorf("run %s did not do what the demo promises: %w", run, err)
		return
	}
	d.say("%s", verdict)
}

func counts(m map[string]int, order []string) string {
	if order == nil {
		for k := range m {
			order = append(order, k)
		}
		sort.Strings(order)
	}
	var parts []string
	for _, k := range order {
		parts = append(parts, fmt.Sprintf("%s=%d", k, m[k]))
	}
	return strings.Join(parts, " ")
}

// sql prints a query's rows from the run's journal, as a person would read
// it with the sqlite3 shell.
func (d *narrator) sql(run, query string) {
	if d.err != nil {
		return
	}
	db, err := sql.Open("sqlite", "file:"+filepath.Join(d.root, run, "journal.db")+"?mode=ro")
	if err != nil {
		d.err = err
		return
	}
	defer db.Close()
	rows, err := db.QueryContext(d.ctx, query)
	if err != nil {
		d.err = err
		return
	}
	defer rows.Close()
	d.say("$ sqlite3 journal.db %q", query)
	cols, _ := rows.Columns()
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			d.err = err
			return
		}
		var parts []string
		for _, v := range vals {
			parts = append(parts, fmt.Sprint(v))
		}
		d.say("  %s", strings.Join(parts, " | "))
	}
	if err := rows.Err(); err != nil {
		d.err = err
	}
}
