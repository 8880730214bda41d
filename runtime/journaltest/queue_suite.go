package journaltest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/resumegen/resumegen/runtime/journal"
	"github.com/resumegen/resumegen/runtime/resume"
)

// SuiteQueue is the queue of Queued, the workflow of the queue cases.
const SuiteQueue = "suite-q"

// QueuedIn is the input of Queued: the gauge that records its executions
// (one per case), how long it holds its slot, a tag for the order, and
// the queue key it was enqueued under, for the log of worker processes.
type QueuedIn struct {
	Gauge string
	Hold  time.Duration
	Tag   string
	Key   string
}

// gauge records, for one case, how many Queued runs execute at once (the
// most at any moment), and the tags and times of their starts, in order.
type gauge struct {
	mu     sync.Mutex
	cur    int
	most   int
	tags   []string
	starts []time.Time
}

var gauges = struct {
	sync.Mutex
	m map[string]*gauge
}{m: map[string]*gauge{}}

func gaugeOf(name string) *gauge {
	gauges.Lock()
	defer gauges.Unlock()
	g := gauges.m[name]
	if g == nil {
		g = &gauge{}
		gauges.m[name] = g
	}
	return g
}

// Queued holds its slot for in.Hold, counted on its gauge.
func Queued(ctx context.Context, in QueuedIn) (string, error) {
	logQueued("start", in.Tag, in.Key)
	defer logQueued("end", in.Tag, in.Key)
	g := gaugeOf(in.Gauge)
	g.mu.Lock()
	g.cur++
	g.most = max(g.most, g.cur)
	g.tags, g.starts = append(g.tags, in.Tag), append(g.starts, time.Now())
	g.mu.Unlock()
	defer func() { g.mu.Lock(); g.cur--; g.mu.Unlock() }()
	select {
	case <-time.After(in.Hold):
	case <-ctx.Done():
		return "", ctx.Err()
	}
	return in.Tag, nil
}

var queuedDef = &resume.WorkflowDef{
	Package: "github.com/resumegen/resumegen/runtime/journaltest", Name: "Queued", Version: "queued-v1", Queue: SuiteQueue,
	Run: func(ctx context.Context, args resume.Args) (any, error) {
		var in QueuedIn
		if err := args.Decode(&in); err != nil {
			return nil, err
		}
		return Queued(ctx, in)
	},
}

func init() { resume.Register(Queued, queuedDef) }

var queueCase = struct {
	sync.Mutex
	n int
}{}

// hidden is a journal with nothing but the Journal interface: no Queuer,
// no Unwrap.
type hidden struct{ journal.Journal }

