package fuzzrt

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/resumegen/resumegen/runtime/journal"
	"github.com/resumegen/resumegen/runtime/resume"
	"github.com/resumegen/resumegen/runtime/resumetest"
	"github.com/resumegen/resumegen/runtime/sqlitejournal"
)

// realRunID is the id of the run a real-process case starts.
const realRunID = "difffuzz"

// childSpec is what one child process does: execute run realRunID of a
// program on the journal DB, its steps logging to Effects, dying at Fault
// when set, after resolving a parked step when Resolve is set; it writes
// a [childResult] to Out.
type childSpec struct {
	Program string `json:"program"`
	DB      string `json:"db"`
	Effects string `json:"effects"`
	Out     string `json:"out"`
	Fault   string `json:"fault,omitempty"`
	// Sent lists, a line each, the events sent to the case's runs so
	// far: each is sent once per case, as the harness does.
	Sent string `json:"sent"`
	// Start is the time the process's clock starts at.
	Start time.Time `json:"start"`
	// Resolve settles step ResolveKey of run ResolveRun as done with
	// ResolveResult, as a person who checked would, before resuming.
	ResolveRun    string          `json:"resolve_run,omitempty"`
	ResolveKey    string          `json:"resolve_key,omitempty"`
	ResolveResult json.RawMessage `json:"resolve_result,omitempty"`
}

// childResult is what a child process reports.
type childResult struct {
	Outcome string `json:"outcome"`
	// Err is a failure other than the run's own outcome.
	Err string `json:"err,omitempty"`
	// Parked are the runs that wait for a person on one of their steps:
	// run id and step key.
	Parked [][2]string `json:"parked,omitempty"`
}

// maxWakes bounds the waits a child fast-forwards through.
const maxWakes = 1000

// runChild executes one child process's spec and returns its exit status.
func runChild(specJSON string, programs []Program) int {
	var spec childSpec
	if err := json.Unmarshal([]byte(specJSON), &spec); err != nil {
		fmt.Fprintf(os.Stderr, "fuzzrt child: %v\n", err)
		return 2
	}
	res := childRun(context.Background(), spec, programs)
	b, _ := json.Marshal(res)
	if err := os.WriteFile(spec.Out, b, 0o644); err != nil {
		fmt.Fprintf(os.Stderr, "fuzzrt child: %v\n", err)
		return 2
	}
	return 0
}

func childRun(ctx context.Context, spec childSpec, programs []Program) childResult {
	var p *Program
	for i := range programs {
		if programs[i].Name == spec.Program {
			p = &programs[i]
		}
	}
	if p == nil {
		return childResult{Err: "no program " + spec.Program}
	}
	clock := resumetest.NewClock(spec.Start)
	j, err := sqlitejournal.Open(ctx, spec.DB, sqlitejournal.WithClock(clock.Now))
	if err != nil {
		return childResult{Err: err.Error()}
	}
	defer j.Close()
	opts := []resume.Option{
		resume.WithClock(clock),
		resume.WithOwner(fmt.Sprintf("difffuzz-%d", os.Getpid())),
		resume.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))),
	}
	if spec.Fault != "" {
		f, err := resume.ParseFault(spec.Fault)
		if err != nil {
			return childResult{Err: err.Error()}
		}
		opts = append(opts, resume.WithFault(f)) // the default action: SIGKILL
	}
	e := resume.NewEngine(j, opts...)
	ctx = WithWorld(ctx, NewWorld(spec.Effects))
	if spec.ResolveKey != "" {
		if err := e.Resolve(ctx, spec.ResolveRun, spec.ResolveKey, resume.Resolution{Done: true, Result: spec.ResolveResult}); err != nil {
			return childResult{Err: err.Error()}
		}
	}
	res, err := e.Start(ctx, realRunID, p.Workflow, p.Args...)
	for i := 0; errors.Is(err, resume.ErrRunWaiting) && i < maxWakes; i++ {
		sent, serr := deliver(ctx, e, j, p, spec.Sent)
		switch {
		case serr != nil:
			return childResult{Err: serr.Error()}
		case sent:
		case res.WakeAt.IsZero():
			return childResult{Outcome: Describe(res), Err: "the run waits for an event nobody sends"}
		case res.WakeAt.After(clock.Now()):
			clock.Set(res.WakeAt)
		}
		res, err = e.Resume(ctx, realRunID)
	}
	out := childResult{Outcome: Describe(res)}
	if err != nil && !errors.As(err, new(*resume.RunError)) {
		out.Err = err.Error()
	}
	runs, lerr := j.ListRuns(ctx, journal.RunFilter{Statuses: []resume.Status{resume.StatusNeedsAttention}})
	if lerr != nil {
		out.Err = lerr.Error()
	}
	for _, r := range runs {
		if r.AttentionKind == resume.AttentionKindStep {
			out.Parked = append(out.Parked, [2]string{r.RunID, r.AttentionStep})
		}
	}
	return out
}

