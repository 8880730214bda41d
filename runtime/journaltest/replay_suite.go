package journaltest

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/resumegen/resumegen/runtime/journal"
	"github.com/resumegen/resumegen/runtime/resume"
)

// runReplay is the part of the suite that proves faithful replay: the
// outcome the body received from a step, value and error, is what a resumed
// run receives, and only an operator's retry executes a failure again.
func runReplay(t *testing.T, open func(t *testing.T) journal.Journal) {
	ctx := context.Background()
	// uninterrupted returns what Transfer returns for p in a run that never
	// dies, on a journal of its own.
	uninterrupted := func(t *testing.T, p TransferPlan) (TransferOut, resume.Result) {
		t.Helper()
		res, _ := resume.NewEngine(open(t)).Start(ctx, newRunID(t), Transfer, p)
		var out TransferOut
		if len(res.Output) > 0 {
			if err := res.Decode(&out); err != nil {
				t.Fatal(err)
			}
		}
		return out, res
	}
	outOf := func(t *testing.T, res resume.Result) TransferOut {
		t.Helper()
		var out TransferOut
		if err := res.Decode(&out); err != nil {
			t.Fatalf("run %s (%s): %v", res.RunID, res.Status, err)
		}
		return out
	}

	t.Run("a handled permanent failure replays after a crash: the same branch", func(t *testing.T) {
		p := TransferPlan{DeclineDeposit: true}
		want, _ := uninterrupted(t, p)
		if want.Branch != "refunded" || !want.DepositPermanent || want.DepositErr != ErrDeclined.Error() {
			t.Fatalf("uninterrupted run = %+v, want the refunded branch after a permanent decline", want)
		}
		j := open(t)
		id := newRunID(t)
		if !startTransferCrashing(t, j, id, p, resume.Fault{Step: "Refund", Point: resume.FaultAfter}) {
			t.Fatal("no crash")
		}
		res, err := resume.NewEngine(j).Resume(ctx, id)
		if err != nil {
			t.Fatalf("resume: %v", err)
		}
		if got := outOf(t, res); got != want {
			t.Errorf("resumed run saw %+v, an uninterrupted one %+v", got, want)
		}
		if n := seen.count(id, "Deposit"); n != 1 {
			t.Errorf("Deposit executed %d times, want 1: its failure was delivered, it is history", n)
		}
		if n := seen.count(id, "Refund"); n != 1 {
			t.Errorf("Refund executed %d times, want 1", n)
		}
		_, steps, _ := j.LoadRun(ctx, id)
		dep := stepNamed(steps, "Deposit")
		if dep.Status != journal.StepFailed || !dep.Final || dep.Attempt != 1 || len(dep.History) != 1 || !dep.History[0].Permanent {
			t.Errorf("Deposit row = %+v, want failed, final, one permanent attempt in its history", dep)
		}
	})

	t.Run("a permanent failure journaled just before a crash is not retried", func(t *testing.T) {
		p := TransferPlan{DeclineDeposit: true}
		want, _ := uninterrupted(t, p)
		j := &crashAfterWrite{Journal: open(t), when: func(s journal.StepRecord) bool {
			return s.Name == "Deposit" && s.Status == journal.StepFailed
		}}
		id := newRunID(t)
		if !startTransferCrashing(t, j, id, p, resume.Fault{}) {
			t.Fatal("no crash")
		}
		res, err := resume.NewEngine(j.Journal).Resume(ctx, id)
		if err != nil {
			t.Fatalf("resume: %v", err)
		}
		if got := outOf(t, res); got != want {
			t.Errorf("resumed run saw %+v, an uninterrupted one %+v", got, want)
		}
		if n := seen.count(id, "Deposit"); n != 1 {
			t.Errorf("Deposit executed %d times, want 1: a crash never turns a permanent failure into a retry", n)
		}
	})

	t.Run("a crash mid-retry carries on with the attempts left, and the history keeps every attempt", func(t *testing.T) {
		j := &crashAfterWrite{Journal: open(t), when: func(s journal.StepRecord) bool {
			return s.Name == "Lookup" && s.Status == journal.StepFailed && s.Attempt == 2
		}}
		id := newRunID(t)
		p := TransferPlan{FailLookup: 3} // 3 attempts: the run fails with Lookup
		if !startTransferCrashing(t, j, id, p, resume.Fault{}) {
			t.Fatal("no crash")
		}
		_, steps, _ := j.LoadRun(ctx, id)
		if l := stepNamed(steps, "Lookup"); l.Final || l.Attempt != 2 {
			t.Fatalf("Lookup row before the resume = %+v, want attempt 2, not final", l)
		}
		res, err := resume.NewEngine(j.Journal).Resume(ctx, id)
		if !errors.Is(err, resume.ErrRunFailed) || res.FailedStep != "Lookup" {
			t.Fatalf("resume: %+v, %v; want failed at Lookup", res, err)
		}
		if n := seen.count(id, "Lookup"); n != 3 {
			t.Errorf("Lookup executed %d times, want 3: 2 before the crash, 1 left in the budget", n)
		}
		if res.Error != errTransient.Error() {
			t.Errorf("run error = %q, want the step's own %q, not a new text", res.Error, errTransient)
		}
		_, steps, _ = j.LoadRun(ctx, id)
		l := stepNamed(steps, "Lookup")
		if !l.Final || l.Attempt != 3 || len(l.History) != 3 {
			t.Fatalf("Lookup row = %+v, want final at attempt 3 with 3 attempts in its history", l)
		}
		for i, a := range l.History {
			if a.Attempt != i+1 || a.Error != errTransient.Error() || a.Permanent || a.StartedAt.IsZero() {
				t.Errorf("history[%d] = %+v", i, a)
			}
		}
	})

	t.Run("a spent budget journaled just before a crash replays its error, not a new one", func(t *testing.T) {
		j := &crashAfterWrite{Journal: open(t), when: func(s journal.StepRecord) bool {
			return s.Name == "Lookup" && s.Status == journal.StepFailed && s.Attempt == 3
		}}
		id := newRunID(t)
		if !startTransferCrashing(t, j, id, TransferPlan{FailLookup: 5}, resume.Fault{}) {
			t.Fatal("no crash")
		}
		res, err := resume.NewEngine(j.Journal).Resume(ctx, id)
		if !errors.Is(err, resume.ErrRunFailed) || res.Error != errTransient.Error() || res.FailedStep != "Lookup" {
			t.Fatalf("resume: %+v, %v; want failed at Lookup with %q", res, err, errTransient)
		}
		if n := seen.count(id, "Lookup"); n != 3 {
			t.Errorf("Lookup executed %d times, want 3 (its budget)", n)
		}
	})

	t.Run("a spent budget not yet delivered is the outcome: journaled final, not executed", func(t *testing.T) {
		// What a shutdown during the last attempt, or an older journal,
		// leaves: the budget spent, the row not final.
		j := open(t)
		id := newRunID(t)
		journalRows(t, j, id, transferDef.QualifiedName(), transferDef.Version, `[{}]`,
			journal.StepRecord{StepKey: "Lookup", Name: "Lookup", Status: journal.StepFailed, Error: "lookup timed out"})
		// journalRows writes attempt 1; Lookup has 3: spend them.
		run, _, err := j.Claim(ctx, journal.ClaimRequest{RunID: id, Owner: "earlier2", Lease: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		lease := journal.Lease{RunID: id, Owner: "earlier2", Epoch: run.Epoch}
		row := journal.StepRecord{RunID: id, StepKey: "Lookup", Name: "Lookup", Status: journal.StepFailed, Error: "lookup timed out",
			Attempt: 3, Seq: 3, StartedAt: time.Now(), FinishedAt: time.Now()}
		if err := j.WriteStep(ctx, lease, row); err != nil {
			t.Fatal(err)
		}
		run.Status = journal.StatusPending
		if err := j.FinishRun(ctx, lease, run); err != nil {
			t.Fatal(err)
		}
		res, err := resume.NewEngine(j).Resume(ctx, id)
		if !errors.Is(err, resume.ErrRunFailed) || res.Error != "lookup timed out" || res.FailedStep != "Lookup" {
			t.Fatalf("resume: %+v, %v; want failed at Lookup with its journaled error", res, err)
		}
		if n := seen.count(id, "Lookup"); n != 0 {
			t.Errorf("Lookup executed %d times, want 0: its budget was spent", n)
		}
		_, steps, _ := j.LoadRun(ctx, id)
		if l := stepNamed(steps, "Lookup"); !l.Final || l.Attempt != 3 || len(l.History) != 1 || l.History[0].Error != "lookup timed out" {
			t.Errorf("Lookup row = %+v, want final at attempt 3, its last attempt in the history", l)
		}
	})

	t.Run("a failure during shutdown is not final: the resumed run carries on", func(t *testing.T) {
		j := open(t)
		id := newRunID(t)
		cctx, cancel := context.WithCancel(ctx)
		defer cancel()
		// Shut down as Lookup starts: its first attempt fails under a
		// cancelled context.
		e := resume.NewEngine(j, resume.WithFault(resume.Fault{Step: "Lookup", Point: resume.FaultBefore}), resume.WithFaultAction(cancel))
		res, err := e.Start(cctx, id, Transfer, TransferPlan{FailLookup: 1})
		if !errors.Is(err, context.Canceled) || res.Status != journal.StatusPending {
			t.Fatalf("start: %+v, %v; want pending after a shutdown", res, err)
		}
		_, steps, _ := j.LoadRun(ctx, id)
		if l := stepNamed(steps, "Lookup"); l.Status != journal.StepFailed || l.Final {
			t.Fatalf("Lookup row = %+v, want failed, not final", l)
		}
		res, err = resume.NewEngine(j).Resume(ctx, id)
		if err != nil || res.Status != journal.StatusSucceeded {
			t.Fatalf("resume: %+v, %v", res, err)
		}
		if n := seen.count(id, "Lookup"); n != 2 {
			t.Errorf("Lookup executed %d times, want 2", n)
		}
	})

	t.Run("a value returned with an error reaches the body, first time and on replay", func(t *testing.T) {
		p := TransferPlan{QuoteErr: true}
		want, res := uninterrupted(t, p)
		if res.Status != journal.StatusSucceeded || want.Quote != 42 || want.QuoteErr != "quote is stale" {
			t.Fatalf("uninterrupted run = %+v (%s), want quote 42 with its error", want, res.Status)
		}
		j := open(t)
		id := newRunID(t)
		if !startTransferCrashing(t, j, id, p, resume.Fault{Step: "Measure", Point: resume.FaultBefore}) {
			t.Fatal("no crash")
		}
		res, err := resume.NewEngine(j).Resume(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if got := outOf(t, res); got != want {
			t.Errorf("resumed run saw %+v, an uninterrupted one %+v", got, want)
		}
		if n := seen.count(id, "Quote"); n != 1 {
			t.Errorf("Quote executed %d times, want 1", n)
		}
		_, steps, _ := j.LoadRun(ctx, id)
		if q := stepNamed(steps, "Quote"); !q.Final || string(q.Result) != `{"Cents":42}` {
			t.Errorf("Quote row = %+v, want final with result {\"Cents\":42}", q)
		}
	})

	t.Run("NaN from a once step parks the run; nothing executes it again", func(t *testing.T) {
		j := open(t)
		e := resume.NewEngine(j)
		id := newRunID(t)
		res, err := e.Start(ctx, id, Transfer, TransferPlan{NaN: true})
		if !errors.Is(err, resume.ErrNeedsAttention) || res.AttentionKind != journal.AttentionKindResult || res.AttentionStep != "Measure" ||
			!strings.Contains(res.Error, "NaN") || !strings.Contains(res.Error, "will not execute again") {
			t.Fatalf("start: %+v, %v; want needs attention (result) at Measure, naming NaN", res, err)
		}
		_, steps, _ := j.LoadRun(ctx, id)
		if m := stepNamed(steps, "Measure"); m.Status != journal.StepInFlight {
			t.Errorf("Measure row = %+v, want in_flight kept for a person", m)
		}
		if _, err := e.Resume(ctx, id); !errors.Is(err, resume.ErrNeedsAttention) {
			t.Errorf("resume: %v, want still needs attention", err)
		}
		if _, err := e.Retry(ctx, id); !errors.Is(err, journal.ErrNotFailed) {
			t.Errorf("retry: %v, want ErrNotFailed", err)
		}
		if n := seen.count(id, "Measure"); n != 1 {
			t.Fatalf("Measure executed %d times, want 1", n)
		}
		if err := e.Resolve(ctx, id, "Measure", journal.Resolution{Done: true, Result: json.RawMessage(`2.5`)}); err != nil {
			t.Fatal(err)
		}
		res, err = e.Resume(ctx, id)
		if err != nil || outOf(t, res).Measure != 2.5 || seen.count(id, "Measure") != 1 {
			t.Errorf("after resolve done: %+v, %v, Measure executed %d times; want 2.5 and 1", res, err, seen.count(id, "Measure"))
		}
	})

	t.Run("values JSON cannot carry fail a default step's attempt, naming run and step", func(t *testing.T) {
		j := open(t)
		id := newRunID(t)
		res, err := resume.NewEngine(j).Start(ctx, id, Transfer, TransferPlan{BadUTF8: true})
		if !errors.Is(err, resume.ErrRunFailed) || !strings.Contains(res.Error, "run "+id+", step Label") || !strings.Contains(res.Error, "UTF-8") {
			t.Fatalf("start: %+v, %v; want failed, naming run, step and UTF-8", res, err)
		}
		_, steps, _ := j.LoadRun(ctx, id)
		if l := stepNamed(steps, "Label"); l.Status != journal.StepFailed || l.Result != nil {
			t.Errorf("Label row = %+v, want failed with no result", l)
		}
	})

	for _, tc := range []struct {
		name, result, why string
		failed            bool
	}{
		{"null for a struct", `null`, "cannot be null", false},
		{"a result that does not decode", `"acct-1"`, "does not decode", false},
		{"an error detail that does not decode", `[1, 2]`, "cannot be replayed", true},
	} {
		t.Run(tc.name+" is a corrupt journal: the run parks, nothing executes", func(t *testing.T) {
			j := open(t)
			id := newRunID(t)
			row := journal.StepRecord{StepKey: "Lookup", Name: "Lookup", Status: journal.StepSucceeded, Result: json.RawMessage(tc.result)}
			if tc.failed {
				// A final failure whose error detail is damaged: replaying
				// a stand-in error could take another branch.
				row = journal.StepRecord{StepKey: "Lookup", Name: "Lookup", Status: journal.StepFailed, Final: true,
					Error: "lookup: no such account", ErrorDetail: json.RawMessage(tc.result), Attempt: 1}
			}
			journalRows(t, j, id, transferDef.QualifiedName(), transferDef.Version, `[{}]`, row)
			e := resume.NewEngine(j)
			for i := 0; i < 2; i++ {
				res, err := e.Resume(ctx, id)
				if !errors.Is(err, resume.ErrNeedsAttention) || res.AttentionKind != journal.AttentionKindJournal ||
					res.AttentionStep != "Lookup" || !strings.HasPrefix(res.Error, "journal row Lookup: ") || !strings.Contains(res.Error, tc.why) {
					t.Fatalf("resume %d: %+v, %v; want needs attention (journal) at Lookup, %q", i+1, res, err, tc.why)
				}
			}
			for _, s := range []string{"Lookup", "Deposit"} {
				if n := seen.count(id, s); n != 0 {
					t.Errorf("%s executed %d times on a corrupt journal", s, n)
				}
			}
		})
	}

	t.Run("retry executes again only the failure that ended the run", func(t *testing.T) {
		// Deposit spends its budget (the body refunds), then Finish fails.
		p := TransferPlan{FailDeposit: 3, FailFinish: 1}
		j := open(t)
		e := resume.NewEngine(j)
		id := newRunID(t)
		res, err := e.Start(ctx, id, Transfer, p)
		if !errors.Is(err, resume.ErrRunFailed) || res.FailedStep != "Finish" {
			t.Fatalf("start: %+v, %v; want failed at Finish", res, err)
		}
		if r, _, _ := j.LoadRun(ctx, id); r.FailedStep != "Finish" {
			t.Errorf("stored failed step = %q, want Finish", r.FailedStep)
		}
		res, err = e.Retry(ctx, id)
		if err != nil || res.Status != journal.StatusSucceeded {
			t.Fatalf("retry: %+v, %v", res, err)
		}
		if got := outOf(t, res); got.Branch != "refunded" || got.DepositErr != errTransient.Error() {
			t.Errorf("retried run saw %+v, want the refunded branch: the handled Deposit failure replays", got)
		}
		for s, want := range map[string]int{"Deposit": 3, "Refund": 1, "Finish": 2, "Lookup": 1} {
			if n := seen.count(id, s); n != want {
				t.Errorf("%s executed %d times, want %d", s, n, want)
			}
		}
	})

	t.Run("retry executes again a permanent failure that ended the run", func(t *testing.T) {
		j := open(t)
		e := resume.NewEngine(j)
		id := newRunID(t)
		if res, err := e.Start(ctx, id, Chain, Plan{FailFetch: 1, PermanentFetch: true}); !errors.Is(err, resume.ErrRunFailed) || res.FailedStep != "Fetch" {
			t.Fatalf("start: %+v, %v; want failed at Fetch", res, err)
		}
		res, err := e.Retry(ctx, id)
		if err != nil || res.Status != journal.StatusSucceeded || seen.count(id, "Fetch") != 2 {
			t.Fatalf("retry: %+v, %v, Fetch executed %d times; want succeeded after 2", res, err, seen.count(id, "Fetch"))
		}
	})

	t.Run("retry of a body that failed on its own replays everything", func(t *testing.T) {
		j := open(t)
		e := resume.NewEngine(j)
		id := newRunID(t)
		res, err := e.Start(ctx, id, Transfer, TransferPlan{DeclineDeposit: true, BodyFails: true})
		if !errors.Is(err, resume.ErrRunFailed) || res.FailedStep != "" {
			t.Fatalf("start: %+v, %v; want failed with no failed step", res, err)
		}
		res, err = e.Retry(ctx, id)
		if !errors.Is(err, resume.ErrRunFailed) || res.FailedStep != "" {
			t.Fatalf("retry: %+v, %v; want failed again the same way", res, err)
		}
		for _, s := range []string{"Lookup", "Deposit", "Refund", "Quote", "Measure", "Label", "Finish"} {
			if n := seen.count(id, s); n != 1 {
				t.Errorf("%s executed %d times, want 1", s, n)
			}
		}
	})
}

// stepNamed returns the row of steps with key k.
func stepNamed(steps []journal.StepRecord, k string) journal.StepRecord {
	for _, s := range steps {
		if s.StepKey == k {
			return s
		}
	}
	return journal.StepRecord{}
}

// journalRows writes run id of workflow@version with input and rows, as an
// earlier process would have left it: pending, its rows journaled.
func journalRows(t *testing.T, j journal.Journal, id, workflow, version, input string, rows ...journal.StepRecord) {
	t.Helper()
	ctx := context.Background()
	if _, _, err := j.CreateRun(ctx, journal.RunRecord{RunID: id, Workflow: workflow, Version: version,
		Input: []byte(input), CreatedAt: time.Now(), UpdatedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	run, _, err := j.Claim(ctx, journal.ClaimRequest{RunID: id, Owner: "earlier", Lease: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	lease := journal.Lease{RunID: id, Owner: "earlier", Epoch: run.Epoch}
	for i, s := range rows {
		s.RunID, s.Attempt, s.Seq, s.StartedAt, s.FinishedAt = id, 1, int64(i+1), time.Now(), time.Now()
		if err := j.WriteStep(ctx, lease, s); err != nil {
			t.Fatal(err)
		}
	}
	run.Status = journal.StatusPending
	if err := j.FinishRun(ctx, lease, run); err != nil {
		t.Fatal(err)
	}
}

// startTransferCrashing runs Transfer with p on an engine that "dies" at f
// (or where j's crashAfterWrite strikes), and reports whether it did.
func startTransferCrashing(t *testing.T, j journal.Journal, runID string, p TransferPlan, f resume.Fault) (crashed bool) {
	t.Helper()
	return startDying(j, runID, Transfer, p, f)
}

// crashAfterWrite is a journal on which the process "dies" right after the
// first step row that when matches has committed: the row is durable, and
// the body never received the outcome.
type crashAfterWrite struct {
	journal.Journal
	when  func(journal.StepRecord) bool
	mu    sync.Mutex
	fired bool
}

func (c *crashAfterWrite) WriteStep(ctx context.Context, l journal.Lease, s journal.StepRecord) error {
	if err := c.Journal.WriteStep(ctx, l, s); err != nil {
		return err
	}
	c.mu.Lock()
	strike := !c.fired && c.when(s)
	c.fired = c.fired || strike
	c.mu.Unlock()
	if strike {
		panic(crash{})
	}
	return nil
}
