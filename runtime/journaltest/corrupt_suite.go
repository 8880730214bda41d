package journaltest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/resumegen/resumegen/runtime/journal"
	"github.com/resumegen/resumegen/runtime/resume"
)

// CorruptAttack damages one row of a run's journal with plain SQL, as a
// bad migration, a hand edit or a disk error would, and says how the run
// must stop.
type CorruptAttack struct {
	Name string
	// SQL is the statement that damages the row: {run} stands for the
	// run's id as a quoted SQL literal. The tables are named unqualified
	// (resume_runs, resume_steps).
	SQL string
	// Step is the step key the parked run names ("" for the run's own
	// row), and Why a text its reason holds.
	Step, Why string
	// Repair, if set, is the statement a person runs to repair the row
	// (with {run} as in SQL); a retry then finishes the run without
	// executing again what the journal holds. Without it, the run is
	// cancelled: the other way out.
	Repair string
}

// CorruptAttacks are the attacks every journal stores and the suite runs:
// their SQL is the same for SQLite and PostgreSQL.
var CorruptAttacks = []CorruptAttack{
	{"a step status that is no status", `UPDATE resume_steps SET status = 'bogus' WHERE run_id = {run} AND step_key = 'Notify'`,
		"Notify", `status "bogus" is not a step status`,
		`UPDATE resume_steps SET status = 'succeeded' WHERE run_id = {run} AND step_key = 'Notify'`},
	{"a history that is not a list", `UPDATE resume_steps SET status = 'failed', history = '{"x": 1}' WHERE run_id = {run} AND step_key = 'Fetch'`,
		"Fetch", "history", ""},
	{"a result that does not decode", `UPDATE resume_steps SET result = '{"x": 1}' WHERE run_id = {run} AND step_key = 'Fetch'`,
		"Fetch", "does not decode", `UPDATE resume_steps SET result = '"data"' WHERE run_id = {run} AND step_key = 'Fetch'`},
	{"a NULL result where the step returns a value", `UPDATE resume_steps SET result = NULL WHERE run_id = {run} AND step_key = 'Loop#2'`,
		"Loop#2", "cannot be null", `UPDATE resume_steps SET result = '1' WHERE run_id = {run} AND step_key = 'Loop#2'`},
	{"an input that is not an array", `UPDATE resume_runs SET input = '{"Loop": 2}' WHERE run_id = {run}`,
		"", "is not a JSON array", `UPDATE resume_runs SET input = '[{"Loop": 2}]' WHERE run_id = {run}`},
	{"an input that does not decode", `UPDATE resume_runs SET input = '[{"Loop": "two"}]' WHERE run_id = {run}`,
		"", "decode workflow input argument 1", ""},
}

