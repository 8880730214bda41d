package journaltest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/resumegen/resumegen/runtime/journal"
	"github.com/resumegen/resumegen/runtime/resume"
)

// runFaults proves what ordinary faults come to (issue 10 §3, §4): a
// panic is a step's failed attempt or the run's failure, never the
// process's end; a run whose process keeps dying is failed as a crash
// loop while the others flow; a journal write that fails is retried while
// the lease holds, and nothing executes twice for it.
func runFaults(t *testing.T, open func(t *testing.T) journal.Journal, effectsOf func(t *testing.T, runID string) int) {
	ctx := context.Background()
	stepOf := func(t *testing.T, j journal.Journal, id, key string) journal.StepRecord {
		t.Helper()
		_, steps, err := j.LoadRun(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range steps {
			if s.StepKey == key {
				return s
			}
		}
		t.Fatalf("run %s has no step %s", id, key)
		return journal.StepRecord{}
	}
	// hasStack reports whether text carries a panic's value and a stack
	// through the step function that panicked.
	hasStack := func(text, value, frame string) bool {
		return strings.Contains(text, "panic: "+value) && strings.Contains(text, "goroutine ") && strings.Contains(text, "journaltest."+frame)
	}

	t.Run("a panicking default step is a failed attempt, journaled with its stack, and retried", func(t *testing.T) {
		j := open(t)
		id := newRunID(t)
		res, err := resume.NewEngine(j).Start(ctx, id, Poison, PoisonPlan{PanicRisky: 2})
		if err != nil || res.Status != journal.StatusSucceeded {
			t.Fatalf("start: %v, %v; want succeeded on the third attempt", res.Status, err)
		}
		row := stepOf(t, j, id, "Risky")
		if seen.count(id, "Risky") != 3 || row.Attempt != 3 || len(row.History) != 2 {
			t.Fatalf("Risky executed %d times, row attempt %d with %d failed attempts; want 3, 3, 2", seen.count(id, "Risky"), row.Attempt, len(row.History))
		}
		for i, a := range row.History {
			if !hasStack(a.Error, fmt.Sprintf("risky boom %d", i+1), "Risky") || a.Permanent {
				t.Errorf("failed attempt %d journaled %q, want the panic value and the stack, not permanent", i+1, a.Error)
			}
		}
	})

	t.Run("a default step that panics at every attempt fails the run with the stack", func(t *testing.T) {
		j := open(t)
		id := newRunID(t)
		res, err := resume.NewEngine(j).Start(ctx, id, Poison, PoisonPlan{PanicRisky: 99})
		if !errors.Is(err, resume.ErrRunFailed) || !errors.As(err, new(*resume.RunError)) {
			t.Fatalf("start: %v; want the run failed", err)
		}
		if !hasStack(res.Error, "risky boom 3", "Risky") || res.FailedStep != "Risky" {
			t.Errorf("failed run: error %q, failed step %q; want the third panic with its stack, and Risky", res.Error, res.FailedStep)
		}
		if seen.count(id, "Risky") != 3 || seen.count(id, "Store") != 0 {
			t.Errorf("Risky executed %d times, Store %d; want 3 and 0", seen.count(id, "Risky"), seen.count(id, "Store"))
		}
	})

	t.Run("every workflow shape starts typed; a wrong argument is refused before a run is stored", func(t *testing.T) {
		j := open(t)
		e := resume.NewEngine(j)
		id := newRunID(t)
		out, err := resume.Run2(ctx, e, id, Ship, Parcel{ID: "p1"}, Options{Express: true})
		if err != nil || out != "p1 express=true" {
			t.Fatalf("Run2: %q, %v", out, err)
		}
		if err := resume.Do0(ctx, e, newRunID(t), Mark); err != nil {
			t.Fatalf("Do0: %v", err)
		}
		bad := newRunID(t)
		if _, err := e.Start(ctx, bad, Ship, Options{}, Parcel{}); err == nil || !strings.Contains(err.Error(), "argument 1 is a journaltest.Options, but the workflow's parameter is a journaltest.Parcel") {
			t.Fatalf("Start with swapped arguments: %v", err)
		}
		if _, err := e.Enqueue(ctx, bad, Ship, Parcel{}); err == nil || !strings.Contains(err.Error(), "takes 2 arguments after its context, not 1") {
			t.Fatalf("Enqueue with a missing argument: %v", err)
		}
		if _, _, err := j.LoadRun(ctx, bad); !errors.Is(err, journal.ErrRunNotFound) {
			t.Errorf("a refused start stored run %s: %v", bad, err)
		}
	})

	t.Run("a step without an error result fails by panicking: retried, then the body unwinds and the run fails", func(t *testing.T) {
		j := open(t)
		ok, bad := newRunID(t), newRunID(t)
		e := resume.NewEngine(j)
		res, err := e.Start(ctx, ok, Quiet, QuietPlan{PanicTick: 1})
		if err != nil || string(res.Output) != "7" || seen.count(ok, "Tick") != 2 {
			t.Fatalf("start: %+v, %v, Tick executed %d times; want 7 on the second attempt", res, err, seen.count(ok, "Tick"))
		}
		res, err = e.Start(ctx, bad, Quiet, QuietPlan{PanicTick: 99})
		if !errors.Is(err, resume.ErrRunFailed) || !strings.Contains(res.Error, "tick boom 2") || res.FailedStep != "Tick" || seen.count(bad, "Ping") != 0 {
			t.Fatalf("start: %+v, %v, Ping executed %d times; want failed with Tick's second panic, Ping never", res, err, seen.count(bad, "Ping"))
		}
	})

	t.Run("a step without an error result unwinds the body when the run stops: it parks, it does not fail", func(t *testing.T) {
		j := open(t)
		id := newRunID(t)
		if !startDying(j, id, Quiet, QuietPlan{}, resume.Fault{Step: "Ping", Point: resume.FaultEffect}) {
			t.Fatal("did not crash")
		}
		res, err := resume.NewEngine(j).Resume(ctx, id)
		if !errors.Is(err, resume.ErrNeedsAttention) || res.AttentionStep != "Ping" || seen.count(id, "Ping") != 1 {
			t.Fatalf("resume: %+v, %v, Ping executed %d times; want needs attention at Ping, executed once", res, err, seen.count(id, "Ping"))
		}
	})

	t.Run("a panicking tx step is rolled back and retried", func(t *testing.T) {
		j := open(t)
		id := newRunID(t)
		res, err := resume.NewEngine(j).Start(ctx, id, Poison, PoisonPlan{PanicStore: true})
		if err != nil || res.Status != journal.StatusSucceeded {
			t.Fatalf("start: %v, %v; want succeeded", res.Status, err)
		}
		if n := effectsOf(t, id); n != 1 || seen.count(id, "Store") != 2 {
			t.Errorf("Store executed %d times, %d effect rows; want 2 executions and 1 row (the panicking one rolled back)", seen.count(id, "Store"), n)
		}
		if row := stepOf(t, j, id, "Store"); len(row.History) != 1 || !hasStack(row.History[0].Error, "store boom", "Store") {
			t.Errorf("Store's history %+v, want its panic with the stack", row.History)
		}
	})

	t.Run("a panicking once step parks the run with the stack; resolving it continues", func(t *testing.T) {
		j := open(t)
		e := resume.NewEngine(j)
		id := newRunID(t)
		res, err := e.Start(ctx, id, Poison, PoisonPlan{PanicSend: true})
		if !errors.Is(err, resume.ErrNeedsAttention) || res.AttentionStep != "Send" || res.AttentionKind != journal.AttentionKindStep {
			t.Fatalf("start: %v (%s, step %q, kind %q); want needs_attention at Send, kind step", err, res.Status, res.AttentionStep, res.AttentionKind)
		}
		if !hasStack(res.Error, "send boom", "Send") {
			t.Errorf("reason %q, want the panic with its stack", res.Error)
		}
		if row := stepOf(t, j, id, "Send"); row.Status != journal.StepInFlight {
			t.Errorf("Send's row is %s, want in_flight: its outcome is unknown", row.Status)
		}
		if err := e.Resolve(ctx, id, "Send", journal.Resolution{Done: true}); err != nil {
			t.Fatal(err)
		}
		if res, err := e.Resume(ctx, id); err != nil || res.Status != journal.StatusSucceeded {
			t.Fatalf("resume after resolve: %v, %v", res.Status, err)
		}
		if seen.count(id, "Send") != 1 || seen.count(id, "Risky") != 1 || effectsOf(t, id) != 1 {
			t.Errorf("Send %d, Risky %d, effects %d; want 1, 1, 1", seen.count(id, "Send"), seen.count(id, "Risky"), effectsOf(t, id))
		}
	})

	t.Run("a panicking workflow body fails the run with the stack", func(t *testing.T) {
		j := open(t)
		id := newRunID(t)
		res, err := resume.NewEngine(j).Start(ctx, id, Poison, PoisonPlan{PanicBody: true})
		if !errors.Is(err, resume.ErrRunFailed) {
			t.Fatalf("start: %v; want the run failed", err)
		}
		if !hasStack(res.Error, "assignment to entry in nil map", "poisonBody") || !strings.HasPrefix(res.Error, "workflow body panic") || res.FailedStep != "" {
			t.Errorf("failed run: error %q, failed step %q; want the body's panic with its stack, no failed step", res.Error, res.FailedStep)
		}
		if seen.count(id, "Risky") != 1 || seen.count(id, "Send") != 1 {
			t.Errorf("Risky %d, Send %d; want 1 and 1", seen.count(id, "Risky"), seen.count(id, "Send"))
		}
	})

	t.Run("a panic in a child run stays in the child: failed, or parked for a once step", func(t *testing.T) {
		j := open(t)
		e := resume.NewEngine(j)
		id := newRunID(t)
		res, err := e.Start(ctx, id, PoisonParent, PoisonPlan{PanicBody: true})
		if !errors.Is(err, resume.ErrRunFailed) || !hasStack(res.Error, "assignment to entry in nil map", "poisonBody") {
			t.Fatalf("parent: %v (%q); want failed with the child's panic and stack", err, res.Error)
		}
		child, _, err := j.LoadRun(ctx, resume.ChildRunID(id, "Poison"))
		if err != nil || child.Status != journal.StatusFailed {
			t.Fatalf("child: %v, %v; want failed", child.Status, err)
		}

		id = newRunID(t)
		res, err = e.Start(ctx, id, PoisonParent, PoisonPlan{PanicSend: true})
		if !errors.Is(err, resume.ErrNeedsAttention) || res.AttentionKind != journal.AttentionKindChild {
			t.Fatalf("parent of a once panic: %v (kind %q); want needs_attention for its child", err, res.AttentionKind)
		}
		child, _, err = j.LoadRun(ctx, resume.ChildRunID(id, "Poison"))
		if err != nil || child.Status != journal.StatusNeedsAttention || child.AttentionStep != "Send" || !hasStack(child.Error, "send boom", "Send") {
			t.Fatalf("child: %v at %q (%q), %v; want needs_attention at Send with the stack", child.Status, child.AttentionStep, child.Error, err)
		}
	})

	t.Run("a queue of 10 runs, one of which always panics: 9 succeed, 1 fails with its panic", func(t *testing.T) {
		j := open(t)
		e := resume.NewEngine(j)
		var ids []string
		for i := 0; i < 10; i++ {
			id := newRunID(t)
			ids = append(ids, id)
			plan := PoisonPlan{}
			if i == 0 {
				plan.PanicRisky = 1 << 20 // the oldest: the first a worker takes
			}
			if _, err := e.Enqueue(ctx, id, Poison, plan); err != nil {
				t.Fatal(err)
			}
		}
		stop := startWorker(ctx, e, resume.WorkerOptions{PollInterval: 5 * time.Millisecond})
		waitFor(t, j, 9, journal.StatusSucceeded)
		waitFor(t, j, 1, journal.StatusFailed)
		if err := stop(); err != nil {
			t.Fatalf("work: %v", err)
		}
		run, _, err := j.LoadRun(ctx, ids[0])
		if err != nil {
			t.Fatal(err)
		}
		if run.Status != journal.StatusFailed || !hasStack(run.Error, "risky boom 3", "Risky") {
			t.Errorf("the poison run is %s with %q, want failed with its panic", run.Status, run.Error)
		}
	})

	t.Run("a panic of the engine's own, in a worker, does not end the process", func(t *testing.T) {
		pj := &panicOnFinish{Journal: open(t)}
		e := resume.NewEngine(pj, resume.WithLease(100*time.Millisecond))
		id := newRunID(t)
		if _, err := e.Enqueue(ctx, id, Poison, PoisonPlan{}); err != nil {
			t.Fatal(err)
		}
		stop := startWorker(ctx, e, resume.WorkerOptions{PollInterval: 5 * time.Millisecond})
		waitFor(t, pj, 1, journal.StatusSucceeded) // taken over once its lease expired
		if err := stop(); err != nil {
			t.Fatalf("work: %v", err)
		}
		if !pj.panicked.Load() {
			t.Fatal("the journal never panicked: the test did not bite")
		}
	})

	t.Run("a run whose process keeps dying without progress fails as a crash loop; the others are not counted", func(t *testing.T) {
		j := open(t)
		id := newRunID(t)
		plan := PoisonPlan{Die: "crash"}
		for i := 1; i <= resume.DefaultCrashLoopLimit; i++ {
			if !startDying(j, id, Poison, plan, resume.Fault{}) {
				t.Fatalf("claim %d: the process did not die", i)
			}
			run, _, err := j.LoadRun(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			if run.ClaimsSinceProgress != i {
				t.Fatalf("after %d deaths without progress, ClaimsSinceProgress = %d", i, run.ClaimsSinceProgress)
			}
		}
		e := resume.NewEngine(j)
		res, err := e.Resume(ctx, id)
		if !errors.Is(err, resume.ErrRunFailed) || !strings.HasPrefix(res.Error, "crash loop: the last 5 claims") {
			t.Fatalf("claim 6: %v (%q); want failed as a crash loop", err, res.Error)
		}
		if n := seen.count(id, "Risky"); n != resume.DefaultCrashLoopLimit {
			t.Errorf("Risky executed %d times, want %d: the crash loop's claim executes nothing", n, resume.DefaultCrashLoopLimit)
		}
		// Fixed, the run is retried with a fresh count, and succeeds.
		healed.Store(id, true)
		if res, err := e.Retry(ctx, id); err != nil || res.Status != journal.StatusSucceeded {
			t.Fatalf("retry after the fix: %v, %v", res.Status, err)
		}

		// Deaths after progress are not a loop: a run killed six times,
		// each time one step further, still finishes.
		id = newRunID(t)
		for k := 2; k <= 7; k++ {
			f := resume.Fault{Step: fmt.Sprintf("Loop#%d", k), Point: resume.FaultBefore}
			if !startDying(j, id, Chain, Plan{Loop: 8}, f) {
				t.Fatalf("the process did not die at %v", f)
			}
		}
		if res, err := e.Resume(ctx, id); err != nil || res.Status != journal.StatusSucceeded {
			t.Fatalf("a run that progressed between six deaths: %v, %v; want succeeded", res.Status, err)
		}

		// The limit is the engine's.
		id = newRunID(t)
		for i := 0; i < 2; i++ {
			startDying(j, id, Poison, plan, resume.Fault{})
		}
		res, err = resume.NewEngine(j, resume.WithCrashLoopLimit(2)).Resume(ctx, id)
		if !errors.Is(err, resume.ErrRunFailed) || !strings.HasPrefix(res.Error, "crash loop: the last 2 claims") {
			t.Fatalf("limit 2, claim 3: %v (%q); want a crash loop", err, res.Error)
		}
	})

	t.Run("journal writes that fail are retried while the lease holds: nothing parks, nothing runs twice", func(t *testing.T) {
		for _, lost := range []bool{false, true} {
			fj := &flakyJournal{Journal: open(t), fails: 3, ackLost: lost}
			e := resume.NewEngine(fj)
			id := newRunID(t)
			fj.arm()
			res, err := e.Start(ctx, id, Chain, Plan{Loop: 2})
			if err != nil || res.Status != journal.StatusSucceeded {
				t.Fatalf("answers lost %v: %v, %v; want succeeded", lost, res.Status, err)
			}
			if got := fj.failed(); got < 3*6 {
				t.Fatalf("answers lost %v: only %d writes failed; the test did not bite", lost, got)
			}
			if seen.count(id, "Fetch") != 1 || seen.count(id, "Notify") != 1 || seen.count(id, "Loop") != 2 || effectsOf(t, id) != 1 {
				t.Errorf("answers lost %v: Fetch %d, Notify %d, Loop %d, effects %d; want 1, 1, 2, 1", lost,
					seen.count(id, "Fetch"), seen.count(id, "Notify"), seen.count(id, "Loop"), effectsOf(t, id))
			}
		}

		// A journal down for longer than the lease: the run stops,
		// resumable (pending), and is not parked.
		fj := &flakyJournal{Journal: open(t), fails: 1 << 30}
		e := resume.NewEngine(fj, resume.WithLease(300*time.Millisecond))
		id := newRunID(t)
		fj.armWrites()
		start := time.Now()
		_, err := e.Start(ctx, id, Chain, Plan{})
		if err == nil || !strings.Contains(err.Error(), "the lease expires") {
			t.Fatalf("start on a journal that refuses step rows: %v; want the write given up when the lease expires", err)
		}
		if d := time.Since(start); d > 3*time.Second {
			t.Errorf("gave up after %v, long after the lease of 300ms", d)
		}
		if run, _, _ := fj.LoadRun(ctx, id); run.Status != journal.StatusPending {
			t.Errorf("run is %s, want pending: resumable, not parked", run.Status)
		}
	})
}

// errDatabaseDown is the flaky journal's failure.
var errDatabaseDown = errors.New("connection refused: the database is restarting")

// flakyJournal fails the first fails calls of each write the engine
// retries (WriteStep, BeginStep, FinishRun) once armed; with ackLost, a
// failed WriteStep or FinishRun commits first, and only its answer is
// lost.
type flakyJournal struct {
	journal.Journal
	fails   int
	ackLost bool

	mu                          sync.Mutex
	armed, onlyWrites           bool
	writes, begins, finishes, n int
}

func (f *flakyJournal) arm()       { f.mu.Lock(); f.armed = true; f.mu.Unlock() }
func (f *flakyJournal) armWrites() { f.mu.Lock(); f.armed, f.onlyWrites = true, true; f.mu.Unlock() }

func (f *flakyJournal) failed() int { f.mu.Lock(); defer f.mu.Unlock(); return f.n }

// fail counts one call of a kind and reports whether it fails.
func (f *flakyJournal) fail(count *int, write bool) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.armed || (f.onlyWrites && !write) {
		return false
	}
	*count++
	if *count > f.fails {
		*count = 0 // the next write of this kind fails again
		return false
	}
	f.n++
	return true
}

func (f *flakyJournal) WriteStep(ctx context.Context, l journal.Lease, s journal.StepRecord) error {
	if !f.fail(&f.writes, true) {
		return f.Journal.WriteStep(ctx, l, s)
	}
	if f.ackLost {
		if err := f.Journal.WriteStep(ctx, l, s); err != nil {
			return err
		}
	}
	return fmt.Errorf("write step %s: %w", s.StepKey, errDatabaseDown)
}

func (f *flakyJournal) BeginStep(ctx context.Context, l journal.Lease) (journal.StepTx, error) {
	if f.fail(&f.begins, false) {
		return nil, fmt.Errorf("begin: %w", errDatabaseDown)
	}
	return f.Journal.BeginStep(ctx, l)
}

func (f *flakyJournal) FinishRun(ctx context.Context, l journal.Lease, r journal.RunRecord) error {
	if !f.fail(&f.finishes, false) {
		return f.Journal.FinishRun(ctx, l, r)
	}
	if f.ackLost {
		if err := f.Journal.FinishRun(ctx, l, r); err != nil {
			return err
		}
	}
	return fmt.Errorf("finish: %w", errDatabaseDown)
}

// panicOnFinish is a journal whose first FinishRun panics: a bug outside
// the run's code.
type panicOnFinish struct {
	journal.Journal
	panicked atomic.Bool
}

func (p *panicOnFinish) FinishRun(ctx context.Context, l journal.Lease, r journal.RunRecord) error {
	if p.panicked.CompareAndSwap(false, true) {
		panic("journal bug")
	}
	return p.Journal.FinishRun(ctx, l, r)
}

// Worker process environment: the journal test's TestWorkerProcess runs
// [WorkerMain] when workerEnv is set.
const workerEnv = "JOURNALTEST_WORKER"

// WorkerProcess reports whether this test binary was started by
// [CrashLoopProcesses] as a worker: the journal's test then opens the
// journal and exits with [WorkerMain]'s status.
func WorkerProcess() bool { return os.Getenv(workerEnv) != "" }

// WorkerMain is a worker process of [CrashLoopProcesses]: it works on j
// until no run is pending or running, and returns the exit status (0 when
// the queue is done, 1 after 60 s). Its lease is 2 s: over a journal
// where the end of a process is no signal (PostgreSQL: only the owner's
// word is, and a killed process says nothing), the next worker waits the
// dead one's lease out.
func WorkerMain(j journal.Journal) int {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	queues, n := workerQueues()
	e := resume.NewEngine(j, append(queues, resume.WithLease(2*time.Second))...)
	done := make(chan error, 1)
	go func() { done <- e.Work(ctx, resume.WorkerOptions{Concurrency: n, PollInterval: 10 * time.Millisecond}) }()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
		runs, err := j.ListRuns(ctx, journal.RunFilter{Statuses: []journal.Status{journal.StatusPending, journal.StatusRunning}})
		if err == nil && len(runs) == 0 {
			cancel()
			if err := <-done; err != nil {
				fmt.Fprintln(os.Stderr, "work:", err)
				return 1
			}
			return 0
		}
	}
	fmt.Fprintln(os.Stderr, "worker: the queue is not done after 60s")
	return 1
}

