package journaltest

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/resumegen/resumegen/runtime/journal"
	"github.com/resumegen/resumegen/runtime/resume"
)

// The waiting benchmarks (issue 13 §1): what waiting runs cost an idle
// worker, and how late a worker resumes a run whose wait ended.

// Wake is the argument of WakeFlow and SignalFlow: the run's id, and for
// WakeFlow the time it sleeps until.
type Wake struct {
	ID string
	At time.Time
}

// WakeFlow sleeps until w.At. Its durable form (wakeDef) notes when the
// run got past the sleep (see wakes).
func WakeFlow(ctx context.Context, w Wake) error {
	return resume.SleepUntil(ctx, w.At)
}

// SignalFlow awaits the event "go". Its durable form notes when the run
// got past the await.
func SignalFlow(ctx context.Context, w Wake) error {
	_, err := resume.Await[int](ctx, "go", 0)
	return err
}

// wakes records, by run id, how many times a latency workflow's body was
// entered and when it got past its wait.
var wakes = struct {
	sync.Mutex
	entries map[string]int
	resumed map[string]time.Time
	early   int // waits that returned in the entry that started them
}{entries: map[string]int{}, resumed: map[string]time.Time{}}

func (w Wake) entered() {
	wakes.Lock()
	defer wakes.Unlock()
	wakes.entries[w.ID]++
}

// passed notes that w's wait is over; a wait over in the entry that
// started it never suspended: no latency sample.
func (w Wake) passed() {
	now := time.Now()
	wakes.Lock()
	defer wakes.Unlock()
	if _, ok := wakes.resumed[w.ID]; ok {
		return
	}
	if wakes.entries[w.ID] < 2 {
		wakes.early++
		return
	}
	wakes.resumed[w.ID] = now
}

var wakeSteps = []resume.StepDef{
	{Name: "resume.SleepUntil", Callee: "github.com/resumegen/resumegen/runtime/resume.SleepUntil", Signature: "func(context.Context, time.Time) error"},
}

var signalSteps = []resume.StepDef{
	{Name: "go", Callee: "github.com/resumegen/resumegen/runtime/resume.Await",
		Signature: "func(context.Context, string, time.Duration) (int, error)", JSON: "int"},
}

func wakeDef(name string, steps []resume.StepDef, wait func(context.Context, Wake) error) *resume.WorkflowDef {
	return &resume.WorkflowDef{
		Package: waitPkg, Name: name, Version: name + "-v1", Steps: steps,
		Run: func(ctx context.Context, args resume.Args) (any, error) {
			var w Wake
			if err := args.Decode(&w); err != nil {
				return nil, err
			}
			w.entered()
			if err := wait(ctx, w); err != nil {
				return nil, err
			}
			w.passed()
			return nil, nil
		},
	}
}

func init() {
	resume.Register(WakeFlow, wakeDef("WakeFlow", wakeSteps, func(ctx context.Context, w Wake) error {
		return resume.SleepUntil(ctx, w.At)
	}))
	resume.Register(SignalFlow, wakeDef("SignalFlow", signalSteps, func(ctx context.Context, w Wake) error {
		_, err := resume.Await[int](ctx, "go", 0)
		return err
	}))
}

// startWaiting starts runs, prefix-0 ... prefix-(n-1), with e, each
// until it suspends, from a few goroutines; args gives run i's argument.
func startWaiting(tb testing.TB, e *resume.Engine, wf any, prefix string, n int, args func(id string, i int) any) []string {
	tb.Helper()
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("%s-%d", prefix, i)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := g; i < n; i += 4 {
				_, err := e.Start(context.Background(), ids[i], wf, args(ids[i], i))
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
	return ids
}

// FillWaiting leaves n runs waiting in h's journal: half asleep until
// far in the future (SleepFlow, 1000 hours), half awaiting an event
// no one sends (ApproveFlow, no timeout).
func FillWaiting(tb testing.TB, j journal.Journal, n int) {
	tb.Helper()
	e := resume.NewEngine(j, resume.WithLogger(quietLogger()))
	startWaiting(tb, e, SleepFlow, benchRunID("asleep"), n/2, func(string, int) any { return 1000 * time.Hour })
	startWaiting(tb, e, ApproveFlow, benchRunID("awaiting"), n-n/2, func(string, int) any { return Gate{} })
}

// idleSample is what one idle window of a worker cost.
type idleSample struct {
	queries float64 // journal reads and commits per second
	cpu     float64 // process CPU time (user+system) per second of window
}

// idleWindow runs Engine.Work on j for a warm-up, then measures the
// journal's reads and commits and the process's CPU time over window.
func idleWindow(tb testing.TB, j journal.Journal, window time.Duration) idleSample {
	tb.Helper()
	e := resume.NewEngine(j, resume.WithLogger(quietLogger()))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.Work(ctx, resume.WorkerOptions{}) }()
	time.Sleep(1500 * time.Millisecond) // start-up: manifests, advertisement, first claims
	runtime.GC()
	c0, cpu0, t0 := j.Counters(), cpuTime(tb), time.Now()
	time.Sleep(window)
	c1, cpu1, el := j.Counters(), cpuTime(tb), time.Since(t0)
	cancel()
	if err := <-done; err != nil {
		tb.Fatal(err)
	}
	q := float64(c1.Reads-c0.Reads+c1.Commits-c0.Commits) / el.Seconds()
	return idleSample{queries: q, cpu: (cpu1 - cpu0).Seconds() / el.Seconds()}
}

