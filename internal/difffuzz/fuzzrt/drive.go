package fuzzrt

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/resumegen/resumegen/runtime/resume"
	"github.com/resumegen/resumegen/runtime/resumetest"
)

// Program is one generated program, as its package describes itself to
// the driver: its workflow and the run's input.
type Program struct {
	Name     string
	Workflow any
	Args     []any
	// Signals are the events sent to every run of the program when it
	// first waits for them (name to payload), as resumetest.WithSignal
	// sends them.
	Signals map[string]any
	// Awaits says the workflow awaits events: called as a plain
	// function it fails at once (no event can reach it), so it is not.
	Awaits bool
}

// The driver's settings, from the environment the fuzzer runs it in.
const (
	// EnvOut names the file the driver appends one [Observation] per
	// program to, as a JSON line.
	EnvOut = "DIFFFUZZ_OUT"
	// EnvKills is how many of each program's crash cases are also played
	// with a real process killed by SIGKILL (default 0).
	EnvKills = "DIFFFUZZ_KILLS"
	// envChild, set, makes the test binary a child process that executes
	// one entry of a run (see child.go).
	envChild = "DIFFFUZZ_CHILD"
)

// Observation is what the driver saw of one program: its uninterrupted
// run and every crash case. It judges nothing: package difffuzz compares.
type Observation struct {
	Program string `json:"program"`
	// Fatal is set when the harness could not crash-test the program at
	// all (its uninterrupted run failed in the harness, the driver
	// panicked).
	Fatal string `json:"fatal,omitempty"`
	// Direct is the workflow called as a plain Go function, with the
	// run's input: what the durable run must compute too.
	Direct DirectObs `json:"direct"`
	Base   RunObs    `json:"base"`
	// Result is the uninterrupted run's result.
	Result ResultObs `json:"result"`
	Cases  []CaseObs `json:"cases,omitempty"`
	// Seconds is how long the program took, in process and in real
	// processes.
	Seconds float64 `json:"seconds"`
}

// DirectObs is what the workflow function returned when called directly:
// its first result as JSON, or its error's text (or its panic).
type DirectObs struct {
	Output json.RawMessage `json:"output,omitempty"`
	Error  string          `json:"error,omitempty"`
	// Skipped says the workflow was not called (it awaits events).
	Skipped bool `json:"skipped,omitempty"`
}

// ResultObs is a run's result: status, output, error text.
type ResultObs struct {
	Status string          `json:"status"`
	Output json.RawMessage `json:"output,omitempty"`
	Error  string          `json:"error,omitempty"`
}

// RunObs is one run as its world saw it: its outcome (status, output,
// error: the form the harness compares), the effects of its steps (with
// run ids relative to the top run: "" is the run itself, "/Child" a child
// run), and the rows of tx steps that committed.
type RunObs struct {
	Outcome string   `json:"outcome"`
	Effects []Effect `json:"effects,omitempty"`
	TxRows  []TxRow  `json:"tx_rows,omitempty"`
}

// CaseObs is one crash case: the run crashed at Point of step key Step,
// then resumed.
type CaseObs struct {
	Name  string `json:"name"`
	Step  string `json:"step"`
	Point string `json:"point"`
	// Real is set for a case played with real processes: the first one
	// killed by SIGKILL at the fault, the next ones resuming.
	Real bool `json:"real,omitempty"`
	// Killed says the first process died at the fault (real cases).
	Killed bool `json:"killed,omitempty"`
	// Parked says the run stopped for a person after the crash, and
	// Unresolved that it was left so (the step's value cannot be told).
	Parked     bool `json:"parked,omitempty"`
	Unresolved bool `json:"unresolved,omitempty"`
	// Problems are what the harness itself found wrong (in process).
	Problems []string `json:"problems,omitempty"`
	// Error is a failure to play the case at all (real cases).
	Error string `json:"error,omitempty"`
	RunObs
}

// Describe writes a run's outcome for comparison, as package resumetest
// compares them: status, compacted output, error text, attention step.
func Describe(r resume.Result) string {
	s := string(r.Status)
	if len(r.Output) > 0 {
		var b bytes.Buffer
		if json.Compact(&b, r.Output) == nil {
			s += " output " + b.String()
		} else {
			s += " output " + string(r.Output)
		}
	}
	if r.Error != "" {
		s += fmt.Sprintf(" error %q", r.Error)
	}
	if r.AttentionStep != "" {
		s += " at step " + r.AttentionStep
	}
	return s
}

