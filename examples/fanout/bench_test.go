package main

import (
	"context"
	"fmt"
	"path/filepath"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/resumegen/resumegen/internal/pgtest"
	"github.com/resumegen/resumegen/runtime/journal"
	"github.com/resumegen/resumegen/runtime/pgjournal"
	"github.com/resumegen/resumegen/runtime/resume"
	"github.com/resumegen/resumegen/runtime/sqlitejournal"
)

// BenchmarkFanOut measures the wall time of scoring N=100 items whose
// Weigh takes 10 ms or 50 ms (a slow service), each item a child workflow of two
// steps: fanned out with resume.Map to 4 workers (map-4), called one after
// another inside the parent (inline), and, as the floor no journal can
// beat, the same work in plain Go on 4 goroutines (plain-4).
func BenchmarkFanOut(b *testing.B) {
	for _, work := range []time.Duration{10 * time.Millisecond, 50 * time.Millisecond} {
		b.Run(fmt.Sprintf("work=%s", work), func(b *testing.B) { benchFanOut(b, work) })
	}
}

func benchFanOut(b *testing.B, work time.Duration) {
	const n = 100
	for _, jn := range []string{"sqlite", "postgres"} {
		open := func(b *testing.B) journal.Journal {
			ctx := context.Background()
			if jn == "sqlite" {
				j, err := sqlitejournal.Open(ctx, filepath.Join(b.TempDir(), "bench.db"))
				if err != nil {
					b.Fatal(err)
				}
				b.Cleanup(func() { j.Close() })
				return j
			}
			j, err := pgjournal.Connect(ctx, pgtest.FreshDatabase(b))
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { j.Close() })
			return j
		}
		for _, tc := range []struct {
			name string
			wf   any
		}{{"map-4", Scores}, {"inline", ScoresInline}} {
			b.Run(jn+"/"+tc.name, func(b *testing.B) {
				ctx := context.Background()
				e := resume.NewEngine(open(b))
				wctx, stop := context.WithCancel(ctx)
				done := make(chan error, 1)
				go func() { done <- e.Work(wctx, resume.WorkerOptions{Concurrency: 4, PollInterval: 5 * time.Millisecond}) }()
				defer func() { stop(); <-done }()
				var want Summary
				for i := 0; b.Loop(); i++ {
					id := fmt.Sprintf("bench-%s-%d", tc.name, i)
					if _, err := e.Enqueue(ctx, id, tc.wf, Batch{ID: id, N: n, Work: work}); err != nil {
						b.Fatal(err)
					}
					res, err := e.Wait(ctx, id)
					if err != nil {
						b.Fatal(err)
					}
					var got Summary
					if err := res.Decode(&got); err != nil || len(got.Scores) != n {
						b.Fatalf("run %s: %+v, %v", id, got, err)
					}
					if i > 0 && !reflect.DeepEqual(got, want) {
						b.Fatalf("run %s returned %+v, the first %+v", id, got, want)
					}
					want = got
				}
			})
		}
	}
	b.Run("plain-4", func(b *testing.B) {
		ctx := context.Background()
		for b.Loop() {
			items, _ := ListItems(ctx, Batch{N: n})
			sem := make(chan struct{}, 4)
			var wg sync.WaitGroup
			for _, it := range items {
				sem <- struct{}{}
				wg.Go(func() {
					defer func() { <-sem }()
					v, _ := Fetch(ctx, it)
					Weigh(ctx, it, v, work)
				})
			}
			wg.Wait()
		}
	})
}
