package journaltest

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/resumegen/resumegen/runtime/journal"
	"github.com/resumegen/resumegen/runtime/resume"
)

// PollPlan is the input of Poller: the number of this run in its chain
// (from 1), the run that returns instead of continuing, and whether run 2
// sleeps first (for cancellation).
type PollPlan struct {
	At, Until int
	Sleep     bool
}

// Poller polls (steps Poll and Tick) and continues as new with At+1 until
// At reaches Until, which it returns. Its durable form is registered by
// hand below, as resumegen would generate it.
func Poller(ctx context.Context, p PollPlan) (int, error) { return 0, nil }

var pollSteps = []resume.StepDef{
	{Name: "Poll", Callee: "journaltest.Poll", Signature: "func(context.Context, int) (int, error)", JSON: "int"},
	{Name: "Tick", Callee: "journaltest.Tick", Signature: "func(context.Context, int) (int, error)", JSON: "int"},
	{Name: "resume.Sleep", Callee: "github.com/resumegen/resumegen/runtime/resume.Sleep", Signature: "func(context.Context, time.Duration) error"},
}

var pollerDef = &resume.WorkflowDef{
	Package: "github.com/resumegen/resumegen/runtime/journaltest", Name: "Poller", Version: "poll-v1", Steps: pollSteps,
	Run: func(ctx context.Context, args resume.Args) (any, error) {
		var p PollPlan
		if err := args.Decode(&p); err != nil {
			return nil, err
		}
		for i, name := range []string{"Poll", "Tick"} {
			if _, err := resume.Call(ctx, &pollSteps[i], func(ctx context.Context) (int, error) {
				seen.record(ctx, name)
				return p.At, nil
			}); err != nil {
				return 0, err
			}
		}
		if p.Sleep && p.At == 2 {
			// Its error (a wait, or the stop) is ignored: the body asks
			// to continue all the same, and a stopped run must not.
			_ = resume.Sleep(ctx, time.Hour)
		}
		if p.At >= p.Until {
			return p.At, nil
		}
		return 0, resume.ContinueAsNew(ctx, PollPlan{At: p.At + 1, Until: p.Until, Sleep: p.Sleep})
	},
}

// TimedPoller is Poller with a timeout= of an hour.
func TimedPoller(ctx context.Context, p PollPlan) (int, error) { return 0, nil }

var timedPollerDef = &resume.WorkflowDef{
	Package: "github.com/resumegen/resumegen/runtime/journaltest", Name: "TimedPoller", Version: "tpoll-v1", Steps: pollSteps,
	Timeout: time.Hour, Run: func(ctx context.Context, args resume.Args) (any, error) { return pollerDef.Run(ctx, args) },
}

func init() {
	resume.Register(Poller, pollerDef)
	resume.Register(TimedPoller, timedPollerDef)
}

// nthRun is the id of the n-th run (from 1) of the chain first is the
// first run of.
func nthRun(first string, n int) string {
	id := first
	for i := 1; i < n; i++ {
		id = resume.NextRunID(id)
	}
	return id
}

// continueFault is a journal whose process dies (panics with crash) in
// ContinueRun, before its commit or right after it, or whose first
// answer is lost after the commit (lose).
type continueFault struct {
	journal.Journal
	after, lose bool
	calls       int
}

func (j *continueFault) Unwrap() journal.Journal { return j.Journal }

func (j *continueFault) ContinueRun(ctx context.Context, l journal.Lease, r, next journal.RunRecord) (journal.RunRecord, error) {
	j.calls++
	cj, _ := journal.Find[journal.Continuer](j.Journal)
	if !j.after && !j.lose {
		panic(crash{})
	}
	stored, err := cj.ContinueRun(ctx, l, r, next)
	if err != nil {
		return stored, err
	}
	if j.lose && j.calls == 1 {
		return journal.RunRecord{}, errors.New("connection reset (simulated): the commit's answer was lost")
	}
	if j.after {
		panic(crash{})
	}
	return stored, nil
}

