package journaltest

import (
	"context"
	"testing"
	"time"

	"github.com/resumegen/resumegen/runtime/resume"
)

// BenchKeyedStart measures a keyed start (issue 22 §2) against a plain
// Enqueue and a raw single-row INSERT, alternating op by op so that noise
// hits all three alike. mode is "singleton" (each op a new key: a
// creation) or "debounce" (each op the same key: after the first, a
// replacement of the unstarted run's input). It reports each one's
// ns/op and the ratios keyed/enqueue and keyed/raw.
func BenchKeyedStart(b *testing.B, h BenchHarness, mode string) {
	b.Helper()
	ctx := context.Background()
	e := resume.NewEngine(h.Journal)
	if _, err := e.Enqueue(ctx, benchRunID("warm"), BenchFlow, 0); err != nil { // the manifest
		b.Fatal(err)
	}
	key := benchRunID("debounced")
	var keyed, enqueue, raw time.Duration
	b.ResetTimer()
	for i := range b.N {
		t0 := time.Now()
		var err error
		if mode == "singleton" {
			_, _, err = e.Singleton(ctx, benchRunID("single"), BenchFlow, i)
		} else {
			_, _, err = e.Debounce(ctx, key, time.Hour, BenchFlow, i)
		}
		t1 := time.Now()
		if err != nil {
			b.Fatal(err)
		}
		if _, err := e.Enqueue(ctx, benchRunID("plain"), BenchFlow, i); err != nil {
			b.Fatal(err)
		}
		t2 := time.Now()
		if err := h.RawInsert(ctx); err != nil {
			b.Fatal(err)
		}
		keyed, enqueue, raw = keyed+t1.Sub(t0), enqueue+t2.Sub(t1), raw+time.Since(t2)
	}
	b.StopTimer()
	n := float64(b.N)
	b.ReportMetric(float64(keyed.Nanoseconds())/n, "keyed-ns/op")
	b.ReportMetric(float64(enqueue.Nanoseconds())/n, "enqueue-ns/op")
	b.ReportMetric(float64(raw.Nanoseconds())/n, "raw-ns/op")
	b.ReportMetric(float64(keyed)/float64(enqueue), "keyed/enqueue")
	b.ReportMetric(float64(keyed)/float64(raw), "keyed/raw")
}
