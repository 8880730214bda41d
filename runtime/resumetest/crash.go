package resumetest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sort"
	"strings"
	"testing"

	"github.com/resumegen/resumegen/runtime/internal/stephook"
	"github.com/resumegen/resumegen/runtime/journal"
	"github.com/resumegen/resumegen/runtime/resume"
)

// CrashEverywhere proves that the workflow wf resumes correctly after a
// crash at any point, with a harness of default options; see
// [Harness.CrashEverywhere]. It is the test a workflow needs:
//
//	func TestOnboardSurvivesCrashes(t *testing.T) {
//		resumetest.CrashEverywhere(t, Onboard, Input{CustomerID: "c-1"})
//	}
func CrashEverywhere(t testing.TB, wf any, args ...any) *Report {
	t.Helper()
	return New(t).CrashEverywhere(wf, args...)
}

// Report is what [Harness.CrashEverywhere] found: one case per step
// execution and fault point.
type Report struct {
	// Executions are the step executions of the uninterrupted run.
	Executions []Execution
	// Result is the uninterrupted run's result, which every case's
	// resumed run must equal.
	Result resume.Result
	Cases  []Case
}

// Case is one simulated crash.
type Case struct {
	// Name is the case's name: the step key and the point, STEP:POINT.
	Name string
	Step string
	// Point is the fault point: before, effect or after, or [Settled].
	Point resume.FaultPoint
	// Parked is true when the run stopped for a person after the crash:
	// a once step crashed at effect, whose outcome is unknown. That is
	// correct; the case then resolves the step as done, with the value
	// its crashed execution returned, and resumes the run to its end.
	Parked bool
	// Problems say how the resumed run differed from the uninterrupted
	// one beyond the step's policy; none when the case passed.
	Problems []string
}

// Settled is the crash point of an await that waited: right after its
// row is settled (its event taken, or its timeout journaled). An await's
// after point is its first row: the waiting one when the run waited, the
// settled one when the event had come already.
const Settled resume.FaultPoint = "settled"

// crashRunID is the id of the run each case starts, on its own journal.
const crashRunID = "resumetest-crash"

// CrashEverywhere runs wf with args once uninterrupted, recording its
// outcome and the executions of each step's code; then, for each step
// execution (each step key) and each fault point of it (before, effect,
// after), it runs wf anew on a fresh journal, crashes the process there
// (simulated in process: from that point the crashed engine writes
// nothing more to the journal, and its goroutine unwinds), and resumes the
// run in a fresh engine, as a new process would.
//
// A case fails unless the resumed run's outcome (status, output, error
// text) equals the uninterrupted run's, its body, resumed, reached the same
// steps in the same order (replayed or executed: a drift the journal hides
// is still reported), and every step's code executed as often, but for
// what the crashed step's policy allows: a default or tx
// step crashed at effect executes once more (a tx step's transaction
// still commits once: never twice), and a once step crashed at effect
// parks the run for a person, which is correct and reported (the case
// resolves it done and resumes). With a *testing.T each case is a subtest
// named STEP:POINT; otherwise failures are reported on the harness's test,
// prefixed with the case's name.
//
// An await crashes after its first row and, when the run waited there,
// also at [Settled]. With [WithSignal] every run, uninterrupted or
// crashed, receives the event when it first waits for it; without, an
// await is tested on its timeout only.
//
// A step key reached several times (a step of a child run with the key of
// a parent's step) is crashed at its first execution only.
func (h *Harness) CrashEverywhere(wf any, args ...any) *Report {
	h.t.Helper()
	h.check(wf)
	c := &crasher{h: h, wf: wf, args: args}
	base := c.run(h.t, nil, journaled{})
	if base.harnessErr != "" {
		h.t.Fatalf("resumetest: the uninterrupted run: %s", base.harnessErr)
	}
	rep := &Report{Executions: base.execs, Result: base.res}
	for _, cs := range crashPoints(base) {
		c.each(cs.Name, func(t testing.TB, prefix string) {
			at := crashedStep(base, cs.Step)
			got := c.run(t, &resume.Fault{Step: cs.Step, Point: cs.Point}, at)
			cs.Parked = got.parked
			if got.unresolved {
				t.Logf("%sonce step %s crashed at effect parked the run for a person, as it must; not resolved (%v), so the run is not compared further", prefix, cs.Step, errUnresolvable)
				return
			}
			cs.Problems = compare(base, got, cs, at)
			for _, p := range cs.Problems {
				t.Errorf("%s%s", prefix, p)
			}
			if got.parked && len(cs.Problems) == 0 {
				t.Logf("%sonce step %s crashed at effect parked the run for a person, as it must; resolved done, the run finished as the uninterrupted one", prefix, cs.Step)
			}
		})
		rep.Cases = append(rep.Cases, cs)
	}
	return rep
}

