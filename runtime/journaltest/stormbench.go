package journaltest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/resumegen/resumegen/runtime/resume"
)

// The wake storm and the queue drain (issue 23 §2 and §4): many runs due
// at once, drained by several workers, beside a raw SQL queue of as many
// rows drained by as many goroutines on the same database in the same run.

// RawQueue is the raw baseline of the storm and drain benchmarks: a plain
// job table in the journal's database. Fill inserts n rows, due now;
// Take claims the oldest one with one UPDATE (FOR UPDATE SKIP LOCKED where
// the database has it) and marks it done with a second, each committed on
// its own: ok is false when no row is left.
type RawQueue struct {
	Fill func(ctx context.Context, n int) error
	Take func(ctx context.Context) (ok bool, err error)
}

// StormWorkers is how many worker engines drain the storm and the queue,
// each its own owner on its own journal handle, and StormConcurrency the
// Concurrency of each.
const (
	StormWorkers     = 4
	StormConcurrency = 16
)

// StormFlow sleeps until w.At, then executes one empty step. Its durable
// form notes when each run got past its sleep and when it finished.
func StormFlow(ctx context.Context, w Wake) error { return nil }

// DrainFlow executes one empty step. It is version "v1", the version
// BenchHarness.FillRuns inserts, and ignores its input.
func DrainFlow(ctx context.Context) error { return nil }

var stormSteps = []resume.StepDef{
	wakeSteps[0],
	{Name: "Touch", Callee: "journaltest.Empty", Signature: "func(context.Context) error", Policy: resume.PolicyDefault},
}

var drainSteps = []resume.StepDef{
	{Name: "Touch", Callee: "journaltest.Empty", Signature: "func(context.Context) error", Policy: resume.PolicyDefault},
}

// storm records, by run id, when each storm run passed its sleep and
// when each storm or drain run finished.
var storm = struct {
	sync.Mutex
	woke     map[string]time.Time
	finished []time.Time // drain runs, in the order they finished
	done     int         // storm runs finished
	entries  int         // storm runs' bodies entered
}{woke: map[string]time.Time{}}

func touch(context.Context) error { return nil }

func init() {
	resume.Register(StormFlow, &resume.WorkflowDef{
		Package: waitPkg, Name: "StormFlow", Version: "storm-v1", Steps: stormSteps,
		Run: func(ctx context.Context, args resume.Args) (any, error) {
			var w Wake
			if err := args.Decode(&w); err != nil {
				return nil, err
			}
			storm.Lock()
			storm.entries++
			storm.Unlock()
			if err := resume.SleepUntil(ctx, w.At); err != nil {
				return nil, err
			}
			now := time.Now()
			storm.Lock()
			if _, ok := storm.woke[w.ID]; !ok {
				storm.woke[w.ID] = now
			}
			storm.Unlock()
			if err := resume.Call0(ctx, &stormSteps[1], touch); err != nil {
				return nil, err
			}
			now = time.Now()
			storm.Lock()
			storm.done++
			storm.finished = append(storm.finished, now)
			storm.Unlock()
			return nil, nil
		},
	})
	resume.Register(DrainFlow, &resume.WorkflowDef{
		Package: waitPkg, Name: "DrainFlow", Version: "v1", Steps: drainSteps,
		Run: func(ctx context.Context, args resume.Args) (any, error) {
			if err := resume.Call0(ctx, &drainSteps[0], touch); err != nil {
				return nil, err
			}
			now := time.Now()
			storm.Lock()
			storm.finished = append(storm.finished, now)
			storm.Unlock()
			return nil, nil
		},
	})
}

// workers starts StormWorkers engines on handles of h's journal (its
// OpenAgain, else the journal itself), polling every poll (0: the
// default) with the options opts, and returns their stop.
func workers(tb testing.TB, h BenchHarness, poll time.Duration, opts ...resume.Option) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	errs := make(chan error, StormWorkers)
	for i := range StormWorkers {
		j := h.Journal
		if h.OpenAgain != nil && i > 0 {
			j = h.OpenAgain(tb)
		}
		e := resume.NewEngine(j, append([]resume.Option{resume.WithLogger(quietLogger()),
			resume.WithOwner(fmt.Sprintf("storm-worker-%d-%s", i, benchRunID("w")))}, opts...)...)
		go func() { errs <- e.Work(ctx, resume.WorkerOptions{Concurrency: StormConcurrency, PollInterval: poll}) }()
	}
	return func() {
		cancel()
		for range StormWorkers {
			if err := <-errs; err != nil {
				tb.Error(err)
			}
		}
	}
}

