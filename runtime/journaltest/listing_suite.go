package journaltest

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/resumegen/resumegen/runtime/journal"
)

// runListing checks the run listing a UI pages through: filters by time
// and id, newest or oldest first, keyset pages that together list every
// run once in order (ties on created_at broken by id), and counts per
// status.
func runListing(t *testing.T, h Harness) {
	ctx := context.Background()
	j := h.open(t)
	wf := fmt.Sprintf("example.com/listing.W%d", time.Now().UnixNano())
	base := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	var all []string
	for i := range 23 {
		id := fmt.Sprintf("r%02d", i)
		if i%5 == 0 {
			id = fmt.Sprintf("r%02d_%%x", i) // % and _ are no wildcards
		}
		id = wf + "/" + id
		at := base.Add(time.Duration(i/2) * time.Second) // pairs share a created_at
		if _, _, err := j.CreateRun(ctx, journal.RunRecord{RunID: id, Workflow: wf, Version: "v1", Input: []byte("[]"), CreatedAt: at, UpdatedAt: at}); err != nil {
			t.Fatal(err)
		}
		if i%3 == 0 {
			if err := j.Cancel(ctx, id, journal.CancelOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		all = append(all, id)
	}
	t.Run("keyset pages list every run once, in order", func(t *testing.T) {
		for _, newest := range []bool{false, true} {
			want := slices.Clone(all)
			if newest {
				slices.Reverse(want)
			}
			if got := pageAll(t, j, journal.RunFilter{Workflow: wf, Newest: newest, Limit: 4}); !slices.Equal(got, want) {
				t.Errorf("newest=%v: pages list\n%v\nwant\n%v", newest, got, want)
			}
		}
		cancelled := pageAll(t, j, journal.RunFilter{Workflow: wf, Newest: true, Limit: 3, Statuses: []journal.Status{journal.StatusCancelled}})
		if len(cancelled) != 8 || cancelled[0] != all[21] {
			t.Errorf("cancelled, newest first = %v; want the 8 runs r21, r18, ...", cancelled)
		}
	})
	t.Run("time range and id search", func(t *testing.T) {
		got := pageAll(t, j, journal.RunFilter{Workflow: wf, CreatedAfter: base.Add(2 * time.Second), CreatedBefore: base.Add(4 * time.Second)})
		if want := all[4:8]; !slices.Equal(got, want) {
			t.Errorf("created in [base+2s, base+4s) = %v; want %v", got, want)
		}
		got = pageAll(t, j, journal.RunFilter{Workflow: wf, IDContains: "_%x"})
		if want := []string{all[0], all[5], all[10], all[15], all[20]}; !slices.Equal(got, want) {
			t.Errorf("ids containing _%%x = %v; want %v", got, want)
		}
		if got := pageAll(t, j, journal.RunFilter{Workflow: wf, IDContains: "R0"}); len(got) != 0 {
			t.Errorf("ids containing R0 = %v; want none: the search is case-sensitive", got)
		}
	})
	t.Run("counts per status ignore the status filter and the cursor", func(t *testing.T) {
		f := journal.RunFilter{Workflow: wf, Statuses: []journal.Status{journal.StatusPending}, After: &journal.RunCursor{CreatedAt: base.Add(time.Hour)}, Limit: 1}
		n, err := j.CountRuns(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		want := map[journal.Status]int{journal.StatusCancelled: 8, journal.StatusPending: 15}
		if !maps(n, want) {
			t.Errorf("CountRuns = %v; want %v", n, want)
		}
		n, err = j.CountRuns(ctx, journal.RunFilter{Workflow: wf, IDContains: "_%x"})
		if want := map[journal.Status]int{journal.StatusCancelled: 2, journal.StatusPending: 3}; err != nil || !maps(n, want) {
			t.Errorf("CountRuns(ids containing _%%x) = %v, %v; want %v", n, err, want)
		}
	})
}

// pageAll lists f page by page (f.Limit a page), following each page's
// last run as the cursor, and returns the ids in the order listed.
func pageAll(t *testing.T, j journal.Journal, f journal.RunFilter) []string {
	t.Helper()
	var ids []string
	for range 100 {
		page, err := j.ListRuns(context.Background(), f)
		if err != nil {
			t.Fatalf("ListRuns(%+v): %v", f, err)
		}
		for _, r := range page {
			ids = append(ids, r.RunID)
		}
		if f.Limit == 0 || len(page) < f.Limit {
			return ids
		}
		f.After = page[len(page)-1].Cursor()
	}
	t.Fatalf("ListRuns(%+v): more than 100 pages", f)
	return nil
}

func maps(a, b map[journal.Status]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}