// each runs case name as a subtest when the harness's test can have some,
// otherwise inline with its name prefixed to what it reports.
func (c *crasher) each(name string, f func(t testing.TB, prefix string)) {
	if t, ok := c.h.t.(interface {
		Run(string, func(*testing.T)) bool
	}); ok {
		t.Run(name, func(t *testing.T) { f(t, "") })
		return
	}
	f(c.h.t, "crash at "+name+": ")
}

type crasher struct {
	h    *Harness
	wf   any
	args []any
}

// outcome is what one run of a case came to.
type outcome struct {
	res        resume.Result
	execs      []Execution
	counts     map[string]int // executions by run and step key
	journal    []journaled    // the steps journaled, in order (the uninterrupted run)
	paths      map[string][]string
	commits    map[string]int
	waited     map[string]bool // awaits that waited, by execKey (the uninterrupted run)
	crashed    bool
	parked     bool
	unresolved bool   // parked, and left so: the step's value is not known
	harnessErr string // the engine failed for another reason than the run's outcome
}

// crashSignal is the panic that stands for the process's death.
type crashSignal struct{}

func isCrash(v any) bool { _, ok := v.(crashSignal); return ok }

const (
	crashedOwner = "resumetest-crashed"
	resumedOwner = "resumetest-resumed"
)

// run executes one case on a fresh journal: uninterrupted when f is nil,
// else crashed at f and resumed.
func (c *crasher) run(t testing.TB, f *resume.Fault, at journaled) outcome {
	t.Helper()
	clock := c.h.cfg.clock
	clock.Set(c.h.start)
	rec := newRecorder(c.h.cfg.doubles, t.Errorf)
	base := openJournal(t, clock)
	ctx := stephook.With(c.h.cfg.baseContext(t), rec)
	engine := func(j journal.Journal, own ...resume.Option) *resume.Engine {
		quiet := resume.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))
		opts := append(append([]resume.Option{resume.WithClock(clock), quiet}, c.h.cfg.engineOpts...), own...)
		return resume.NewEngine(j, opts...)
	}
	first := &crashJournal{Journal: base, rec: rec}
	send := &sender{signals: c.h.cfg.signals, sent: map[string]bool{}}
	own := []resume.Option{resume.WithOwner(crashedOwner), resume.WithCrashPanics(isCrash)}
	if f != nil && f.Point == Settled {
		first.settle = execKey(at.runID, f.Step)
	} else if f != nil {
		own = append(own, resume.WithFault(*f), resume.WithFaultAction(func() {
			first.crash()
			panic(crashSignal{})
		}))
	}
	var o outcome
	res, err := c.start(ctx, engine(first, own...), send, &o.crashed)
	if o.crashed {
		// The process "ends": its liveness signal goes, and a new one
		// takes the run over at once, executing steps again.
		rec.dead.Store(false)
		if err := base.Release(context.Background(), crashedOwner); err != nil {
			t.Fatalf("resumetest: release the crashed engine's liveness: %v", err)
		}
		e := engine(&crashJournal{Journal: base, rec: rec}, resume.WithOwner(resumedOwner))
		res, err = fastForward(ctx, e, clock, send, crashRunID)
		if f != nil && errors.Is(err, resume.ErrNeedsAttention) && parkedAt(ctx, base, at.runID, f.Step) {
			o.parked = true
			switch err = resolveDone(ctx, e, rec, at.runID, f.Step); {
			case errors.Is(err, errUnresolvable):
				o.unresolved = true
			case err != nil:
				o.harnessErr = err.Error()
			default:
				res, err = fastForward(ctx, e, clock, send, crashRunID)
			}
		}
	}
	o.res = res
	if err != nil && !errors.As(err, new(*resume.RunError)) && o.harnessErr == "" {
		o.harnessErr = err.Error()
	}
	if f == nil {
		o.waited = first.awaitsWaited()
		var jerr error
		if o.journal, jerr = journalOf(ctx, base, crashRunID); jerr != nil {
			t.Fatalf("resumetest: read the journal of the uninterrupted run: %v", jerr)
		}
	}
	o.execs = rec.executions()
	o.counts = map[string]int{}
	for _, x := range o.execs {
		o.counts[execKey(x.RunID, x.StepKey)]++
	}
	o.paths = map[string][]string{}
	for _, id := range rec.runs() {
		o.paths[id] = rec.path(id)
	}
	rec.mu.Lock()
	o.commits = rec.commits
	rec.mu.Unlock()
	return o
}