// rawDrain takes rows of q with StormWorkers × StormConcurrency
// goroutines until none is left, and returns when each row was done.
func rawDrain(tb testing.TB, q RawQueue) []time.Time {
	var mu sync.Mutex
	var out []time.Time
	var wg sync.WaitGroup
	var failed error
	for range StormWorkers * StormConcurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				ok, err := q.Take(context.Background())
				if err != nil {
					mu.Lock()
					failed = err
					mu.Unlock()
					return
				}
				if !ok {
					return
				}
				now := time.Now()
				mu.Lock()
				out = append(out, now)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if failed != nil {
		tb.Fatalf("raw queue: %v", failed)
	}
	slices.SortFunc(out, func(a, b time.Time) int { return a.Compare(b) })
	return out
}

// BenchWakeStorm starts n runs of StormFlow that all sleep until one
// instant, then has StormWorkers workers (Concurrency StormConcurrency
// each) resume and finish them, and reports, over b.N storms: runs/s
// drained from the due instant to the last run's finish, p50 and p99
// lateness (the time from the due instant to each run getting past its
// sleep), and beside it raw-runs/s, the same n rows of h.Raw drained by as
// many goroutines (claim and finish, two UPDATEs), and the ratio.
func BenchWakeStorm(b *testing.B, h BenchHarness, n int) {
	if h.Raw.Take == nil {
		b.Fatal("the harness has no raw queue")
	}
	ctx := context.Background()
	starter := resume.NewEngine(h.Journal, resume.WithLogger(quietLogger()))
	var lat []time.Duration
	var rate, raw, entries, ops float64
	var tenth [10]float64
	for range b.N {
		b.StopTimer()
		// The instant is far enough for every run to be started first:
		// 5 ms a start, several times what one takes on this machine idle.
		at := time.Now().Add(5*time.Second + time.Duration(n)*5*time.Millisecond)
		ids := make([]string, n)
		prefix := benchRunID("storm")
		for i := range ids {
			ids[i] = fmt.Sprintf("%s-%d", prefix, i)
		}
		startAll(b, starter, ids, func(id string) any { return Wake{ID: id, At: at} })
		if time.Now().After(at) {
			b.Fatalf("starting %d runs took longer than planned: they were due before all were started", n)
		}
		storm.Lock()
		storm.done, storm.entries, storm.finished = 0, 0, storm.finished[:0]
		storm.Unlock()
		c0 := h.Journal.Counters()
		stop := workers(b, h, 0)
		time.Sleep(time.Until(at))
		b.StartTimer()
		deadline := at.Add(time.Duration(n)*20*time.Millisecond + 30*time.Second)
		var last time.Time
		for {
			time.Sleep(10 * time.Millisecond)
			storm.Lock()
			done := storm.done
			storm.Unlock()
			if done >= n {
				last = time.Now()
				break
			}
			if time.Now().After(deadline) {
				b.Fatalf("%d of %d runs finished before the deadline", done, n)
			}
		}
		b.StopTimer()
		stop()
		c1 := h.Journal.Counters()
		rate += float64(n) / last.Sub(at).Seconds()
		storm.Lock()
		entries += float64(storm.entries) / float64(n)
		fin := slices.Clone(storm.finished)
		slices.SortFunc(fin, func(a, b time.Time) int { return a.Compare(b) })
		for k, r := range tenths(at, fin) {
			tenth[k] += r
		}
		ops += float64(c1.Reads-c0.Reads+c1.Commits-c0.Commits) / float64(n)
		for _, id := range ids {
			lat = append(lat, storm.woke[id].Sub(at))
		}
		storm.Unlock()
		if err := h.Raw.Fill(ctx, n); err != nil {
			b.Fatal(err)
		}
		t0 := time.Now()
		done := rawDrain(b, h.Raw)
		if len(done) != n {
			b.Fatalf("raw queue: %d of %d rows taken", len(done), n)
		}
		raw += float64(n) / done[len(done)-1].Sub(t0).Seconds()
	}
	slices.Sort(lat)
	at := func(p float64) float64 {
		return float64(lat[min(len(lat)-1, int(p*float64(len(lat))))].Microseconds()) / 1000
	}
	nb := float64(b.N)
	b.ReportMetric(rate/nb, "runs/s")
	b.ReportMetric(raw/nb, "raw-runs/s")
	b.ReportMetric(rate/raw, "runs/raw")
	b.ReportMetric(at(0.50), "p50-ms")
	b.ReportMetric(at(0.99), "p99-ms")
	b.ReportMetric(float64(lat[len(lat)-1].Microseconds())/1000, "max-ms")
	// How many times each run's body was entered after its start (1: the
	// wake-up only), and the queries of the first worker's journal
	// handle per run (a quarter of the workers' queries).
	b.ReportMetric(entries/nb, "entries/run")
	b.ReportMetric(ops/nb, "worker0-queries/run")
	for k, r := range tenth {
		b.ReportMetric(r/nb, fmt.Sprintf("tenth%d-runs/s", k+1))
	}
}

