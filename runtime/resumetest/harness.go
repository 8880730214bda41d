// Package resumetest runs workflows in a test: on a temporary SQLite
// journal, with step functions replaced by test doubles, and crashed at
// every point of every step to prove that they resume correctly.
//
//	func TestOnboard(t *testing.T) {
//		resumetest.CrashEverywhere(t, Onboard, Input{CustomerID: "c-1"})
//	}
//
// Steps are replaced by name with a function of the step's own type:
//
//	h := resumetest.New(t, resumetest.Replace("FetchRecords",
//		func(ctx context.Context, in Input) ([]Record, error) { return nil, errDown }))
//	res, err := h.Run("r-1", Onboard, Input{CustomerID: "c-1"})
//
// The harness sees each execution of a step's code through the journaling
// wrapper resumegen generates; code generated before resumegen routed step
// calls through resume.Callee is not seen: regenerate it.
package resumetest

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/resumegen/resumegen/runtime/internal/stephook"
	"github.com/resumegen/resumegen/runtime/journal"
	"github.com/resumegen/resumegen/runtime/resume"
)

// Option configures a [Harness].
type Option func(*config)

type config struct {
	clock      *Clock
	doubles    map[string]any
	context    func(t testing.TB) context.Context
	engineOpts []resume.Option
	signals    []signal
}

// signal is an event [WithSignal] sends.
type signal struct {
	name    string
	payload any
}

// Replace makes every execution of the step named step (its journal
// name: the callee's name, or name= at the call site) call double instead
// of the step's function. double must be a function of the step's own
// type: a double of another type, or a name that is no step of the
// workflow run (nor of the workflows it calls), fails the test. The step
// is journaled as the real one would be: its policy, retries and replay
// apply to the double.
func Replace(step string, double any) Option {
	return func(c *config) {
		if c.doubles == nil {
			c.doubles = map[string]any{}
		}
		c.doubles[step] = double
	}
}

// WithContext makes f build the context runs are started with, for
// instance to carry the dependencies steps find in it. [CrashEverywhere]
// calls f once per run it makes (the uninterrupted one and one per crash),
// so that each starts from a fresh world; the resumed process gets the
// same context as the crashed one, the world it left behind.
func WithContext(f func(t testing.TB) context.Context) Option {
	return func(c *config) { c.context = f }
}

// WithClock makes c the clock of the harness's engines and journals, for
// sleeps, await timeouts and schedules alike (default: a clock reading the
// time New was called, to the second). Give
// it to doubles that tell time, for instance a journaled time.Now:
// Replace("now", clock.Now).
func WithClock(c *Clock) Option {
	return func(cfg *config) { cfg.clock = c }
}

// WithEngineOptions adds options to every engine the harness makes (for
// instance [resume.WithReceiver] for a workflow that is a method).
func WithEngineOptions(opts ...resume.Option) Option {
	return func(c *config) { c.engineOpts = append(c.engineOpts, opts...) }
}

// WithSignal makes [Harness.CrashEverywhere] send the event name with
// payload, as [resume.Engine.Signal] does, the first time the run it
// drives (or a child run of it) waits for that event: in the
// uninterrupted run and in every crash case alike, before or after the
// crash, so that a workflow that awaits a decision is crash-tested on the
// path the decision takes, not only on its timeout. The event is sent
// once per case: an Await of it met again waits, and times out. Give
// WithSignal once per event name; [Harness.Run] and
// [Harness.FastForward] send nothing (use [Harness.Signal]).
func WithSignal(name string, payload any) Option {
	return func(c *config) { c.signals = append(c.signals, signal{name: name, payload: payload}) }
}

// Harness executes workflows in a test on a temporary SQLite journal,
// removed when the test ends.
type Harness struct {
	t       testing.TB
	cfg     config
	rec     *recorder
	journal *crashJournal
	engine  *resume.Engine
	ctx     context.Context
	checked map[string]bool
	start   time.Time // the clock's time at New
}