// start starts the case's run on e and drives it to its end, moving the
// clock through its waits, reporting through crashed whether the process
// crashed on the way.
func (c *crasher) start(ctx context.Context, e *resume.Engine, send *sender, crashed *bool) (res resume.Result, err error) {
	defer func() {
		if v := recover(); v != nil {
			if !isCrash(v) {
				panic(v)
			}
			*crashed = true
		}
	}()
	res, err = e.Start(ctx, crashRunID, c.wf, c.args...)
	if errors.Is(err, resume.ErrRunWaiting) {
		res, err = fastForward(ctx, e, c.h.cfg.clock, send, crashRunID)
	}
	return res, err
}

// errUnresolvable: the value of a parked step cannot be told from what it
// returned (its value does not marshal, or its workflow's code does not
// describe what it journals).
var errUnresolvable = errors.New("its journaled value cannot be told from what the step returned")

// parkedAt reports whether run runID waits for a person at its in_flight
// step key (a once step whose outcome is unknown).
func parkedAt(ctx context.Context, j journal.Journal, runID, key string) bool {
	run, _, err := j.LoadRun(ctx, runID)
	return err == nil && run.Status == resume.StatusNeedsAttention && run.AttentionStep == key && run.AttentionKind == resume.AttentionKindStep
}

// resolveDone resolves the parked step key of run runID as done, with the
// value its crashed execution returned, as a person who checked would.
func resolveDone(ctx context.Context, e *resume.Engine, rec *recorder, runID, key string) error {
	result := rec.result(runID, key)
	if result == nil {
		return errUnresolvable
	}
	return e.Resolve(ctx, runID, key, resume.Resolution{Done: true, Result: result})
}

// journaled is a step execution of the uninterrupted run, as its journal
// shows it.
type journaled struct {
	runID, key, policy string
	ok                 bool // it succeeded: it passed its effect and after points
	// wait is a row of a Sleep or an Await, no step of the workflow: it
	// has an after point only (its row written).
	wait bool
}

// journalOf lists the steps of run runID and of its child runs, in the
// order they executed: a child run's steps before the parent's step that
// ran it.
func journalOf(ctx context.Context, j journal.Journal, runID string) ([]journaled, error) {
	run, steps, err := j.LoadRun(ctx, runID)
	if err != nil {
		return nil, err
	}
	policies := map[string]string{}
	if d, err := stephook.Describe(run.Workflow); err == nil {
		for _, s := range d.Steps {
			policies[s.Name] = s.Policy
		}
	}
	sort.Slice(steps, func(a, b int) bool { return steps[a].Seq < steps[b].Seq })
	var out []journaled
	for _, s := range steps {
		child, _, err := j.LoadRun(ctx, resume.ChildRunID(runID, s.StepKey))
		if err == nil && child.Parent == runID {
			inner, err := journalOf(ctx, j, child.RunID)
			if err != nil {
				return nil, err
			}
			out = append(out, inner...)
		}
		p, step := policies[s.Name]
		out = append(out, journaled{runID: runID, key: s.StepKey, policy: p, ok: s.Status == journal.StepSucceeded, wait: !step})
	}
	return out, nil
}

// crashPoints lists the cases of the uninterrupted run: each step key
// journaled, at before, and, for a step that succeeded, at effect and
// after (a failed one reaches neither); a Sleep's or an Await's row at
// after (its row written), and an await that waited at [Settled] too. A key met again (in a child run)
// is crashed at its first execution only: a fault names a key.
func crashPoints(base outcome) []Case {
	var cases []Case
	seen := map[string]bool{}
	for _, s := range base.journal {
		if seen[s.key] {
			continue
		}
		seen[s.key] = true
		points := []resume.FaultPoint{resume.FaultBefore}
		if s.wait {
			points = []resume.FaultPoint{resume.FaultAfter}
		} else if s.ok {
			points = append(points, resume.FaultEffect, resume.FaultAfter)
		}
		if s.wait && base.waited[execKey(s.runID, s.key)] {
			points = append(points, Settled)
		}
		for _, p := range points {
			cases = append(cases, Case{Name: s.key + ":" + string(p), Step: s.key, Point: p})
		}
	}
	return cases
}