// runQueues proves queues with limits (issue 22 §1) on the journal h
// opens: limits hold across workers with journals of their own, a key's
// backlog does not starve another key, the rate holds, priorities order
// the claims, and a run of a queue executes only through a worker.
func runQueues(t *testing.T, h Harness, open func(t *testing.T) journal.Journal) {
	ctx := context.Background()
	name := func(what string) string {
		queueCase.Lock()
		defer queueCase.Unlock()
		queueCase.n++
		return fmt.Sprintf("%s-%d-%d", what, time.Now().UnixNano(), queueCase.n)
	}
	another := func(t *testing.T, j journal.Journal) journal.Journal {
		if h.OpenAgain == nil {
			return j
		}
		j2 := h.OpenAgain(t)
		t.Cleanup(func() { j2.Close() })
		return j2
	}
	// work runs a worker of concurrency n on j with the limits q until
	// the test ends.
	work := func(t *testing.T, j journal.Journal, owner string, n int, q resume.Queue) {
		wctx, stop := context.WithCancel(ctx)
		done := make(chan error, 1)
		e := resume.NewEngine(j, resume.WithOwner(owner), resume.WithQueues(q), resume.WithLease(10*time.Second))
		go func() {
			done <- e.Work(wctx, resume.WorkerOptions{Concurrency: n, PollInterval: 50 * time.Millisecond})
		}()
		t.Cleanup(func() {
			stop()
			if err := <-done; err != nil {
				t.Errorf("worker %s: %v", owner, err)
			}
		})
	}
	enqueue := func(t *testing.T, ctx context.Context, e *resume.Engine, id string, in QueuedIn) {
		t.Helper()
		if _, err := e.Enqueue(ctx, id, Queued, in); err != nil {
			t.Fatalf("enqueue %s: %v", id, err)
		}
	}
	waitAll := func(t *testing.T, j journal.Journal, ids []string) {
		t.Helper()
		deadline := time.Now().Add(60 * time.Second)
		for _, id := range ids {
			for {
				r, _, err := j.LoadRun(ctx, id)
				if err == nil && r.Status == journal.StatusSucceeded {
					break
				}
				if err == nil && r.Status.Finished() {
					t.Fatalf("run %s ended %s: %s", id, r.Status, r.Error)
				}
				if time.Now().After(deadline) {
					t.Fatalf("run %s still %s after 60 s (%v)", id, r.Status, err)
				}
				time.Sleep(20 * time.Millisecond)
			}
		}
	}

	t.Run("queues: never more runs of a queue execute than its limit, across workers of their own journals", func(t *testing.T) {
		j := open(t)
		g := name("limit")
		q := resume.Queue{Name: SuiteQueue, Concurrency: 3}
		e := resume.NewEngine(j)
		var ids []string
		for i := range 24 {
			id := fmt.Sprintf("%s-%02d", g, i)
			enqueue(t, ctx, e, id, QueuedIn{Gauge: g, Hold: 40 * time.Millisecond, Tag: id})
			ids = append(ids, id)
		}
		for w := range 3 {
			work(t, another(t, j), fmt.Sprintf("%s-w%d", g, w), 4, q)
		}
		waitAll(t, j, ids)
		got := gaugeOf(g)
		got.mu.Lock()
		defer got.mu.Unlock()
		if got.most > q.Concurrency || got.most < 2 || len(got.tags) != len(ids) {
			t.Fatalf("at most %d runs executed at once, %d executions of %d runs; want at most %d (and more than one: 12 slots)",
				got.most, len(got.tags), len(ids), q.Concurrency)
		}
		queuer, _ := journal.Find[journal.Queuer](j)
		qs, err := queuer.ListQueues(ctx)
		if err != nil || !slices.ContainsFunc(qs, func(s journal.QueueStats) bool { return s.Limits == q && s.Pending == 0 && s.Running == 0 }) {
			t.Fatalf("queues listed: %+v, %v; want %s with its limits, nothing pending or running", qs, err, SuiteQueue)
		}
	})

	t.Run("queues: one key's backlog does not starve another key", func(t *testing.T) {
		j := open(t)
		g := name("fair")
		q := resume.Queue{Name: SuiteQueue, Concurrency: 2, PerKey: 1}
		e := resume.NewEngine(j)
		var ids []string
		for i := range 12 {
			id := fmt.Sprintf("%s-big-%02d", g, i)
			enqueue(t, resume.WithQueueKey(ctx, "big"), e, id, QueuedIn{Gauge: g, Hold: 30 * time.Millisecond, Tag: "big"})
			ids = append(ids, id)
		}
		small := g + "-small"
		enqueue(t, resume.WithQueueKey(ctx, "small"), e, small, QueuedIn{Gauge: g, Hold: 30 * time.Millisecond, Tag: "small"})
		ids = append(ids, small)
		work(t, j, g+"-w", 4, q)
		waitAll(t, j, ids)
		got := gaugeOf(g)
		got.mu.Lock()
		defer got.mu.Unlock()
		if at := slices.Index(got.tags, "small"); at < 0 || at > 1 || got.most > 2 {
			t.Fatalf("starts %v (at most %d at once); want the one run of key small among the first two, behind 12 older runs of key big held to one slot", got.tags, got.most)
		}
	})

	t.Run("queues: the rate bounds the starts in any period", func(t *testing.T) {
		j := open(t)
		g := name("rate")
		q := resume.Queue{Name: SuiteQueue, Rate: 4, Per: 400 * time.Millisecond}
		e := resume.NewEngine(j)
		var ids []string
		for i := range 12 {
			id := fmt.Sprintf("%s-%02d", g, i)
			enqueue(t, ctx, e, id, QueuedIn{Gauge: g, Tag: id})
			ids = append(ids, id)
		}
		work(t, j, g+"-w1", 8, q)
		work(t, another(t, j), g+"-w2", 8, q)
		waitAll(t, j, ids)
		got := gaugeOf(g)
		got.mu.Lock()
		defer got.mu.Unlock()
		// The journal stamps each start at its claim; the body starts a
		// moment later, by a delay that varies: windows a little shorter
		// than the period tolerate that.
		const slack = 60 * time.Millisecond
		starts := slices.Clone(got.starts)
		slices.SortFunc(starts, func(a, b time.Time) int { return a.Compare(b) })
		for i := range starts {
			n := 0
			for _, s := range starts[i:] {
				if s.Sub(starts[i]) < q.Per-slack {
					n++
				}
			}
			if n > q.Rate {
				t.Fatalf("%d starts within %s of the start at %s; want at most %d a %s (starts %v)", n, q.Per-slack, starts[i].Format("15:04:05.000"), q.Rate, q.Per, starts)
			}
		}
		if span := starts[len(starts)-1].Sub(starts[0]); span < 2*q.Per-slack {
			t.Fatalf("12 starts at %d per %s took %s; want at least %s", q.Rate, q.Per, span, 2*q.Per)
		}
	})

	t.Run("queues: a claim takes the highest priority first", func(t *testing.T) {
		j := open(t)
		g := name("prio")
		q := resume.Queue{Name: SuiteQueue, Concurrency: 1}
		e := resume.NewEngine(j)
		var ids []string
		for i, p := range []int{0, 0, 5, 0, 10, -1} {
			id := fmt.Sprintf("%s-%d", g, i)
			enqueue(t, resume.WithPriority(ctx, p), e, id, QueuedIn{Gauge: g, Tag: fmt.Sprint(p)})
			ids = append(ids, id)
		}
		work(t, j, g+"-w", 4, q)
		waitAll(t, j, ids)
		got := gaugeOf(g)
		got.mu.Lock()
		defer got.mu.Unlock()
		if want := []string{"10", "5", "0", "0", "0", "-1"}; !slices.Equal(got.tags, want) {
			t.Fatalf("priorities in the order executed: %v; want %v", got.tags, want)
		}
	})

	t.Run("queues: a run of a queue executes through a worker only", func(t *testing.T) {
		j := open(t)
		g := name("direct")
		e := resume.NewEngine(j)
		if _, err := e.Start(ctx, g, Queued, QueuedIn{Gauge: g}); !errors.Is(err, resume.ErrQueued) {
			t.Fatalf("Start of a workflow of a queue: %v; want ErrQueued", err)
		}
		if _, _, err := j.LoadRun(ctx, g); !errors.Is(err, journal.ErrRunNotFound) {
			t.Fatalf("run %s after a refused Start: %v; want none created", g, err)
		}
		enqueue(t, resume.WithQueueKey(resume.WithPriority(ctx, 3), "tenant"), e, g, QueuedIn{Gauge: g})
		r, _, err := j.LoadRun(ctx, g)
		if err != nil || r.Queue != SuiteQueue || r.QueueKey != "tenant" || r.Priority != 3 {
			t.Fatalf("run %s: queue %q key %q priority %d, %v; want %s, tenant, 3", g, r.Queue, r.QueueKey, r.Priority, err, SuiteQueue)
		}
		if res, err := e.Resume(ctx, g); !errors.Is(err, resume.ErrQueued) || res.Status != journal.StatusPending {
			t.Fatalf("Resume of a pending run of a queue: %+v, %v; want it left pending with ErrQueued", res, err)
		}
		if n := len(gaugeOf(g).tags); n != 0 {
			t.Fatalf("the run executed %d times outside a worker", n)
		}
		err = resume.NewEngine(hidden{j}, resume.WithQueues(resume.Queue{Name: SuiteQueue, Concurrency: 1})).Work(ctx, resume.WorkerOptions{})
		if !errors.Is(err, resume.ErrNoQueues) {
			t.Fatalf("a worker over a journal that does not enforce queues: %v; want ErrNoQueues", err)
		}
	})
}