// New returns a harness for the test t, with an engine on a fresh
// temporary journal.
func New(t testing.TB, opts ...Option) *Harness {
	t.Helper()
	h := &Harness{t: t, checked: map[string]bool{}}
	for _, o := range opts {
		o(&h.cfg)
	}
	if h.cfg.clock == nil {
		h.cfg.clock = NewClock(time.Now().UTC().Truncate(time.Second))
	}
	h.start = h.cfg.clock.Now()
	h.rec = newRecorder(h.cfg.doubles, t.Errorf)
	h.journal = &crashJournal{Journal: openJournal(t, h.cfg.clock), rec: h.rec}
	h.engine = resume.NewEngine(h.journal, h.cfg.engineOptions(resume.WithOwner("resumetest"))...)
	h.ctx = stephook.With(h.cfg.baseContext(t), h.rec)
	return h
}

// engineOptions are the options of an engine of the harness: its clock,
// the user's options, then own.
func (c *config) engineOptions(own ...resume.Option) []resume.Option {
	opts := append([]resume.Option{resume.WithClock(c.clock)}, c.engineOpts...)
	return append(opts, own...)
}

func (c *config) baseContext(t testing.TB) context.Context {
	if c.context != nil {
		return c.context(t)
	}
	return context.Background()
}

// Engine returns the harness's engine. Start its runs with
// [Harness.Context] (resume.Run(h.Context(), h.Engine(), ...)) for the
// doubles to apply and the executions to be recorded.
func (h *Harness) Engine() *resume.Engine { return h.engine }

// Context returns the context the harness starts runs with: the one
// [WithContext] builds, carrying the harness's doubles.
func (h *Harness) Context() context.Context { return h.ctx }

// Run starts run runID of the registered workflow wf with args (its
// parameters after the context) and executes it to its end, as
// [resume.Engine.Start] does. A double given with [Replace] that does not
// fit wf fails the test.
func (h *Harness) Run(runID string, wf any, args ...any) (resume.Result, error) {
	h.t.Helper()
	h.check(wf)
	return h.engine.Start(h.ctx, runID, wf, args...)
}

// check fails the test when a double does not fit wf.
func (h *Harness) check(wf any) {
	h.t.Helper()
	name := ""
	if d, err := stephook.Describe(wf); err == nil {
		name = d.Name
	}
	if name != "" && h.checked[name] {
		return
	}
	if err := checkDoubles(h.cfg.doubles, wf); err != nil {
		h.t.Fatal(err)
	}
	h.checked[name] = true
}

// Executions returns every execution of step code in the harness's runs
// so far (each attempt; child runs' steps included), in order.
func (h *Harness) Executions() []Execution { return h.rec.executions() }

// Count returns how many times the code of step stepKey (Name, Name#2,
// Name[key]) of run runID executed.
func (h *Harness) Count(runID, stepKey string) int {
	n := 0
	for _, e := range h.rec.executions() {
		if e.RunID == runID && e.StepKey == stepKey {
			n++
		}
	}
	return n
}

// Clock returns the harness's clock.
func (h *Harness) Clock() *Clock { return h.cfg.clock }

// Resume executes run runID from its journal, as [resume.Engine.Resume]
// does: a waiting run goes on if its wait is over by the harness's clock,
// and suspends again otherwise.
func (h *Harness) Resume(runID string) (resume.Result, error) {
	return h.engine.Resume(h.ctx, runID)
}

// Signal sends the event name with payload to run runID, as
// [resume.Engine.Signal] does, then resumes the run: an Await of the event
// receives it.
func (h *Harness) Signal(runID, name string, payload any) (resume.Result, error) {
	if err := h.engine.Signal(h.ctx, runID, name, payload); err != nil {
		return resume.Result{}, err
	}
	return h.Resume(runID)
}