// RunCorruptAttacks proves, for each attack, that a corrupt row stops its
// own run and not the queue: a worker with three other runs queued
// behind the damaged one (the oldest) executes those three, parks the
// damaged run in needs_attention (journal) naming the row and why, logs
// it once, claims it once, executes none of its steps again, and LoadRun
// still reads the run and its journal. It needs h.Exec.
func RunCorruptAttacks(t *testing.T, h Harness, attacks []CorruptAttack) {
	if h.Exec == nil {
		t.Skip("the harness has no Exec: the journal's rows cannot be damaged with SQL")
	}
	open := h.open
	ctx := context.Background()
	for _, a := range attacks {
		t.Run(a.Name+" parks its run, and the queue goes on", func(t *testing.T) {
			j := open(t)
			bad := newRunID(t)
			if !startCrashing(t, j, bad, Plan{Loop: 2}, resume.Fault{Step: "Loop#2", Point: resume.FaultAfter}) {
				t.Fatal("no crash")
			}
			if err := h.Exec(ctx, strings.ReplaceAll(a.SQL, "{run}", quoteSQL(bad))); err != nil {
				t.Fatalf("damage the row: %v", err)
			}
			logs := &lockedBuffer{}
			e := resume.NewEngine(j, resume.WithLogger(slog.New(slog.NewTextHandler(logs, nil))), resume.WithLease(time.Second))
			var good []string
			for i := 0; i < 3; i++ {
				id := newRunID(t)
				if _, err := e.Enqueue(ctx, id, Chain, Plan{Loop: 1}); err != nil {
					t.Fatal(err)
				}
				good = append(good, id)
			}
			before := map[string]int{}
			for _, s := range []string{"Fetch", "Notify", "Write", "Loop"} {
				before[s] = seen.count(bad, s)
			}
			stop := startWorker(ctx, e, resume.WorkerOptions{PollInterval: 5 * time.Millisecond})
			waitFor(t, j, 3, journal.StatusSucceeded)
			waitFor(t, j, 1, journal.StatusNeedsAttention)
			time.Sleep(100 * time.Millisecond) // twenty more polls: nothing claims it again
			if err := stop(); err != nil {
				t.Fatal(err)
			}
			for _, id := range good {
				if r, _, err := j.LoadRun(ctx, id); err != nil || r.Status != journal.StatusSucceeded {
					t.Errorf("queued run %s: %s, %v; want succeeded", id, r.Status, err)
				}
			}
			r, steps, err := j.LoadRun(ctx, bad)
			if err != nil {
				t.Fatalf("LoadRun of the damaged run: %v; want the run and its rows, the bad one included", err)
			}
			if r.Status != journal.StatusNeedsAttention || r.AttentionKind != journal.AttentionKindJournal || r.AttentionStep != a.Step ||
				!strings.HasPrefix(r.Error, "journal row ") || !strings.Contains(r.Error, a.Why) {
				t.Errorf("damaged run: %s (%s) at %q: %q; want needs_attention (journal) at %q, naming the row and %q",
					r.Status, r.AttentionKind, r.AttentionStep, r.Error, a.Step, a.Why)
			}
			if len(steps) != 5 {
				t.Errorf("LoadRun returned %d rows, want all 5", len(steps))
			}
			if r.Attempts != 2 {
				t.Errorf("damaged run entered %d times, want 2 (the crashed entry, then one claim that parked it)", r.Attempts)
			}
			for s, n := range before {
				if got := seen.count(bad, s); got != n {
					t.Errorf("%s executed %d more times on a corrupt journal", s, got-n)
				}
			}
			if n := strings.Count(logs.String(), "run needs attention"); n != 1 || !strings.Contains(logs.String(), bad) {
				t.Errorf("the worker logged %d times that a run needs attention, want once, naming %s:\n%s", n, bad, logs)
			}
			if n := strings.Count(logs.String(), "level=WARN"); n != 1 {
				t.Errorf("the worker logged %d warnings, want 1:\n%s", n, logs)
			}

			if a.Repair == "" {
				// The other way out: cancel it.
				if err := e.Cancel(ctx, bad, journal.CancelOptions{}); err != nil {
					t.Fatalf("cancel the damaged run: %v", err)
				}
				if r, _, _ := j.LoadRun(ctx, bad); r.Status != journal.StatusCancelled {
					t.Errorf("after cancel: %s, want cancelled", r.Status)
				}
				return
			}
			// A retry before the repair parks it again; after it, the run
			// finishes, executing nothing the journal holds.
			if _, err := e.Retry(ctx, bad); !errors.Is(err, resume.ErrNeedsAttention) {
				t.Errorf("retry before the repair: %v, want parked again", err)
			}
			if err := h.Exec(ctx, strings.ReplaceAll(a.Repair, "{run}", quoteSQL(bad))); err != nil {
				t.Fatalf("repair the row: %v", err)
			}
			res, err := e.Retry(ctx, bad)
			if err != nil || res.Status != journal.StatusSucceeded {
				t.Fatalf("retry after the repair: %+v, %v; want succeeded", res, err)
			}
			for s, n := range before {
				if got := seen.count(bad, s); got != n {
					t.Errorf("%s executed %d more times after the repair, want 0", s, got-n)
				}
			}
		})
	}
}

// runCorrupt is the part of the suite that damages rows with plain SQL.
func runCorrupt(t *testing.T, h Harness) {
	if h.Exec == nil {
		t.Skip("the harness has no Exec: the journal's rows cannot be damaged with SQL")
	}
	ctx := context.Background()
	RunCorruptAttacks(t, h, CorruptAttacks)
	t.Run("a run status that is no status is named, not called busy, and the queue goes on", func(t *testing.T) {
		j := h.open(t)
		e := resume.NewEngine(j)
		bad := newRunID(t)
		if _, err := e.Enqueue(ctx, bad, Chain, Plan{}); err != nil {
			t.Fatal(err)
		}
		if err := h.Exec(ctx, `UPDATE resume_runs SET status = 'bogus' WHERE run_id = `+quoteSQL(bad)); err != nil {
			t.Fatalf("damage the row: %v", err)
		}
		good := newRunID(t)
		if _, err := e.Enqueue(ctx, good, Chain, Plan{}); err != nil {
			t.Fatal(err)
		}
		stop := startWorker(ctx, e, resume.WorkerOptions{PollInterval: 5 * time.Millisecond})
		waitFor(t, j, 1, journal.StatusSucceeded)
		if err := stop(); err != nil {
			t.Fatal(err)
		}
		_, err := e.Resume(ctx, bad)
		if !errors.Is(err, journal.ErrRunBusy) || !strings.Contains(err.Error(), `status "bogus" is not a run status`) || strings.Contains(err.Error(), "held by") {
			t.Errorf("resume: %v; want the bad status named, not a lease holder", err)
		}
		r, _, err := j.LoadRun(ctx, bad)
		if err != nil || !strings.Contains(r.Problem(), "is not a run status") {
			t.Errorf("LoadRun: problem %q, %v; want the status named", r.Problem(), err)
		}
		if n := seen.count(bad, "Fetch"); n != 0 {
			t.Errorf("Fetch executed %d times for a run with no status", n)
		}
	})
}