// BenchIdleWaiting measures an idle worker (Engine.Work, default poll
// interval, nothing to do) for window per op, alternately on empty, a
// journal with no run, and full, one holding n waiting runs
// (FillWaiting): journal queries (reads and commits, as Counters counts
// them) per second and process CPU time per second of each, and their
// ratios full/empty. Target: flat (ratios near 1).
func BenchIdleWaiting(b *testing.B, empty, full journal.Journal, n int, window time.Duration) {
	FillWaiting(b, full, n)
	var e, f idleSample
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		order := []journal.Journal{empty, full}
		if i%2 == 1 {
			order = []journal.Journal{full, empty}
		}
		for _, j := range order {
			s := idleWindow(b, j, window)
			if j == empty {
				e.queries, e.cpu = e.queries+s.queries, e.cpu+s.cpu
			} else {
				f.queries, f.cpu = f.queries+s.queries, f.cpu+s.cpu
			}
		}
	}
	nf := float64(b.N)
	b.ReportMetric(e.queries/nf, "empty-queries/s")
	b.ReportMetric(f.queries/nf, "full-queries/s")
	b.ReportMetric(f.queries/e.queries, "queries-full/empty")
	b.ReportMetric(1000*e.cpu/nf, "empty-cpu-ms/s")
	b.ReportMetric(1000*f.cpu/nf, "full-cpu-ms/s")
	b.ReportMetric(f.cpu/e.cpu, "cpu-full/empty")
}

// BenchClaimIdle times the queries of an idle worker's loop, a ClaimNext
// that finds nothing and a NextWake, on empty (no run) beside full (n
// waiting runs, FillWaiting), interleaved, and reports their ratio: a
// claim that scanned the waiting rows would grow with n.
func BenchClaimIdle(b *testing.B, empty, full journal.Journal, n int) {
	FillWaiting(b, full, n)
	ctx := context.Background()
	workflows := []string{waitPkg + ".SleepFlow", waitPkg + ".ApproveFlow", waitPkg + ".WakeFlow"}
	req := journal.ClaimNextRequest{Owner: "bench-idle", Lease: time.Minute, Workflows: workflows}
	probe := func(j journal.Journal) time.Duration {
		t0 := time.Now()
		if _, _, err := j.ClaimNext(ctx, req); !errors.Is(err, journal.ErrNoRunReady) {
			b.Fatalf("claim next: want none ready, got %v", err)
		}
		if _, _, err := j.NextWake(ctx, workflows); err != nil {
			b.Fatal(err)
		}
		return time.Since(t0)
	}
	var te, tf time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		te += probe(empty)
		tf += probe(full)
	}
	b.ReportMetric(float64(te.Microseconds())/float64(b.N), "empty-µs/op")
	b.ReportMetric(float64(tf.Microseconds())/float64(b.N), "full-µs/op")
	b.ReportMetric(float64(tf)/float64(te), "full/empty")
}

// BenchWakeLatency starts n runs that sleep until staggered times (gap
// apart, the first a few seconds after they are all started), has one
// worker (Engine.Work, default poll interval) resume them, and reports
// how late each resumed after its due time, p50 and p99 in ms, over all
// b.N × n sleeps.
func BenchWakeLatency(b *testing.B, j journal.Journal, n int, gap time.Duration) {
	var lat []time.Duration
	for i := 0; i < b.N; i++ {
		lat = append(lat, wakeRound(b, j, n, gap)...)
	}
	reportLatency(b, lat)
}