// CrashLoopProcesses is the poison queue with real processes (issue 10
// §3): 10 runs are queued on j, the oldest of which ends its process at
// its first step (die: "exit" for os.Exit, "kill" for SIGKILL). Worker
// processes started by worker (with env added to its environment; each
// must call [WorkerMain] on j's database) are restarted whenever they die,
// at most 5 times. The other 9 runs must succeed, and the poison run must
// be failed as a crash loop after [resume.DefaultCrashLoopLimit]
// executions. It returns how many worker processes ran.
func CrashLoopProcesses(t *testing.T, j journal.Journal, die string, worker func(env []string) *exec.Cmd) int {
	t.Helper()
	ctx := context.Background()
	e := resume.NewEngine(j)
	var ids []string
	for i := 0; i < 10; i++ {
		id := newRunID(t)
		ids = append(ids, id)
		plan := PoisonPlan{}
		if i == 0 {
			plan.Die = die
		}
		if _, err := e.Enqueue(ctx, id, Poison, plan); err != nil {
			t.Fatal(err)
		}
	}
	execLog := filepath.Join(t.TempDir(), "executions")
	starts := 0
	for ; starts < 6; starts++ {
		cmd := worker([]string{workerEnv + "=1", execLogEnv + "=" + execLog})
		out, err := cmd.CombinedOutput()
		if err == nil {
			starts++
			break
		}
		var exit *exec.ExitError
		if !errors.As(err, &exit) {
			t.Fatalf("worker %d: %v\n%s", starts+1, err, out)
		}
		t.Logf("worker %d died: %v", starts+1, err)
	}
	runs, err := j.ListRuns(ctx, journal.RunFilter{})
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]journal.RunRecord{}
	succeeded := 0
	for _, r := range runs {
		byID[r.RunID] = r
		if r.Status == journal.StatusSucceeded {
			succeeded++
		}
	}
	poison := byID[ids[0]]
	if succeeded != 9 || poison.Status != journal.StatusFailed || !strings.HasPrefix(poison.Error, "crash loop") {
		t.Fatalf("after %d worker processes: %d of 9 runs succeeded, the poison run is %s (%q); want 9, and failed as a crash loop",
			starts, succeeded, poison.Status, poison.Error)
	}
	b, err := os.ReadFile(execLog)
	if err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	for _, line := range strings.Fields(string(b)) {
		count[line]++
	}
	if count[ids[0]] != resume.DefaultCrashLoopLimit {
		t.Errorf("the poison run executed %d times, want %d", count[ids[0]], resume.DefaultCrashLoopLimit)
	}
	for _, id := range ids[1:] {
		if count[id] != 1 {
			t.Errorf("run %s executed %d times, want once", id, count[id])
		}
	}
	return starts
}