// quoteSQL quotes s as an SQL string literal.
func quoteSQL(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// lockedBuffer is a log sink the worker's goroutines share.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// runResolveChecked is the part of the suite that proves operator input is
// checked: a resolution whose result does not have the shape of what the
// step journals is refused and changes nothing; one that fits is taken;
// and a result that reached the journal unchecked, and does not decode,
// parks the run (journal) instead of leaving it pending forever.
func runResolveChecked(t *testing.T, h Harness) {
	ctx := context.Background()
	parked := func(t *testing.T, j journal.Journal, e *resume.Engine) string {
		t.Helper()
		id := newRunID(t)
		if _, err := e.Start(ctx, id, Transfer, TransferPlan{NaN: true}); !errors.Is(err, resume.ErrNeedsAttention) {
			t.Fatalf("start: %v, want Measure parked", err)
		}
		return id
	}
	t.Run("a result that does not fit the step is refused, and the run stays parked", func(t *testing.T) {
		j := h.open(t)
		e := resume.NewEngine(j)
		id := parked(t, j, e)
		for _, tc := range []struct{ result, why string }{
			{`{"x": 1}`, "want a number (float64), have an object"},
			{`"2.5"`, "want a number (float64), have the string"},
			{`null`, "cannot be null"},
			{``, "cannot be null"}, // -done without -result means null
		} {
			err := e.Resolve(ctx, id, "Measure", journal.Resolution{Done: true, Result: json.RawMessage(tc.result)})
			if err == nil || !strings.Contains(err.Error(), tc.why) || !strings.Contains(err.Error(), "run "+id+", step Measure") {
				t.Errorf("resolve -done -result %s: %v; want refused, naming run and step, with %q", tc.result, err, tc.why)
			}
		}
		r, steps, _ := j.LoadRun(ctx, id)
		if r.Status != journal.StatusNeedsAttention || stepNamed(steps, "Measure").Status != journal.StepInFlight {
			t.Errorf("after refused resolutions: run %s, Measure %s; want both unchanged", r.Status, stepNamed(steps, "Measure").Status)
		}
		if err := e.Resolve(ctx, id, "Measure", journal.Resolution{Done: true, Result: json.RawMessage(`2.5`)}); err != nil {
			t.Fatalf("resolve -done -result 2.5: %v", err)
		}
		res, err := e.Resume(ctx, id)
		if err != nil || res.Status != journal.StatusSucceeded {
			t.Errorf("resume after a fitting resolution: %+v, %v", res, err)
		}
	})
	t.Run("a once step that returns only an error takes null and nothing else", func(t *testing.T) {
		j := h.open(t)
		id := newRunID(t)
		if !startCrashing(t, j, id, Plan{}, resume.Fault{Step: "Notify", Point: resume.FaultEffect}) {
			t.Fatal("no crash")
		}
		e := resume.NewEngine(j)
		if _, err := e.Resume(ctx, id); !errors.Is(err, resume.ErrNeedsAttention) {
			t.Fatalf("resume: %v, want Notify parked", err)
		}
		if err := e.Resolve(ctx, id, "Notify", journal.Resolution{Done: true, Result: json.RawMessage(`{"x": 1}`)}); err == nil ||
			!strings.Contains(err.Error(), "journals nothing but null") {
			t.Errorf("resolve Notify with an object: %v, want refused", err)
		}
		if err := e.Resolve(ctx, id, "Notify", journal.Resolution{Done: true}); err != nil {
			t.Errorf("resolve Notify -done: %v", err)
		}
	})
	t.Run("a resolved result that does not decode parks the run, naming the row", func(t *testing.T) {
		j := h.open(t)
		e := resume.NewEngine(j)
		id := parked(t, j, e)
		// The journal takes what it is given: this is what an unchecked
		// resolution (an older resumectl, plain SQL) leaves.
		if err := j.Resolve(ctx, id, "Measure", journal.Resolution{Done: true, Result: json.RawMessage(`{"x": 1}`)}); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 2; i++ {
			res, err := e.Resume(ctx, id)
			if !errors.Is(err, resume.ErrNeedsAttention) || res.AttentionKind != journal.AttentionKindJournal || res.AttentionStep != "Measure" ||
				!strings.HasPrefix(res.Error, "journal row Measure: result does not decode") {
				t.Fatalf("resume %d: %+v, %v; want needs attention (journal) at Measure", i+1, res, err)
			}
		}
		if n := seen.count(id, "Measure"); n != 1 {
			t.Errorf("Measure executed %d times, want 1", n)
		}
	})
}
