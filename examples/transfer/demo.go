package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"syscall"

	_ "modernc.org/sqlite" // the demo reads the journal with plain SQL
)

// demo narrates the scenes, each comparing a killed and resumed run with an
// uninterrupted one. Every crash is a real child process killing itself.
func demo(ctx context.Context, out io.Writer) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	return demoWith(ctx, out, self)
}

// demoWith narrates the demo with the example binary self.
func demoWith(ctx context.Context, out io.Writer, self string) error {
	root, err := os.MkdirTemp("", "resumegen-transfer-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(root)
	scenes := []scene{
		{"1. A refused deposit is history",
			"The bank refuses a deposit to account \"closed\" (a permanent *AccountClosedError)\n" +
				"and the saga compensates. The process dies before the refund. Asked again, this bank\n" +
				"would accept the deposit, so a resume that executed it again would pay twice and\n" +
				"refund: the resume replays the refusal instead, and errors.As still matches it.",
			"closed", 5000, "Refund:before"},
		{"2. A sentinel error, wrapped, replays as itself",
			"Over the limit, the deposit fails with fmt.Errorf(\"...: %w\", ErrLimitExceeded). The\n" +
				"process dies after the refund, before the release: errors.Is matches the replayed error.",
			"bob", 200000, "Release:before"},
		{"3. A child run resumes where it stopped",
			"Notify is a workflow of its own, run as a child of Transfer. The process dies inside it,\n" +
				"after telling alice and before telling bob: the resume tells bob only.",
			"bob", 5000, "Send[bob]:before"},
	}
	for i, s := range scenes {
		if err := s.play(ctx, out, self, filepath.Join(root, fmt.Sprint(i))); err != nil {
			return fmt.Errorf("%s: %w", s.title, err)
		}
	}
	fmt.Fprintln(out, "\nEvery resumed run ended as its uninterrupted twin did, and the bank saw the same effects.")
	return nil
}

// scene is one killed-and-resumed transfer.
type scene struct {
	title, story string
	to           string
	amount       int
	crash        string
}

func (s scene) play(ctx context.Context, out io.Writer, self, dir string) error {
	fmt.Fprintf(out, "\n== %s\n%s\n", s.title, s.story)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	ref := filepath.Join(dir, "ref")
	want, err := s.transfer(ctx, self, ref, "")
	if err != nil {
		return err
	}
	got := filepath.Join(dir, "crash")
	if _, err := s.transfer(ctx, self, got, s.crash); !isKilled(err) {
		return fmt.Errorf("the process was not killed at %s (%v)", s.crash, err)
	}
	fmt.Fprintf(out, "  killed at %s\n", s.crash)
	resumed, err := s.transfer(ctx, self, got, "")
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "  resumed:       %s  uninterrupted: %s\n", strings.TrimSpace(resumed), strings.TrimSpace(want))
	wantFx, err := readEffects(ref + ".effects")
	if err != nil {
		return err
	}
	gotFx, err := readEffects(got + ".effects")
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "  the bank saw:  %s\n  balances:      %v\n", countSteps(gotFx), balances(gotFx))
	if resumed != want || !reflect.DeepEqual(balances(gotFx), balances(wantFx)) || countSteps(gotFx) != countSteps(wantFx) {
		return fmt.Errorf("the resumed run differs from the uninterrupted one: %s %v %s, want %s %v %s",
			resumed, balances(gotFx), countSteps(gotFx), want, balances(wantFx), countSteps(wantFx))
	}
	return printJournal(ctx, out, got+".db")
}

// transfer runs the example binary once on the scene's journal and world.
func (s scene) transfer(ctx context.Context, self, base, crash string) (string, error) {
	args := []string{"-db", base + ".db", "-world", base + ".effects", "-run", "t-1",
		"-to", s.to, "-amount", fmt.Sprint(s.amount)}
	if crash != "" {
		args = append(args, "-crash", crash)
	}
	cmd := exec.CommandContext(ctx, self, args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	b, err := cmd.Output()
	if err != nil && !isKilled(err) {
		return "", fmt.Errorf("transfer %v: %w: %s", args, err, stderr.String())
	}
	return string(b), err
}

func isKilled(err error) bool {
	var exit *exec.ExitError
	if !errors.As(err, &exit) {
		return false
	}
	ws, ok := exit.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL
}

// countSteps renders how many times each step executed, by name.
func countSteps(fx []effect) string {
	n := map[string]int{}
	for _, e := range fx {
		n[e.Step]++
	}
	names := make([]string, 0, len(n))
	for k := range n {
		names = append(names, k)
	}
	sort.Strings(names)
	var b strings.Builder
	for i, k := range names {
		if i > 0 {
			b.WriteString(" ")
		}
		fmt.Fprintf(&b, "%s×%d", k, n[k])
	}
	return b.String()
}

// printJournal shows the journal's rows with plain SQL.
func printJournal(ctx context.Context, out io.Writer, path string) error {
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		return err
	}
	defer db.Close()
	rows, err := db.QueryContext(ctx, `SELECT run_id, step_key, status, attempt, error FROM resume_steps ORDER BY run_id, seq`)
	if err != nil {
		return err
	}
	defer rows.Close()
	fmt.Fprintln(out, "  journal:")
	for rows.Next() {
		var run, key, status, errText string
		var attempt int
		if err := rows.Scan(&run, &key, &status, &attempt, &errText); err != nil {
			return err
		}
		if errText != "" {
			errText = "  " + errText
		}
		fmt.Fprintf(out, "    %-12s %-18s %-9s attempt %d%s\n", run, key, status, attempt, errText)
	}
	return rows.Err()
}
