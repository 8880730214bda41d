package journaltest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/resumegen/resumegen/runtime/resume"
)

// ConcurrencyLadder is the number of concurrent runs BenchConcurrent is run
// at by every journal's benchmarks.
var ConcurrencyLadder = []int{1, 4, 16, 64}

// BenchConcurrent runs workflows of default steps from runs goroutines at
// once, each a fresh run of steps steps (its create, claim and finish
// counted in), beside runs goroutines doing as many raw single-row
// autocommit INSERTs. The two sides alternate in rounds, so that machine
// noise hits both alike. An op is one step (or insert) of one goroutine.
// It reports both rates, their ratio (journaled / raw: above 1 means the
// journal commits several runs' steps together) and the journal's commits
// per step.
func BenchConcurrent(b *testing.B, h BenchHarness, runs, steps int) {
	b.Helper()
	ctx := context.Background()
	e := resume.NewEngine(h.Journal)
	// Warm up: the manifest, and default steps from now on.
	if err := StartBenchRun(ctx, e, resume.PolicyDefault, 1); err != nil {
		b.Fatal(err)
	}
	all := func(fn func() error) time.Duration {
		t0 := time.Now()
		var wg sync.WaitGroup
		errs := make([]error, runs)
		for g := range runs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[g] = fn()
			}()
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				b.Fatal(err)
			}
		}
		return time.Since(t0)
	}
	var raw, journaled time.Duration
	var done int
	before := h.Journal.Counters()
	b.ResetTimer()
	for done < b.N {
		raw += all(func() error {
			for range steps {
				if err := h.RawInsert(ctx); err != nil {
					return err
				}
			}
			return nil
		})
		journaled += all(func() error {
			_, err := e.Start(ctx, benchRunID("concurrent"), BenchFlow, steps)
			return err
		})
		done += runs * steps
	}
	b.StopTimer()
	after := h.Journal.Counters()
	b.ReportMetric(float64(done)/journaled.Seconds(), "steps/s")
	b.ReportMetric(float64(done)/raw.Seconds(), "raw-inserts/s")
	b.ReportMetric(raw.Seconds()/journaled.Seconds(), "throughput-ratio")
	b.ReportMetric(float64(after.Commits-before.Commits)/float64(done), "commits/step")
}