// Main is the driver's TestMain: in a child process it executes one entry
// of a run and exits; otherwise it runs the tests.
func Main(m *testing.M, programs []Program) {
	if spec := os.Getenv(envChild); spec != "" {
		os.Exit(runChild(spec, programs))
	}
	os.Exit(m.Run())
}

// Drive crash-tests every program in a parallel subtest of its own and
// appends what it saw to the file $DIFFFUZZ_OUT.
func Drive(t *testing.T, programs []Program) {
	out := os.Getenv(EnvOut)
	if out == "" {
		t.Fatalf("fuzzrt: set %s to the file observations go to", EnvOut)
	}
	kills, _ := strconv.Atoi(os.Getenv(EnvKills))
	w := &obsWriter{path: out}
	for _, p := range programs {
		t.Run(p.Name, func(t *testing.T) {
			t.Parallel()
			start := time.Now()
			obs := Observation{Program: p.Name}
			defer func() {
				if v := recover(); v != nil {
					obs.Fatal = fmt.Sprintf("the driver panicked: %v\n%s", v, debug.Stack())
				}
				obs.Seconds = time.Since(start).Seconds()
				if err := w.write(obs); err != nil {
					t.Errorf("fuzzrt: %v", err)
				}
			}()
			driveProgram(t, p, kills, &obs)
		})
	}
}

// obsWriter appends observations to a file, one JSON line each.
type obsWriter struct {
	mu   sync.Mutex
	path string
}