// startAll starts the runs of ids with e, each until it suspends, from a
// few goroutines.
func startAll(tb testing.TB, e *resume.Engine, ids []string, args func(id string) any) {
	tb.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := g; i < len(ids); i += 8 {
				_, err := e.Start(context.Background(), ids[i], StormFlow, args(ids[i]))
				if !errors.Is(err, resume.ErrRunWaiting) {
					errs <- fmt.Errorf("run %s: want it waiting, got %v", ids[i], err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		tb.Fatal(err)
	}
}

// tenths is the rate, per second, over each tenth of done (sorted times
// at which each item was done), counted from t0.
func tenths(t0 time.Time, done []time.Time) [10]float64 {
	var out [10]float64
	n := len(done)
	prev := t0
	for k := range 10 {
		end := done[(k+1)*n/10-1]
		out[k] = float64((k+1)*n/10-k*n/10) / end.Sub(prev).Seconds()
		prev = end
	}
	return out
}

// BenchQueueDrain queues n pending one-step runs of DrainFlow (FillRuns)
// and has StormWorkers workers drain them; beside it, n rows of h.Raw
// drained by as many goroutines. It reports the journal's and the raw
// queue's overall rates, their ratio, the journal's rate over the first
// and the last tenth of the queue and over each tenth (tenth-k-runs/s),
// and last/first: a falling rate shows as last/first below 1.
func BenchQueueDrain(b *testing.B, h BenchHarness, n int) {
	if h.Raw.Take == nil {
		b.Fatal("the harness has no raw queue")
	}
	ctx := context.Background()
	var rate, raw float64
	var tenth [10]float64
	for range b.N {
		b.StopTimer()
		if err := h.FillRuns(ctx, benchRunID("drain")+"-", waitPkg+".DrainFlow", n, false); err != nil {
			b.Fatal(err)
		}
		storm.Lock()
		storm.finished = storm.finished[:0]
		storm.Unlock()
		b.StartTimer()
		t0 := time.Now()
		stop := workers(b, h, 0)
		deadline := t0.Add(time.Duration(n)*20*time.Millisecond + 30*time.Second)
		for {
			time.Sleep(10 * time.Millisecond)
			storm.Lock()
			done := len(storm.finished)
			storm.Unlock()
			if done >= n {
				break
			}
			if time.Now().After(deadline) {
				b.Fatalf("%d of %d runs finished before the deadline", done, n)
			}
		}
		b.StopTimer()
		stop()
		storm.Lock()
		done := slices.Clone(storm.finished)
		storm.Unlock()
		slices.SortFunc(done, func(a, b time.Time) int { return a.Compare(b) })
		rate += float64(n) / done[n-1].Sub(t0).Seconds()
		for k, r := range tenths(t0, done) {
			tenth[k] += r
		}
		if err := h.Raw.Fill(ctx, n); err != nil {
			b.Fatal(err)
		}
		r0 := time.Now()
		rd := rawDrain(b, h.Raw)
		if len(rd) != n {
			b.Fatalf("raw queue: %d of %d rows taken", len(rd), n)
		}
		raw += float64(n) / rd[n-1].Sub(r0).Seconds()
	}
	nb := float64(b.N)
	b.ReportMetric(rate/nb, "runs/s")
	b.ReportMetric(raw/nb, "raw-runs/s")
	b.ReportMetric(rate/raw, "runs/raw")
	// The first tenth includes the workers' start; the second is the
	// first steady one.
	b.ReportMetric(tenth[1]/nb, "second-tenth-runs/s")
	b.ReportMetric(tenth[9]/nb, "last-tenth-runs/s")
	b.ReportMetric(tenth[9]/tenth[1], "last/second")
	for k, r := range tenth {
		b.ReportMetric(r/nb, fmt.Sprintf("tenth%d-runs/s", k+1))
	}
}
