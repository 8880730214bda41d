package journaltest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/resumegen/resumegen/runtime/journal"
)

// ListingRuns is how many runs BenchListRuns lists: a journal a UI must
// stay fast on.
const ListingRuns = 100_000

// ListingBase is the creation time of the first seeded run; run i (from
// 0) is created i seconds later, has id fmt.Sprintf("run-%06d", i), two
// step rows (A, B), workflow ListingWorkflow(i) and status
// ListingStatus(i).
var ListingBase = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// ListingWorkflow is seeded run i's workflow: one of four.
func ListingWorkflow(i int) string { return fmt.Sprintf("example.com/bench.W%d", i%4) }

// ListingStatus is seeded run i's status: 1 in 100 needs attention, 4 in
// 100 failed, 3 pending, 1 cancelled, the rest succeeded.
func ListingStatus(i int) journal.Status {
	switch i % 100 {
	case 0:
		return journal.StatusNeedsAttention
	case 1, 2, 3, 4:
		return journal.StatusFailed
	case 5, 6, 7:
		return journal.StatusPending
	case 8:
		return journal.StatusCancelled
	}
	return journal.StatusSucceeded
}

// BenchListRuns measures what the UI's runs list asks of j, whose
// database seed filled with ListingRuns runs as described at
// ListingBase: a page of 50 newest first, the same page deep in the list
// (by keyset), filtered by status, by workflow and by an id search, and
// the counts per status.
func BenchListRuns(b *testing.B, j journal.Journal, seed func(ctx context.Context) error) {
	ctx := context.Background()
	start := time.Now()
	if err := seed(ctx); err != nil {
		b.Fatalf("seed %d runs: %v", ListingRuns, err)
	}
	b.Logf("seeded %d runs in %v", ListingRuns, time.Since(start).Round(time.Millisecond))
	deep := &journal.RunCursor{CreatedAt: ListingBase.Add(ListingRuns / 2 * time.Second), RunID: fmt.Sprintf("run-%06d", ListingRuns/2)}
	for _, c := range []struct {
		name string
		f    journal.RunFilter
		want int
	}{
		{"first page", journal.RunFilter{Newest: true, Limit: 50}, 50},
		{"page at the middle", journal.RunFilter{Newest: true, Limit: 50, After: deep}, 50},
		{"needs_attention", journal.RunFilter{Newest: true, Limit: 50, Statuses: []journal.Status{journal.StatusNeedsAttention}}, 50},
		{"needs_attention at the middle", journal.RunFilter{Newest: true, Limit: 50, After: deep, Statuses: []journal.Status{journal.StatusNeedsAttention}}, 50},
		{"workflow", journal.RunFilter{Newest: true, Limit: 50, Workflow: ListingWorkflow(1)}, 50},
		{"id search, 1 match", journal.RunFilter{Newest: true, Limit: 50, IDContains: "run-012345"}, 1},
		{"time range", journal.RunFilter{Newest: true, Limit: 50, CreatedAfter: ListingBase.Add(time.Hour), CreatedBefore: ListingBase.Add(2 * time.Hour)}, 50},
	} {
		b.Run("list/"+c.name, func(b *testing.B) {
			for b.Loop() {
				runs, err := j.ListRuns(ctx, c.f)
				if err != nil || len(runs) != c.want {
					b.Fatalf("ListRuns(%+v) = %d runs, %v; want %d", c.f, len(runs), err, c.want)
				}
			}
		})
	}
	for _, c := range []struct {
		name string
		f    journal.RunFilter
		want int
	}{{"all", journal.RunFilter{}, ListingRuns}, {"workflow", journal.RunFilter{Workflow: ListingWorkflow(1)}, ListingRuns / 4}} {
		b.Run("count/"+c.name, func(b *testing.B) {
			for b.Loop() {
				n, err := j.CountRuns(ctx, c.f)
				total := 0
				for _, k := range n {
					total += k
				}
				if err != nil || total != c.want {
					b.Fatalf("CountRuns(%+v) = %v, %v; want %d runs in all", c.f, n, err, c.want)
				}
			}
		})
	}
}