// deliver sends the event the run (or the child run it waits for, down
// the chain) waits for, when it is one of p's and was not sent in this
// case yet (the file sentPath lists those), and reports whether it did.
func deliver(ctx context.Context, e *resume.Engine, j journal.Journal, p *Program, sentPath string) (bool, error) {
	run, _, err := j.LoadRun(ctx, realRunID)
	if err != nil {
		return false, err
	}
	for depth := 0; run.Status == resume.StatusWaiting && run.WaitKind == journal.WaitChild; depth++ {
		if depth == maxWakes {
			return false, fmt.Errorf("run %s: a chain of %d child runs", realRunID, depth)
		}
		if run, _, err = j.LoadRun(ctx, run.WaitName); err != nil {
			return false, err
		}
	}
	if run.Status != resume.StatusWaiting || run.WaitKind != journal.WaitSignal {
		return false, nil
	}
	payload, ok := p.Signals[run.WaitName]
	if !ok {
		return false, nil
	}
	b, _ := os.ReadFile(sentPath)
	for _, name := range strings.Fields(string(b)) {
		if name == run.WaitName {
			return false, nil
		}
	}
	f, err := os.OpenFile(sentPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return false, err
	}
	_, err = fmt.Fprintln(f, run.WaitName)
	f.Close()
	if err != nil {
		return false, err
	}
	if err := e.Signal(ctx, run.RunID, run.WaitName, payload); err != nil {
		return false, fmt.Errorf("run %s: send event %s: %w", run.RunID, run.WaitName, err)
	}
	return true, nil
}

// pickReal chooses up to n of cases to play with real processes: kills
// at an effect first (where the policies differ), spread over the
// program from an offset its name decides.
func pickReal(cases []resumetest.Case, n int, program string) []resumetest.Case {
	if n <= 0 {
		return nil
	}
	var effect, other []resumetest.Case
	for _, c := range cases {
		switch c.Point {
		case resume.FaultEffect:
			effect = append(effect, c)
		case resume.FaultBefore, resume.FaultAfter:
			other = append(other, c)
		}
	}
	h := fnv.New32a()
	h.Write([]byte(program))
	off := int(h.Sum32() % 1024)
	nOther := min(len(other), n/3) // a third elsewhere, where the policies agree
	nEffect := min(len(effect), n-nOther)
	nOther = min(len(other), n-nEffect)
	return append(spread(effect, nEffect, off), spread(other, nOther, off)...)
}

// spread picks n of list, evenly spaced from offset off.
func spread(list []resumetest.Case, n, off int) []resumetest.Case {
	var out []resumetest.Case
	for i := range n {
		out = append(out, list[(off+i*len(list)/n)%len(list)])
	}
	return out
}