// runContinue proves continue-as-new (resume.ContinueAsNew,
// journal.Continuer): the end of a run and the start of the next in one
// commit, fenced by the lease, refused whole on a taken id; lineage both
// ways; a chain of 50 continues whose every run holds its own two steps;
// a crash before the commit or after it never leaves one without the
// other; cancellation stops a chain; a sealed chain seals each input
// under its own run's id.
func runContinue(t *testing.T, h Harness, open func(t *testing.T) journal.Journal) {
	ctx := context.Background()
	j := open(t)
	cj, ok := journal.Find[journal.Continuer](j)
	if !ok {
		t.Fatal("the journal does not implement journal.Continuer")
	}
	leased := func(t *testing.T, id string) journal.Lease {
		t.Helper()
		now := time.Now()
		r, created, err := j.CreateRun(ctx, journal.RunRecord{RunID: id, Workflow: "w", Version: "v", Input: []byte(`[1]`),
			CreatedAt: now, UpdatedAt: now, LeaseOwner: "me", LeaseUntil: now.Add(time.Minute)})
		if err != nil || !created {
			t.Fatalf("create %s: created=%v, %v", id, created, err)
		}
		return journal.Lease{RunID: id, Owner: "me", Epoch: r.Epoch}
	}

	t.Run("one commit ends the run and creates the next, linked both ways", func(t *testing.T) {
		id := newRunID(t)
		l := leased(t, id)
		next := journal.RunRecord{RunID: id + "~2", Workflow: "w", Version: "v2", Input: []byte(`[2]`)}
		stored, err := cj.ContinueRun(ctx, l, journal.RunRecord{RunID: id, Output: []byte(`null`)}, next)
		if err != nil {
			t.Fatal(err)
		}
		if stored.RunID != next.RunID || stored.Status != journal.StatusPending || stored.ContinuedFrom != id || stored.CreatedAt.IsZero() {
			t.Errorf("ContinueRun returned %s %s from %q created %v; want %s pending, continuing %s, stamped", stored.RunID, stored.Status, stored.ContinuedFrom, stored.CreatedAt, next.RunID, id)
		}
		old, _, err := j.LoadRun(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if old.Status != journal.StatusSucceeded || old.ContinuedAs != next.RunID || old.LeaseOwner != "" || string(old.Output) != "null" {
			t.Errorf("old run: %s, continued as %q, lease %q, output %s; want succeeded, continued as %s, no lease, null", old.Status, old.ContinuedAs, old.LeaseOwner, old.Output, next.RunID)
		}
		n, _, err := j.LoadRun(ctx, next.RunID)
		if err != nil {
			t.Fatal(err)
		}
		if n.Status != journal.StatusPending || n.ContinuedFrom != id || n.ContinuedAs != "" || string(n.Input) != `[2]` ||
			n.Version != "v2" || n.Workflow != "w" || n.LeaseOwner != "" || n.Attempts != 0 {
			t.Errorf("next run: %+v; want pending, version v2, input [2], continuing %s, unleased", n, id)
		}
		if _, err := cj.ContinueRun(ctx, l, journal.RunRecord{RunID: id}, journal.RunRecord{RunID: id + "~3", Workflow: "w", Version: "v", Input: []byte(`[3]`)}); !errors.Is(err, journal.ErrLeaseLost) {
			t.Errorf("ContinueRun again under the released lease: %v, want ErrLeaseLost", err)
		}
		if _, _, err := j.LoadRun(ctx, id+"~3"); !errors.Is(err, journal.ErrRunNotFound) {
			t.Errorf("a refused ContinueRun created its next run: %v", err)
		}
	})

	t.Run("a taken next id refuses the whole commit", func(t *testing.T) {
		id := newRunID(t)
		l := leased(t, id)
		now := time.Now()
		if _, _, err := j.CreateRun(ctx, journal.RunRecord{RunID: id + "~2", Workflow: "other", Version: "v", Input: []byte(`[9]`), CreatedAt: now, UpdatedAt: now}); err != nil {
			t.Fatal(err)
		}
		_, err := cj.ContinueRun(ctx, l, journal.RunRecord{RunID: id}, journal.RunRecord{RunID: id + "~2", Workflow: "w", Version: "v", Input: []byte(`[2]`)})
		if !errors.Is(err, journal.ErrRunConflict) {
			t.Fatalf("ContinueRun onto a taken id: %v, want ErrRunConflict", err)
		}
		old, _, _ := j.LoadRun(ctx, id)
		if old.Status != journal.StatusRunning || old.LeaseOwner != "me" || old.ContinuedAs != "" {
			t.Errorf("the refused commit changed the old run: %s, lease %q, continued as %q", old.Status, old.LeaseOwner, old.ContinuedAs)
		}
	})

	t.Run("a run asked to stop passes the request on", func(t *testing.T) {
		id := newRunID(t)
		l := leased(t, id)
		// A journaled step makes the run one that unwinds when cancelled
		// (one that never journaled is cancelled at once).
		now := time.Now()
		if err := j.WriteStep(ctx, l, journal.StepRecord{RunID: id, StepKey: "A", Name: "A", Status: journal.StepSucceeded,
			Result: []byte(`1`), Attempt: 1, Seq: 1, StartedAt: now, FinishedAt: now}); err != nil {
			t.Fatal(err)
		}
		if err := j.Cancel(ctx, id, journal.CancelOptions{Running: true}); err != nil {
			t.Fatal(err)
		}
		if _, err := cj.ContinueRun(ctx, l, journal.RunRecord{RunID: id}, journal.RunRecord{RunID: id + "~2", Workflow: "w", Version: "v", Input: []byte(`[2]`)}); err != nil {
			t.Fatal(err)
		}
		n, _, err := j.LoadRun(ctx, id+"~2")
		if err != nil || n.CancelRequested.IsZero() {
			t.Errorf("the next run of a run asked to stop is not asked to stop")
		}
	})

	t.Run("a poller continuing 50 times keeps two rows per run", func(t *testing.T) {
		id := newRunID(t)
		e := resume.NewEngine(j)
		res, err := e.Start(ctx, id, Poller, PollPlan{At: 1, Until: 51})
		if err != nil || res.Status != resume.StatusSucceeded || res.ContinuedAs != id+"~2" || string(res.Output) != "null" {
			t.Fatalf("Start = %+v, %v; want succeeded, continued as %s~2", res, err, id)
		}
		again, err := e.Start(ctx, id, Poller, PollPlan{At: 1, Until: 51})
		if err != nil || again.ContinuedAs != id+"~2" || seen.count(id, "Poll") != 1 {
			t.Fatalf("Start of the original again = %+v, %v (Poll executed %d times); want its outcome, continued, nothing executed", again, err, seen.count(id, "Poll"))
		}
		for n := 2; n <= 51; n++ {
			rid := nthRun(id, n)
			res, err := e.Resume(ctx, rid)
			if err != nil {
				t.Fatalf("run %d (%s): %v", n, rid, err)
			}
			if n < 51 && res.ContinuedAs != nthRun(id, n+1) || n == 51 && res.ContinuedAs != "" {
				t.Fatalf("run %d continued as %q", n, res.ContinuedAs)
			}
			if res.ContinuedFrom != nthRun(id, n-1) {
				t.Fatalf("run %d continues %q, want %s", n, res.ContinuedFrom, nthRun(id, n-1))
			}
		}
		for n := 1; n <= 51; n++ {
			rid := nthRun(id, n)
			r, steps, err := j.LoadRun(ctx, rid)
			if err != nil {
				t.Fatal(err)
			}
			if len(steps) != 2 || r.Status != journal.StatusSucceeded || seen.count(rid, "Poll") != 1 {
				t.Fatalf("run %d (%s): %s with %d step rows, Poll executed %d times; want succeeded, 2 rows, once", n, rid, r.Status, len(steps), seen.count(rid, "Poll"))
			}
		}
		last, err := e.Wait(ctx, nthRun(id, 51))
		var out int
		if err != nil || last.Decode(&out) != nil || out != 51 {
			t.Fatalf("the last run: %+v, %v; want 51", last, err)
		}
		if _, _, err := j.LoadRun(ctx, nthRun(id, 52)); !errors.Is(err, journal.ErrRunNotFound) {
			t.Errorf("the chain went past its last run: %v", err)
		}
	})

	t.Run("each run of a chain gets the workflow's timeout", func(t *testing.T) {
		id := newRunID(t)
		before := time.Now()
		res, err := resume.NewEngine(j).Start(ctx, id, TimedPoller, PollPlan{At: 1, Until: 2})
		if err != nil || res.ContinuedAs != id+"~2" {
			t.Fatalf("Start = %+v, %v", res, err)
		}
		n, _, err := j.LoadRun(ctx, id+"~2")
		if err != nil {
			t.Fatal(err)
		}
		if n.Deadline.Before(before.Add(time.Hour-time.Minute)) || n.Deadline.After(time.Now().Add(time.Hour+time.Minute)) {
			t.Errorf("next run's deadline %v; want an hour after its creation (%v)", n.Deadline, before)
		}
	})

	t.Run("a singleton's chain holds its key", func(t *testing.T) {
		if _, ok := journal.Find[journal.KeyedStarter](j); !ok {
			t.Fatal("the journal does not implement journal.KeyedStarter")
		}
		key := newRunID(t)
		e := resume.NewEngine(j)
		res, outcome, err := e.Singleton(ctx, key, Poller, PollPlan{At: 1, Until: 3})
		if err != nil || outcome != resume.StartCreated {
			t.Fatalf("Singleton = %+v, %s, %v", res, outcome, err)
		}
		first := res.RunID
		if res, err := e.Resume(ctx, first); err != nil || res.ContinuedAs != first+"~2" {
			t.Fatalf("the singleton's first run: %+v, %v; want continued", res, err)
		}
		res, outcome, err = e.Singleton(ctx, key, Poller, PollPlan{At: 1, Until: 3})
		if err != nil || outcome != resume.StartDropped || res.RunID != first+"~2" {
			t.Fatalf("Singleton while its chain runs = %s, %s, %v; want dropped, naming %s~2", res.RunID, outcome, err, first)
		}
	})

	t.Run("workers execute a chain", func(t *testing.T) {
		id := newRunID(t)
		stop := startWorker(ctx, resume.NewEngine(j, resume.WithOwner("worker")), resume.WorkerOptions{Concurrency: 2, PollInterval: 10 * time.Millisecond})
		defer stop()
		if _, err := resume.NewEngine(j).Enqueue(ctx, id, Poller, PollPlan{At: 1, Until: 5}); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(30 * time.Second)
		for {
			r, _, err := j.LoadRun(ctx, nthRun(id, 5))
			if err == nil && r.Status.Finished() {
				if r.Status != journal.StatusSucceeded || string(r.Output) != "5" {
					t.Fatalf("the chain's last run: %s %s %q", r.Status, r.Output, r.Error)
				}
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the chain's fifth run did not finish in 30 s: %+v, %v", r, err)
			}
			time.Sleep(20 * time.Millisecond)
		}
	})

	t.Run("cancelling the current run stops the chain", func(t *testing.T) {
		id := newRunID(t)
		e := resume.NewEngine(j)
		if _, err := e.Start(ctx, id, Poller, PollPlan{At: 1, Until: 10, Sleep: true}); err != nil {
			t.Fatal(err)
		}
		second := nthRun(id, 2)
		if res, err := e.Resume(ctx, second); res.Status != resume.StatusWaiting {
			t.Fatalf("run 2: %s, %v; want waiting in its sleep", res.Status, err)
		}
		if err := e.Cancel(ctx, second, resume.CancelOptions{}); err != nil {
			t.Fatal(err)
		}
		res, err := e.Resume(ctx, second)
		if res.Status != resume.StatusCancelled || res.ContinuedAs != "" {
			t.Fatalf("run 2 after cancel: %s continued as %q, %v; want cancelled, not continued", res.Status, res.ContinuedAs, err)
		}
		if _, _, err := j.LoadRun(ctx, nthRun(id, 3)); !errors.Is(err, journal.ErrRunNotFound) {
			t.Errorf("a cancelled run continued: %v", err)
		}
	})

	for _, c := range []struct {
		name  string
		after bool
	}{{"a crash before the commit leaves the run to resume, no next run", false}, {"a crash after the commit leaves both, linked", true}} {
		t.Run(c.name, func(t *testing.T) {
			id := newRunID(t)
			if !startDying(&continueFault{Journal: j, after: c.after}, id, Poller, PollPlan{At: 1, Until: 2}, resume.Fault{}) {
				t.Fatal("no crash")
			}
			old, _, _ := j.LoadRun(ctx, id)
			_, _, nerr := j.LoadRun(ctx, id+"~2")
			if c.after {
				if old.Status != journal.StatusSucceeded || old.ContinuedAs != id+"~2" || nerr != nil {
					t.Fatalf("after the commit: old %s continued as %q, next: %v; want both, linked", old.Status, old.ContinuedAs, nerr)
				}
			} else if old.Status != journal.StatusRunning || old.ContinuedAs != "" || !errors.Is(nerr, journal.ErrRunNotFound) {
				t.Fatalf("before the commit: old %s continued as %q, next: %v; want the old one running, no next", old.Status, old.ContinuedAs, nerr)
			}
			e := resume.NewEngine(j)
			res, err := e.Resume(ctx, id)
			if err != nil || res.Status != resume.StatusSucceeded || res.ContinuedAs != id+"~2" {
				t.Fatalf("resume of the original: %+v, %v; want succeeded, continued", res, err)
			}
			if n := seen.count(id, "Poll"); n != 1 {
				t.Errorf("Poll executed %d times, want once (replayed after the crash)", n)
			}
			if res, err := e.Resume(ctx, id+"~2"); err != nil || res.Status != resume.StatusSucceeded || res.ContinuedFrom != id {
				t.Fatalf("the next run: %+v, %v", res, err)
			}
		})
	}

	t.Run("a lost answer after the commit is recognized, not repeated", func(t *testing.T) {
		id := newRunID(t)
		fj := &continueFault{Journal: j, lose: true}
		res, err := resume.NewEngine(fj).Start(ctx, id, Poller, PollPlan{At: 1, Until: 2})
		if err != nil || res.ContinuedAs != id+"~2" || fj.calls < 2 {
			t.Fatalf("Start with a lost answer: %+v, %v after %d tries; want continued, after a retry", res, err, fj.calls)
		}
	})

	t.Run("a child run cannot continue", func(t *testing.T) {
		// A child run names its parent: its body's ContinueAsNew fails it.
		id := newRunID(t)
		now := time.Now()
		if _, _, err := j.CreateRun(ctx, journal.RunRecord{RunID: id, Workflow: "w", Version: "v", Input: []byte(`[]`), CreatedAt: now, UpdatedAt: now}); err != nil {
			t.Fatal(err)
		}
		kid := id + "/kid"
		in := []byte(`[{"At":1,"Until":3}]`)
		if _, _, err := j.CreateRun(ctx, journal.RunRecord{RunID: kid, Workflow: pollerDef.QualifiedName(), Version: pollerDef.Version, Input: in, Parent: id, CreatedAt: now, UpdatedAt: now}); err != nil {
			t.Fatal(err)
		}
		res, err := resume.NewEngine(j).Resume(ctx, kid)
		if res.Status != resume.StatusFailed || res.ContinuedAs != "" || err == nil {
			t.Fatalf("a child run's ContinueAsNew: %s continued as %q, %v; want failed", res.Status, res.ContinuedAs, err)
		}
		if _, _, err := j.LoadRun(ctx, kid+"~2"); !errors.Is(err, journal.ErrRunNotFound) {
			t.Errorf("a child run continued: %v", err)
		}
	})

	t.Run("sealed: each input is sealed under its own run's id", func(t *testing.T) {
		k := keyring(t, "k1")
		id := newRunID(t)
		e := resume.NewEngine(j, resume.WithCodec(k))
		if _, err := e.Start(ctx, id, Poller, PollPlan{At: 1, Until: 3}); err != nil {
			t.Fatal(err)
		}
		raw, _, err := j.LoadRun(ctx, id+"~2")
		if err != nil {
			t.Fatal(err)
		}
		if !journal.IsSealed(raw.Input) {
			t.Fatalf("the next run's input is stored in plaintext: %s", raw.Input)
		}
		for n := 2; n <= 3; n++ {
			res, err := e.Resume(ctx, nthRun(id, n))
			if err != nil || res.Status != resume.StatusSucceeded {
				t.Fatalf("sealed run %d: %+v, %v; want succeeded (its input opens under its own id)", n, res, err)
			}
		}
		var out int
		if res, err := e.Wait(ctx, nthRun(id, 3)); err != nil || res.Decode(&out) != nil || out != 3 {
			t.Fatalf("sealed chain's end: %+v, %v", res, err)
		}
		if h.Exec == nil {
			return
		}
		// The next run's sealed input, moved into another run's row, is
		// refused: it was sealed for its own id only.
		other := newRunID(t)
		if _, err := e.Enqueue(ctx, other, Poller, PollPlan{At: 1, Until: 1}); err != nil {
			t.Fatal(err)
		}
		quote := func(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
		if err := h.Exec(ctx, `UPDATE resume_runs SET input = (SELECT input FROM resume_runs WHERE run_id = `+quote(id+"~2")+`) WHERE run_id = `+quote(other)); err != nil {
			t.Fatal(err)
		}
		if res, _ := e.Resume(ctx, other); res.Status != resume.StatusNeedsAttention {
			t.Errorf("a run holding another run's sealed input: %s; want it parked", res.Status)
		}
	})
}
