package journaltest

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/resumegen/resumegen/runtime/resume"
)

// purgedWorkflow is the workflow of the runs BenchPurge fills: no code
// executes them, they are only deleted.
const purgedWorkflow = "example.com/bench.Purged"

// BenchPurge measures retention on a journal holding n finished runs of
// steps steps each, ended long ago: the engine's purge (Engine.Purge:
// batches of journal.DefaultPurgeBatch with a pause as long as each batch)
// against its raw baseline, one plain DELETE of the same rows in one
// transaction, and, beside each, the step latency of a worker running
// 10-step runs one after another (a run's time over its 10 steps, its
// create and finish included). It reports purge-runs/s and raw-runs/s,
// and step-us-idle (median, with nothing deleted), step-us-purge and
// step-us-raw (median during each), step-us-purge-max and step-us-raw-max
// (the slowest run's per-step time during each).
func BenchPurge(b *testing.B, h BenchHarness, n, steps int) {
	b.Helper()
	if h.FinishFilled == nil || h.RawDelete == nil {
		b.Fatal("BenchPurge needs BenchHarness.FinishFilled and RawDelete")
	}
	ctx := context.Background()
	e := resume.NewEngine(h.Journal, resume.WithRetention(time.Hour, resume.Retention{Workflow: purgedWorkflow, Succeeded: 24 * time.Hour}))
	fill := func(prefix string) {
		b.Helper()
		if err := h.FillRuns(ctx, prefix, purgedWorkflow, n, false); err != nil {
			b.Fatal(err)
		}
		if err := h.FinishFilled(ctx, prefix, steps); err != nil {
			b.Fatal(err)
		}
	}
	// measure runs 10-step runs until stop is closed (at least one) and
	// returns each one's time per step.
	measure := func(stop <-chan struct{}) []time.Duration {
		var out []time.Duration
		for {
			t0 := time.Now()
			if err := StartBenchRun(ctx, e, resume.PolicyDefault, 10); err != nil {
				b.Error(err)
				return out
			}
			out = append(out, time.Since(t0)/10)
			select {
			case <-stop:
				return out
			default:
			}
		}
	}
	beside := func(work func() error) (time.Duration, []time.Duration) {
		b.Helper()
		stop := make(chan struct{})
		var lat []time.Duration
		var wg sync.WaitGroup
		wg.Add(1)
		go func() { defer wg.Done(); lat = measure(stop) }()
		t0 := time.Now()
		err := work()
		took := time.Since(t0)
		close(stop)
		wg.Wait()
		if err != nil {
			b.Fatal(err)
		}
		return took, lat
	}
	var purgeTook, rawTook time.Duration
	var idle, purging, raw []time.Duration
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		idleStop := make(chan struct{})
		close(idleStop)
		for k := 0; k < 20; k++ {
			idle = append(idle, measure(idleStop)...)
		}
		fill(benchRunID("purge") + "-")
		b.StartTimer()
		took, lat := beside(func() error {
			res, err := e.Purge(ctx)
			if err == nil && res.Runs != n {
				b.Errorf("purged %d runs, want %d", res.Runs, n)
			}
			return err
		})
		purgeTook += took
		purging = append(purging, lat...)
		b.StopTimer()
		prefix := benchRunID("raw") + "-"
		fill(prefix)
		took, lat = beside(func() error { return h.RawDelete(ctx, prefix) })
		rawTook += took
		raw = append(raw, lat...)
		b.StartTimer()
	}
	med := func(d []time.Duration) float64 {
		s := slices.Clone(d)
		slices.Sort(s)
		return float64(s[len(s)/2].Microseconds())
	}
	most := func(d []time.Duration) float64 { return float64(slices.Max(d).Microseconds()) }
	b.ReportMetric(float64(n*b.N)/purgeTook.Seconds(), "purge-runs/s")
	b.ReportMetric(float64(n*b.N)/rawTook.Seconds(), "raw-runs/s")
	b.ReportMetric(med(idle), "step-us-idle")
	b.ReportMetric(med(purging), "step-us-purge")
	b.ReportMetric(most(purging), "step-us-purge-max")
	b.ReportMetric(med(raw), "step-us-raw")
	b.ReportMetric(most(raw), "step-us-raw-max")
}