// BlipReport is what [DatabaseBlip] counted.
type BlipReport struct {
	Runs, Succeeded, NeedsAttention int
	// Duplicates counts step executions beyond the first, per run and step
	// key, and tx effect rows beyond one per run.
	Duplicates int
	Duration   time.Duration
}

// DatabaseBlip is the database restart under load (issue 10 §4): 30 runs
// of Chain are queued on a journal h opens, two workers (each executing
// two runs at once) work on them, and while they do, down makes the
// database unreachable, right after a once step's effect (Notify), before
// its row is written; up, called 6 seconds later, brings it back. Every
// run must succeed: none parked, no step executed twice, no tx effect
// written twice. The report is returned for the record.
func DatabaseBlip(t *testing.T, h Harness, down, up func()) BlipReport {
	t.Helper()
	j := h.Open(t)
	defer j.Close()
	current.Lock()
	current.h = h
	current.Unlock()
	ctx := context.Background()
	plan := Plan{Loop: 6, SlowLoop: 40 * time.Millisecond}
	var ids []string
	for i := 0; i < 30; i++ {
		id := newRunID(t)
		ids = append(ids, id)
		if _, err := resume.NewEngine(j).Enqueue(ctx, id, Chain, plan); err != nil {
			t.Fatal(err)
		}
	}
	start := time.Now()
	var stops []func() error
	for i := 0; i < 2; i++ {
		e := resume.NewEngine(j, resume.WithOwner(fmt.Sprintf("blip-worker-%d", i)))
		stops = append(stops, startWorker(ctx, e, resume.WorkerOptions{Concurrency: 2, PollInterval: 50 * time.Millisecond}))
	}
	// The database goes down the moment a once step's effect happened,
	// before its "succeeded" row is written, as in the attack; the other
	// runs in flight are at other steps.
	var once sync.Once
	wentDown := make(chan struct{})
	hook := func() {
		if time.Since(start) > 300*time.Millisecond {
			once.Do(func() { down(); close(wentDown) })
		}
	}
	notifyHook.Store(&hook)
	defer notifyHook.Store(nil)
	select {
	case <-wentDown:
	case <-time.After(20 * time.Second):
		t.Fatal("no Notify executed 300 ms after the start: the database never went down")
	}
	time.Sleep(6 * time.Second)
	up()

	var runs []journal.RunRecord
	deadline := time.Now().Add(45 * time.Second)
	for {
		var err error
		runs, err = j.ListRuns(ctx, journal.RunFilter{})
		finished := 0
		for _, r := range runs {
			if r.Status.Finished() || r.Status == journal.StatusNeedsAttention {
				finished++
			}
		}
		if err == nil && finished == len(ids) {
			break
		}
		if time.Now().After(deadline) {
			var stuck []string
			for _, r := range runs {
				if !r.Status.Finished() && r.Status != journal.StatusNeedsAttention {
					stuck = append(stuck, fmt.Sprintf("%s %s (owner %q until %s, last step %s, error %q)",
						r.RunID, r.Status, r.LeaseOwner, r.LeaseUntil.Format(time.RFC3339Nano), r.LastStep, r.Error))
				}
			}
			t.Fatalf("45s after the database came back, %d of %d runs are finished (last error: %v); unfinished: %v", finished, len(ids), err, stuck)
		}
		time.Sleep(50 * time.Millisecond)
	}
	for _, stop := range stops {
		if err := stop(); err != nil {
			t.Errorf("work: %v", err)
		}
	}
	rep := BlipReport{Runs: len(ids), Duration: time.Since(start)}
	for _, r := range runs {
		switch r.Status {
		case journal.StatusSucceeded:
			rep.Succeeded++
		case journal.StatusNeedsAttention:
			rep.NeedsAttention++
			t.Errorf("run %s parked: %s", r.RunID, r.Error)
		default:
			t.Errorf("run %s is %s: %s", r.RunID, r.Status, r.Error)
		}
	}
	for _, id := range ids {
		want := map[string]int{"Fetch": 1, "Notify": 1, "Write": 1, "Loop": plan.Loop}
		for step, n := range want {
			if got := seen.count(id, step); got > n {
				rep.Duplicates += got - n
				t.Errorf("run %s: %s executed %d times, want %d", id, step, got, n)
			}
		}
		n, err := h.CountEffects(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if n > 1 {
			rep.Duplicates += n - 1
			t.Errorf("run %s: %d tx effect rows, want 1", id, n)
		}
	}
	return rep
}