// crashedStep returns the first execution of step key in base.
func crashedStep(base outcome, key string) journaled {
	for _, s := range base.journal {
		if s.key == key {
			return s
		}
	}
	return journaled{}
}

// compare says how got, crashed at cs, differs from the uninterrupted run
// base beyond what the crashed step's policy allows.
func compare(base, got outcome, cs Case, crashed journaled) []string {
	var problems []string
	if got.harnessErr != "" {
		problems = append(problems, "the resumed run did not finish: "+got.harnessErr)
	}
	if !got.crashed {
		problems = append(problems, fmt.Sprintf("the run never reached %s: it took another path than the uninterrupted run", cs.Name))
	}
	if want, have := describe(base.res), describe(got.res); want != have {
		problems = append(problems, fmt.Sprintf("the resumed run's outcome differs:\n\tgot:  %s\n\twant: %s", have, want))
	}
	problems = append(problems, comparePaths(base, got)...)
	extra := execKey(crashed.runID, cs.Step)
	keys := map[string]bool{}
	for k := range base.counts {
		keys[k] = true
	}
	for k := range got.counts {
		keys[k] = true
	}
	var sorted []string
	for k := range keys {
		sorted = append(sorted, k)
	}
	sort.Strings(sorted)
	for _, k := range sorted {
		want, have := base.counts[k], got.counts[k]
		allowed := want
		if k == extra && cs.Point == resume.FaultEffect && crashed.policy != "once" {
			allowed++ // its effect happened, its journal row did not
		}
		if have < want || have > allowed {
			problems = append(problems, fmt.Sprintf("%s executed %s, the uninterrupted run %s%s", shown(k), times(have), times(want), allowance(k == extra, cs, crashed)))
		}
		if base.commits[k] != got.commits[k] {
			problems = append(problems, fmt.Sprintf("%s (tx) committed %s, the uninterrupted run %s", shown(k), times(got.commits[k]), times(base.commits[k])))
		}
	}
	return problems
}

// comparePaths says where the body of a resumed run, in its last entry,
// reached other steps than the uninterrupted run's: it decided something
// from what is not journaled. Replayed steps count: a drift the journal
// hides (a step skipped whose row exists) is still a drift.
func comparePaths(base, got outcome) []string {
	var problems []string
	ids := map[string]bool{}
	for id := range base.paths {
		ids[id] = true
	}
	for id := range got.paths {
		ids[id] = true
	}
	var sorted []string
	for id := range ids {
		sorted = append(sorted, id)
	}
	sort.Strings(sorted)
	for _, id := range sorted {
		want, have := base.paths[id], got.paths[id]
		i := 0
		for i < len(want) && i < len(have) && want[i] == have[i] {
			i++
		}
		if i == len(want) && i == len(have) {
			continue
		}
		at := func(p []string) string {
			if i < len(p) {
				return "step " + p[i]
			}
			return "the end of the body"
		}
		who := "the resumed body"
		if id != crashRunID {
			who = "the body of run " + id
		}
		problems = append(problems, fmt.Sprintf("%s took another path: after %s it reached %s, the uninterrupted run %s",
			who, pathPrefix(want[:i]), at(have), at(want)))
	}
	return problems
}

func pathPrefix(keys []string) string {
	if len(keys) == 0 {
		return "its start"
	}
	return strings.Join(keys, ", ")
}

func allowance(isCrashed bool, cs Case, x journaled) string {
	switch {
	case isCrashed && cs.Point == resume.FaultEffect && x.policy != "once":
		return fmt.Sprintf(" (a %s step crashed at effect may execute once more, no more)", x.policy)
	case isCrashed:
		return fmt.Sprintf(" (a %s step crashed at %s executes as often)", x.policy, cs.Point)
	}
	return " (only the crashed step may execute more)"
}

// shown names an execution key for a person: the step key, with its run
// when it is a child run's.
func shown(k string) string {
	run, key, _ := strings.Cut(k, "\x00")
	if run == crashRunID {
		return "step " + key
	}
	return fmt.Sprintf("step %s of run %s", key, run)
}

func times(n int) string {
	if n == 1 {
		return "once"
	}
	return fmt.Sprintf("%d times", n)
}

// describe writes a run's outcome for comparison: status, output and
// error text.
func describe(r resume.Result) string {
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