func (w *obsWriter) write(o Observation) error {
	b, err := json.Marshal(o)
	if err != nil {
		return fmt.Errorf("program %s: encode the observation: %w", o.Program, err)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	f, err := os.OpenFile(w.path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = f.Write(append(b, '\n'))
	return err
}

// recordingTB is the program's test as the harness sees it: the
// harness's reports about the program as a whole (its uninterrupted run)
// are kept for the observation; its crash cases are real subtests, so
// that each case's journal is closed and removed when the case ends.
type recordingTB struct {
	*testing.T
	mu       sync.Mutex
	problems []string
	fatal    *string
}

func (r *recordingTB) Errorf(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	r.mu.Lock()
	r.problems = append(r.problems, msg)
	r.mu.Unlock()
	r.T.Error(msg)
}

func (r *recordingTB) Error(args ...any) { r.Errorf("%s", fmt.Sprint(args...)) }

func (r *recordingTB) Fatalf(format string, args ...any) {
	*r.fatal = fmt.Sprintf(format, args...)
	r.T.Fatal(*r.fatal)
}

func (r *recordingTB) Fatal(args ...any) { r.Fatalf("%s", fmt.Sprint(args...)) }

// driveProgram crashes p in process at every step boundary, then plays
// kills of some of its cases with real processes.
func driveProgram(t *testing.T, p Program, kills int, obs *Observation) {
	var (
		mu      sync.Mutex
		started bool
		worlds  []*World
	)
	fresh := func(tb testing.TB) context.Context {
		w := NewWorld("")
		mu.Lock()
		if started {
			worlds = append(worlds, w)
		}
		mu.Unlock()
		// Count the run's committed tx rows before its journal is
		// removed: cleanups run last registered first, and the
		// harness opened the run's journal before asking for its
		// context.
		tb.Cleanup(w.countTxRows)
		return WithWorld(context.Background(), w)
	}
	rt := &recordingTB{T: t, fatal: &obs.Fatal}
	// The clocks start at the wall clock's time, as the harness's do by
	// default: the engine compares some of its deadlines with the wall
	// clock (a journal write is retried while the lease holds).
	start := time.Now().UTC().Truncate(time.Second)
	opts := []resumetest.Option{
		resumetest.WithClock(resumetest.NewClock(start)),
		resumetest.WithContext(fresh),
		resumetest.WithEngineOptions(resume.WithTracer(tracer{})),
	}
	for _, name := range sortedNames(p.Signals) {
		opts = append(opts, resumetest.WithSignal(name, p.Signals[name]))
	}
	h := resumetest.New(rt, opts...)
	obs.Direct = DirectObs{Skipped: true}
	if !p.Awaits {
		obs.Direct = callDirect(p)
	}
	mu.Lock()
	started = true
	mu.Unlock()
	rep := h.CrashEverywhere(p.Workflow, p.Args...)
	obs.Result = ResultObs{Status: string(rep.Result.Status), Output: rep.Result.Output, Error: rep.Result.Error}
	top := rep.Result.RunID
	mu.Lock()
	defer mu.Unlock()
	if len(worlds) != 1+len(rep.Cases) {
		obs.Fatal = fmt.Sprintf("fuzzrt: the harness made %d runs for %d crash cases: which world is whose cannot be told", len(worlds), len(rep.Cases))
		return
	}
	worlds[0].countTxRows() // the uninterrupted run's journal lives until t ends
	obs.Base = worlds[0].observe(top)
	obs.Base.Outcome = Describe(rep.Result)
	for i, c := range rep.Cases {
		co := CaseObs{Name: c.Name, Step: c.Step, Point: string(c.Point), Parked: c.Parked, Problems: c.Problems, RunObs: worlds[1+i].observe(top)}
		co.Unresolved = c.Parked && strings.HasPrefix(co.Outcome, string(resume.StatusNeedsAttention))
		obs.Cases = append(obs.Cases, co)
	}
	rt.mu.Lock()
	if len(rt.problems) > 0 {
		obs.Cases = append(obs.Cases, CaseObs{Name: "harness", Problems: rt.problems, RunObs: RunObs{Outcome: obs.Base.Outcome}})
	}
	rt.mu.Unlock()
	for _, c := range pickReal(rep.Cases, kills, p.Name) {
		obs.Cases = append(obs.Cases, playReal(t, p, c, start))
	}
}

// directTimeout bounds the workflow called as a plain function (its
// sleeps are real).
const directTimeout = time.Minute

func sortedNames(m map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// callDirect calls p's workflow as a plain function, as a test or a
// script would, in a world of its own.
func callDirect(p Program) DirectObs {
	done := make(chan DirectObs, 1)
	go func() { done <- callPlain(p) }()
	select {
	case d := <-done:
		return d
	case <-time.After(directTimeout):
		return DirectObs{Error: fmt.Sprintf("the plain call did not return within %v", directTimeout)}
	}
}

func callPlain(p Program) (d DirectObs) {
	defer func() {
		if v := recover(); v != nil {
			d = DirectObs{Error: fmt.Sprintf("panic: %v", v)}
		}
	}()
	args := []reflect.Value{reflect.ValueOf(WithWorld(context.Background(), NewWorld("")))}
	for _, a := range p.Args {
		args = append(args, reflect.ValueOf(a))
	}
	out := reflect.ValueOf(p.Workflow).Call(args)
	if err, _ := out[len(out)-1].Interface().(error); err != nil {
		return DirectObs{Error: err.Error()}
	}
	if len(out) == 2 {
		b, err := json.Marshal(out[0].Interface())
		if err != nil {
			return DirectObs{Error: "the output does not marshal: " + err.Error()}
		}
		d.Output = b
	}
	return d
}

// observe returns what w saw of the run top: its last entry's outcome
// and its effects, run ids made relative to top.
func (w *World) observe(top string) RunObs {
	w.mu.Lock()
	defer w.mu.Unlock()
	var o RunObs
	for _, e := range w.entries {
		if e.Run == top {
			o.Outcome = e.Outcome
		}
	}
	for _, e := range w.effects {
		e.Run = strings.TrimPrefix(e.Run, top)
		e.TxDB = ""
		o.Effects = append(o.Effects, e)
	}
	for _, r := range w.txRows {
		r.Run = strings.TrimPrefix(r.Run, top)
		o.TxRows = append(o.TxRows, r)
	}
	return o
}

// countTxRows counts the committed tx rows in the databases the world's
// tx steps wrote to, once.
func (w *World) countTxRows() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.counted {
		return
	}
	var paths []string
	for p := range w.txDBs {
		paths = append(paths, p)
	}
	if len(paths) == 0 {
		return
	}
	sort.Strings(paths)
	w.counted = true
	for _, p := range paths {
		rows, err := CountTxRows(context.Background(), p)
		if err != nil {
			w.txRows = append(w.txRows, TxRow{Run: "?", Key: err.Error(), Rows: -1})
			continue
		}
		w.txRows = append(w.txRows, rows...)
	}
}

// tracer records in each run's world how its entries ended: the outcome
// of the last one is the run's.
type tracer struct{}

func (tracer) Entry(ctx context.Context, info resume.EntryInfo) (context.Context, func(resume.EntryEnd)) {
	w := worldOf(ctx)
	return ctx, func(end resume.EntryEnd) {
		if w == nil {
			return
		}
		w.mu.Lock()
		w.entries = append(w.entries, EntryEnd{Run: info.RunID, Outcome: Describe(end.Result)})
		w.mu.Unlock()
	}
}

func (tracer) Attempt(ctx context.Context, _ resume.StepInfo) (context.Context, func(resume.AttemptEnd)) {
	return ctx, func(resume.AttemptEnd) {}
}