func wakeRound(b *testing.B, j journal.Journal, n int, gap time.Duration) []time.Duration {
	starter := resume.NewEngine(j, resume.WithLogger(quietLogger()))
	base := time.Now().Add(2*time.Second + time.Duration(n)*3*time.Millisecond)
	dueAt := func(i int) time.Time { return base.Add(time.Duration(i) * gap) }
	ids := startWaiting(b, starter, WakeFlow, benchRunID("wake"), n, func(id string, i int) any {
		return Wake{ID: id, At: dueAt(i)}
	})
	if time.Now().After(base) {
		b.Fatalf("starting %d runs took longer than planned: the first sleep was due before all were started", n)
	}
	resumed := workUntilResumed(b, j, ids, base.Add(time.Duration(n)*gap+30*time.Second), nil)
	out := make([]time.Duration, 0, n)
	for i, id := range ids {
		out = append(out, resumed[id].Sub(dueAt(i)))
	}
	return out
}

// workUntilResumed runs one worker on j until every run of ids passed its
// wait (or deadline), calling during (if set) once the worker runs, and
// returns when each resumed.
func workUntilResumed(b *testing.B, j journal.Journal, ids []string, deadline time.Time, during func()) map[string]time.Time {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	e := resume.NewEngine(j, resume.WithLogger(quietLogger()))
	go func() { done <- e.Work(ctx, resume.WorkerOptions{}) }()
	if during != nil {
		during()
	}
	out := map[string]time.Time{}
	for time.Now().Before(deadline) && len(out) < len(ids) {
		time.Sleep(50 * time.Millisecond)
		wakes.Lock()
		for _, id := range ids {
			if t, ok := wakes.resumed[id]; ok {
				out[id] = t
			}
		}
		wakes.Unlock()
	}
	cancel()
	if err := <-done; err != nil {
		b.Fatal(err)
	}
	if len(out) < len(ids) {
		b.Fatalf("%d of %d runs resumed before the deadline", len(out), len(ids))
	}
	return out
}

// BenchSignalLatency starts n runs that await the event "go", has one
// worker (Engine.Work, default poll interval) execute them, and sends
// each its event from another engine, gap apart: it reports, p50 and p99
// in ms, the time from Engine.Signal's return to the run's body resuming
// past its await.
func BenchSignalLatency(b *testing.B, j journal.Journal, n int, gap time.Duration) {
	var lat []time.Duration
	for i := 0; i < b.N; i++ {
		lat = append(lat, signalRound(b, j, n, gap)...)
	}
	reportLatency(b, lat)
}

func signalRound(b *testing.B, j journal.Journal, n int, gap time.Duration) []time.Duration {
	sender := resume.NewEngine(j, resume.WithLogger(quietLogger()))
	ids := startWaiting(b, sender, SignalFlow, benchRunID("signal"), n, func(id string, _ int) any { return Wake{ID: id} })
	sent := make(map[string]time.Time, n)
	send := func() {
		time.Sleep(time.Second) // the worker's start-up
		for _, id := range ids {
			if err := sender.Signal(context.Background(), id, "go", 1); err != nil {
				b.Fatal(err)
			}
			sent[id] = time.Now()
			time.Sleep(gap)
		}
	}
	resumed := workUntilResumed(b, j, ids, time.Now().Add(time.Second+time.Duration(n)*gap+60*time.Second), send)
	out := make([]time.Duration, 0, n)
	for _, id := range ids {
		out = append(out, resumed[id].Sub(sent[id]))
	}
	return out
}

// reportLatency reports the p50 and p99 of lat in milliseconds, and the
// waits that never suspended (a benchmark that started too slowly).
func reportLatency(b *testing.B, lat []time.Duration) {
	slices.Sort(lat)
	at := func(p float64) float64 {
		return float64(lat[min(len(lat)-1, int(p*float64(len(lat))))].Microseconds()) / 1000
	}
	b.ReportMetric(at(0.50), "p50-ms")
	b.ReportMetric(at(0.99), "p99-ms")
	b.ReportMetric(float64(lat[len(lat)-1].Microseconds())/1000, "max-ms")
	b.ReportMetric(float64(len(lat)), "samples")
	wakes.Lock()
	b.ReportMetric(float64(wakes.early), "unsuspended")
	wakes.Unlock()
}

// quietLogger drops the engine's logs: the benchmarks' workers idle.
func quietLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }
