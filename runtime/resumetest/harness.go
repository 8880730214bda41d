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
	"github.com/resumegen/resumegen/runtime/resume"
)

// Option configures a [Harness].
type Option func(*config)

type config struct {
	clock      *Clock
	doubles    map[string]any
	context    func(t testing.TB) context.Context
	engineOpts []resume.Option
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
	return fastForward(h.ctx, h.engine, h.cfg.clock, runID)
}

// maxWakes bounds FastForward: a run that still waits after that many
// wake-ups is reported, not followed for ever.
const maxWakes = 10000

func fastForward(ctx context.Context, e *resume.Engine, clock *Clock, runID string) (resume.Result, error) {
	for range maxWakes {
		run, _, err := e.Journal().LoadRun(ctx, runID)
		if err != nil {
			return resume.Result{}, fmt.Errorf("run %s: fast-forward: %w", runID, err)
		}
		if run.Status == resume.StatusWaiting && !run.WakeAt.IsZero() {
			clock.advanceTo(run.WakeAt)
		}
		res, err := e.Resume(ctx, runID)
		if !errors.Is(err, resume.ErrRunWaiting) {
			return res, err
		}
		if run, _, lerr := e.Journal().LoadRun(ctx, runID); lerr != nil || run.WakeAt.IsZero() {
			return res, err // it waits for an event, for ever
		}
	}
	return resume.Result{}, fmt.Errorf("run %s: fast-forward: still waiting after %d wake-ups", runID, maxWakes)
}
