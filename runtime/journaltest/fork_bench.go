package journaltest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/resumegen/resumegen/runtime/journal"
	"github.com/resumegen/resumegen/runtime/resume"
)

// BenchFork measures resume.Engine.Fork of a succeeded run of steps
// default steps from its last step (steps-1 rows copied) beside its raw
// baseline, the same copy in plain SQL (BenchHarness.RawFork: INSERT ...
// SELECT of the run row and its step rows, one transaction), and the
// fork then resumed (the copied rows replayed, the last step executed)
// beside a fresh start of the same run. ns/op is the fork alone. It
// reports fork-us, raw-us, fork/raw, fork+resume-us, fresh-us and
// (fork+resume)/fresh.
func BenchFork(b *testing.B, h BenchHarness, steps int) {
	b.Helper()
	if h.RawFork == nil {
		b.Fatal("BenchFork needs BenchHarness.RawFork")
	}
	ctx := context.Background()
	e := resume.NewEngine(h.Journal)
	benchState.policy, benchState.baseline = resume.PolicyDefault, nil
	id := benchRunID("forked")
	if _, err := e.Start(ctx, id, BenchFlow, steps); err != nil {
		b.Fatal(err)
	}
	last := "Default"
	if steps > 1 {
		last = fmt.Sprintf("Default#%d", steps)
	}
	_, rows, err := h.Journal.LoadRun(ctx, id)
	if err != nil {
		b.Fatal(err)
	}
	var seq int64
	for _, r := range rows {
		if r.StepKey == last {
			seq = r.Seq
		}
	}
	var fork, raw, resumed, fresh time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		to := fmt.Sprintf("%s~fork%d", id, i+1)
		t0 := time.Now()
		if _, err := e.Fork(ctx, id, last, resume.ForkOptions{ID: to}); err != nil {
			b.Fatal(err)
		}
		fork += time.Since(t0)
		b.StopTimer()
		t0 = time.Now()
		res, err := e.Resume(ctx, to)
		if err != nil || res.Status != journal.StatusSucceeded {
			b.Fatalf("resume the fork: %v, %v", res.Status, err)
		}
		resumed += time.Since(t0)
		t0 = time.Now()
		if err := h.RawFork(ctx, id, to+"-raw", seq); err != nil {
			b.Fatal(err)
		}
		raw += time.Since(t0)
		t0 = time.Now()
		if _, err := e.Start(ctx, benchRunID("fresh"), BenchFlow, steps); err != nil {
			b.Fatal(err)
		}
		fresh += time.Since(t0)
		b.StartTimer()
	}
	b.StopTimer()
	n := float64(b.N)
	b.ReportMetric(float64(fork.Microseconds())/n, "fork-us")
	b.ReportMetric(float64(raw.Microseconds())/n, "raw-us")
	b.ReportMetric(float64(fork)/float64(raw), "fork/raw")
	b.ReportMetric(float64((fork+resumed).Microseconds())/n, "fork+resume-us")
	b.ReportMetric(float64(fresh.Microseconds())/n, "fresh-us")
	b.ReportMetric(float64(fork+resumed)/float64(fresh), "(fork+resume)/fresh")
}