// FastForward resumes run runID, moving the harness's clock to each time
// it waits until (a Sleep's wake-up, an Await's timeout, a child run's),
// until the run ends or waits for an event without a timeout: a 72-hour
// approval that nobody gives times out in milliseconds.
func (h *Harness) FastForward(runID string) (resume.Result, error) {
	return fastForward(h.ctx, h.engine, h.cfg.clock, nil, runID)
}

// maxWakes bounds FastForward: a run that still waits after that many
// wake-ups is reported, not followed for ever.
const maxWakes = 10000

// fastForward resumes run runID to its end, moving clock through its
// waits; send (nil: none) sends the events of [WithSignal] to the run
// when it first waits for them, before its clock moves.
func fastForward(ctx context.Context, e *resume.Engine, clock *Clock, send *sender, runID string) (resume.Result, error) {
	for range maxWakes {
		run, _, err := e.Journal().LoadRun(ctx, runID)
		if err != nil {
			return resume.Result{}, fmt.Errorf("run %s: fast-forward: %w", runID, err)
		}
		sent, err := send.deliver(ctx, e, run)
		if err != nil {
			return resume.Result{}, err
		}
		if !sent && run.Status == resume.StatusWaiting && !run.WakeAt.IsZero() {
			clock.advanceTo(run.WakeAt)
		}
		res, err := e.Resume(ctx, runID)
		if !errors.Is(err, resume.ErrRunWaiting) {
			return res, err
		}
		run, _, lerr := e.Journal().LoadRun(ctx, runID)
		if lerr != nil {
			return res, err
		}
		if _, _, ok, werr := send.wanted(ctx, e, run); werr == nil && !ok && run.WakeAt.IsZero() {
			return res, err // it waits for an event, for ever
		}
	}
	return resume.Result{}, fmt.Errorf("run %s: fast-forward: still waiting after %d wake-ups", runID, maxWakes)
}

// sender sends the events of [WithSignal] to one case's runs, each event
// once: when a run first waits for it.
type sender struct {
	signals []signal
	sent    map[string]bool
}

// deliver sends run the event it waits for (itself, or the child run it
// waits for, down the chain), when it is one of s's not sent yet, and
// reports whether it sent one. A nil s sends nothing.
func (s *sender) deliver(ctx context.Context, e *resume.Engine, run journal.RunRecord) (bool, error) {
	target, sig, ok, err := s.wanted(ctx, e, run)
	if err != nil || !ok {
		return false, err
	}
	s.sent[sig.name] = true
	if err := e.Signal(ctx, target, sig.name, sig.payload); err != nil {
		return false, fmt.Errorf("resumetest: run %s: send event %s (WithSignal): %w", target, sig.name, err)
	}
	return true, nil
}

// wanted returns the event of s, not sent yet, that run or the child run
// it waits for (target) waits for; ok is false when there is none.
func (s *sender) wanted(ctx context.Context, e *resume.Engine, run journal.RunRecord) (target string, sig signal, ok bool, err error) {
	if s == nil || run.Status != resume.StatusWaiting {
		return "", signal{}, false, nil
	}
	for depth := 0; run.WaitKind == journal.WaitChild; depth++ {
		if depth == maxWakes {
			return "", signal{}, false, fmt.Errorf("resumetest: run %s: a chain of %d child runs", run.RunID, depth)
		}
		child := run.WaitName
		if run, _, err = e.Journal().LoadRun(ctx, child); err != nil {
			return "", signal{}, false, fmt.Errorf("resumetest: child run %s: %w", child, err)
		}
	}
	if run.Status != resume.StatusWaiting || run.WaitKind != journal.WaitSignal {
		return "", signal{}, false, nil
	}
	for _, sig := range s.signals {
		if sig.name == run.WaitName && !s.sent[sig.name] {
			return run.RunID, sig, true, nil
		}
	}
	return "", signal{}, false, nil
}
