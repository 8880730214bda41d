package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/resumegen/resumegen/runtime/journal"
	"github.com/resumegen/resumegen/runtime/openjournal"
)

// The demo and the tests drive the example the way an operator would:
// processes of the example started and killed, and resumectl.

// tools are the commands run: the example's binary and resumectl's.
type tools struct {
	self, ctl string
	out       io.Writer // where commands and their output are shown
}

// place is where a run's journal and world live.
type place struct{ db, world string }

func (p place) args(runID string, extra ...string) []string {
	return append([]string{"-db", p.db, "-world", p.world, "-run", runID}, extra...)
}

// proc is a running process of the example.
type proc struct {
	cmd   *exec.Cmd
	out   *syncBuffer
	done  chan struct{}
	err   error
	shown int // how much of out was shown
}

// start starts the example on run runID in the background.
func (t tools) start(ctx context.Context, p place, runID string, extra ...string) (*proc, error) {
	return t.spawn(ctx, " &", p, runID, extra...)
}

// spawn starts the example, showing its command line followed by suffix.
func (t tools) spawn(ctx context.Context, suffix string, p place, runID string, extra ...string) (*proc, error) {
	fmt.Fprintf(t.out, "$ approval -run %s %s%s\n", runID, strings.Join(extra, " "), suffix)
	cmd := exec.CommandContext(ctx, t.self, p.args(runID, extra...)...)
	pr := &proc{cmd: cmd, out: &syncBuffer{}, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = pr.out, pr.out
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	go func() { pr.err = cmd.Wait(); close(pr.done) }()
	return pr, nil
}

// wait waits for the process to end and shows its output; killed says
// SIGKILL ended it, err any other failure.
func (pr *proc) wait(out io.Writer) (output string, killed bool, err error) {
	<-pr.done
	pr.flush(out)
	if isKilled(pr.err) {
		fmt.Fprintln(out, "  (killed by SIGKILL)")
		return pr.out.String(), true, nil
	}
	if pr.err != nil {
		return pr.out.String(), false, fmt.Errorf("approval %s: %w", strings.Join(pr.cmd.Args[1:], " "), pr.err)
	}
	return pr.out.String(), false, nil
}

// flush shows the lines the process printed since the last flush.
func (pr *proc) flush(out io.Writer) {
	all := pr.out.String()
	end := strings.LastIndexByte(all, '\n') + 1
	if end <= pr.shown {
		return
	}
	for _, l := range strings.Split(strings.TrimSpace(all[pr.shown:end]), "\n") {
		if l != "" {
			fmt.Fprintf(out, "  %s\n", l)
		}
	}
	pr.shown = end
}

// kill kills the process with SIGKILL, as an OOM kill or a pulled plug
// would, and waits for it to end.
func (pr *proc) kill(out io.Writer) error {
	pr.flush(out)
	fmt.Fprintf(out, "$ kill -KILL %d\n", pr.cmd.Process.Pid)
	if err := pr.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		return err
	}
	if _, killed, err := pr.wait(out); err != nil || !killed {
		return fmt.Errorf("the process was not killed by SIGKILL (%v): it had ended", err)
	}
	return nil
}

// finish runs the example on run runID to its end and returns the last
// line it printed: the outcome.
func (t tools) finish(ctx context.Context, p place, runID string, extra ...string) (string, error) {
	pr, err := t.spawn(ctx, "", p, runID, extra...)
	if err != nil {
		return "", err
	}
	out, killed, err := pr.wait(t.out)
	if err == nil && killed {
		err = fmt.Errorf("run %s: the process was killed", runID)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	return lines[len(lines)-1], err
}

// waitUntil polls run runID's journal until it waits for kind (a
// journal.WaitSleep or WaitSignal), failing if the process pr ends first
// or after a minute.
func waitUntil(ctx context.Context, p place, runID, kind string, pr *proc) error {
	var r reader
	defer r.close()
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		run, err := r.load(ctx, p.db, runID)
		if err == nil && run.Status == journal.StatusWaiting && run.WaitKind == kind {
			return nil
		}
		select {
		case <-pr.done:
			return fmt.Errorf("run %s: the process ended before the run waited for %s: %v\n%s", runID, kind, pr.err, pr.out.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
	return fmt.Errorf("run %s: not waiting for %s after a minute (last read: %v)", runID, kind, r.err)
}

// reader reads a journal that a process of the example creates: it
// opens it read only, once it exists.
type reader struct {
	j   journal.Journal
	err error // the last failure, for the message of a wait that gives up
}

func (r *reader) load(ctx context.Context, db, runID string) (journal.RunRecord, error) {
	if r.j == nil {
		if r.j, r.err = openjournal.OpenReadOnly(ctx, db); r.err != nil {
			r.j = nil
			return journal.RunRecord{}, r.err
		}
	}
	run, _, err := r.j.LoadRun(ctx, runID)
	r.err = err
	return run, err
}

func (r *reader) close() {
	if r.j != nil {
		r.j.Close()
	}
}

// resumectl runs resumectl's command args on p's journal, showing it; a
// refusal is returned as an error with what it said.
func (t tools) resumectl(ctx context.Context, p place, args ...string) error {
	shown := make([]string, len(args))
	for i, a := range args {
		shown[i] = a
		if strings.ContainsAny(a, "{\" ") {
			shown[i] = "'" + a + "'"
		}
	}
	fmt.Fprintf(t.out, "$ resumectl %s\n", strings.Join(shown, " "))
	cmd := exec.CommandContext(ctx, t.ctl, append(args, "-db", p.db)...)
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	err := cmd.Run()
	for _, l := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		fmt.Fprintf(t.out, "  %s\n", l)
	}
	if err != nil {
		return fmt.Errorf("resumectl %s: %w: %s", strings.Join(args, " "), err, buf.String())
	}
	return nil
}

// report reads what run runID did, with the example's -report.
func (t tools) report(ctx context.Context, p place, runID string) (report, error) {
	var r report
	b, err := exec.CommandContext(ctx, t.self, p.args(runID, "-report")...).Output()
	if err != nil {
		return r, fmt.Errorf("report %s: %w", runID, err)
	}
	return r, json.Unmarshal(b, &r)
}

func isKilled(err error) bool {
	var exit *exec.ExitError
	if !errors.As(err, &exit) {
		return false
	}
	ws, ok := exit.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL
}

// syncBuffer is a buffer a process writes while another goroutine reads.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