// playReal plays case c of p with real processes: one killed by SIGKILL
// at the fault, then processes that resume the run to its end, resolving
// a step parked for a person as done with the value its killed execution
// returned.
func playReal(t *testing.T, p Program, c resumetest.Case, start time.Time) CaseObs {
	co := CaseObs{Name: c.Name, Step: c.Step, Point: string(c.Point), Real: true}
	dir, err := os.MkdirTemp("", "difffuzz-real-")
	if err != nil {
		co.Error = err.Error()
		return co
	}
	defer os.RemoveAll(dir)
	spec := childSpec{Program: p.Name, DB: filepath.Join(dir, "journal.db"), Effects: filepath.Join(dir, "effects.jsonl"), Out: filepath.Join(dir, "out.json"), Sent: filepath.Join(dir, "sent"), Fault: c.Name, Start: start}
	if i := strings.LastIndexByte(c.Name, ':'); i >= 0 {
		spec.Fault = c.Step + c.Name[i:]
	}
	var res childResult
	co.Killed, res, err = runChildProcess(spec)
	switch {
	case err != nil:
		co.Error = err.Error()
		return co
	case !co.Killed:
		co.Error = "the process was not killed at " + spec.Fault + ": it ended " + res.Outcome
	}
	spec.Fault = ""
	for round := 0; round < 3 && co.Error == ""; round++ {
		if _, res, err = runChildProcess(spec); err != nil {
			co.Error = err.Error()
			break
		}
		if res.Err != "" {
			co.Error = res.Err
			break
		}
		spec.ResolveKey = ""
		run, parked := parkedAt(res.Parked, c.Step)
		if !parked || co.Parked {
			break
		}
		co.Parked = true
		effects, _ := ReadEffects(spec.Effects)
		result := lastResult(effects, run, c.Step)
		if result == nil {
			co.Unresolved = true
			break
		}
		spec.ResolveRun, spec.ResolveKey, spec.ResolveResult = run, c.Step, result
	}
	co.Outcome = res.Outcome
	effects, err := ReadEffects(spec.Effects)
	if err != nil && co.Error == "" {
		co.Error = err.Error()
	}
	for _, e := range effects {
		e.Run, e.TxDB = strings.TrimPrefix(e.Run, realRunID), ""
		co.Effects = append(co.Effects, e)
	}
	rows, err := CountTxRows(context.Background(), spec.DB)
	if err != nil && co.Error == "" {
		co.Error = err.Error()
	}
	for _, r := range rows {
		r.Run = strings.TrimPrefix(r.Run, realRunID)
		co.TxRows = append(co.TxRows, r)
	}
	t.Logf("real kill %s: killed %v, parked %v, %s", c.Name, co.Killed, co.Parked, co.Outcome)
	return co
}

// parkedAt returns the run parked at step key, if one is.
func parkedAt(parked [][2]string, key string) (string, bool) {
	sort.Slice(parked, func(i, j int) bool { return parked[i][0] < parked[j][0] })
	for _, p := range parked {
		if p[1] == key {
			return p[0], true
		}
	}
	return "", false
}

// lastResult returns the value the last successful attempt of step key of
// run returned, or nil when it is not known.
func lastResult(effects []Effect, run, key string) json.RawMessage {
	var out json.RawMessage
	for _, e := range effects {
		if e.Run == run && e.Key == key && e.OK {
			out = e.Result
		}
	}
	return out
}

// childTimeout bounds one child process.
const childTimeout = 2 * time.Minute

// runChildProcess runs the test binary as a child process executing spec.
// killed reports that it died by SIGKILL (the fault).
func runChildProcess(spec childSpec) (killed bool, res childResult, err error) {
	b, err := json.Marshal(spec)
	if err != nil {
		return false, res, err
	}
	os.Remove(spec.Out)
	ctx, cancel := context.WithTimeout(context.Background(), childTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envChild+"="+string(b))
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL && ctx.Err() == nil {
			return true, res, nil
		}
	}
	if err != nil {
		return false, res, fmt.Errorf("child process (%s): %v\n%s", spec.Fault, err, out)
	}
	raw, err := os.ReadFile(spec.Out)
	if err != nil {
		return false, res, fmt.Errorf("child process: %w\n%s", err, out)
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		return false, res, fmt.Errorf("child process: %w", err)
	}
	return false, res, nil
}
