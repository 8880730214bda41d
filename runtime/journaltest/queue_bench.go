package journaltest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/resumegen/resumegen/runtime/resume"
)

// Unqueued is Queued's twin in no queue, for BenchQueueLimits.
func Unqueued(ctx context.Context, in QueuedIn) (string, error) { return Queued(ctx, in) }

func init() {
	def := *queuedDef
	def.Name, def.Version, def.Queue = "Unqueued", "unqueued-v1", ""
	resume.Register(Unqueued, &def)
}

// BenchQueueLimits measures the cost of a queue's claim: n one-step-free
// runs drained by StormWorkers workers of StormConcurrency each, once of
// a workflow of no queue and once of one whose queue has a concurrency
// limit that does not bind (StormWorkers × StormConcurrency) and a
// per-key limit over 8 keys that does not either, each as runs/s
// (queue=none, queue=limited), so that the ratio is the limited claim's
// overhead alone: the queue row's lock, the counts and the candidate
// queries.
func BenchQueueLimits(b *testing.B, h BenchHarness, n int) {
	ctx := context.Background()
	for _, limited := range []bool{false, true} {
		name := "queue=none"
		if limited {
			name = "queue=limited"
		}
		b.Run(name, func(b *testing.B) {
			e := resume.NewEngine(h.Journal, resume.WithLogger(quietLogger()))
			var total time.Duration
			for range b.N {
				g := benchRunID("qlim")
				ids := make([]string, n)
				for i := range ids {
					ids[i] = fmt.Sprintf("%s-%05d", g, i)
					in := QueuedIn{Gauge: g, Tag: ids[i]}
					var err error
					if limited {
						_, err = e.Enqueue(resume.WithQueueKey(ctx, fmt.Sprint(i%8)), ids[i], Queued, in)
					} else {
						_, err = e.Enqueue(ctx, ids[i], Unqueued, in)
					}
					if err != nil {
						b.Fatal(err)
					}
				}
				t0 := time.Now()
				stop := workers(b, h, 20*time.Millisecond, resume.WithQueues(resume.Queue{Name: SuiteQueue,
					Concurrency: StormWorkers * StormConcurrency, PerKey: StormWorkers * StormConcurrency}))
				for {
					if g := gaugeOf(g); func() bool { g.mu.Lock(); defer g.mu.Unlock(); return len(g.tags) >= n && g.cur == 0 }() {
						break
					}
					time.Sleep(time.Millisecond)
				}
				total += time.Since(t0)
				stop()
			}
			b.ReportMetric(float64(n*b.N)/total.Seconds(), "runs/s")
		})
	}
}
