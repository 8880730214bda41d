package resumeotel

import (
	"context"
	"fmt"
	"testing"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/resumegen/resumegen/runtime/resume"
)

func TestEntrySpanContext(t *testing.T) {
	created := time.Date(2026, 11, 30, 13, 0, 0, 123456789, time.UTC)
	a := EntrySpanContext("r-1", created, 1)
	if !a.IsValid() || !a.IsRemote() {
		t.Fatalf("%v: want a valid remote span context", a)
	}
	// The journal keeps microseconds, or less: the ids must not depend on
	// what it dropped.
	if b := EntrySpanContext("r-1", created.Truncate(time.Microsecond).In(time.Local), 1); !b.Equal(a) {
		t.Errorf("the same entry read back from the journal: %v, want %v", b, a)
	}
	seen := map[trace.SpanID]string{a.SpanID(): "r-1 1"}
	for name, sc := range map[string]trace.SpanContext{
		"entry 2":         EntrySpanContext("r-1", created, 2),
		"another run":     EntrySpanContext("r-2", created, 1),
		"another journal": EntrySpanContext("r-1", created.Add(time.Second), 1),
		"id boundary":     EntrySpanContext("r-11", created, 1),
	} {
		if other, ok := seen[sc.SpanID()]; ok {
			t.Errorf("%s has the span id of %s", name, other)
		}
		if sc.TraceID() == a.TraceID() {
			t.Errorf("%s shares entry 1's trace", name)
		}
		seen[sc.SpanID()] = name
	}
}

func TestIDGeneratorRandomOutsideEntries(t *testing.T) {
	var g IDGenerator
	ctx := context.Background()
	t1, s1 := g.NewIDs(ctx)
	t2, s2 := g.NewIDs(ctx)
	if !t1.IsValid() || !s1.IsValid() || t1 == t2 || s1 == s2 {
		t.Errorf("NewIDs: %s/%s then %s/%s, want distinct valid ids", t1, s1, t2, s2)
	}
	want := EntrySpanContext("r-1", time.Unix(0, 0), 3)
	marked := context.WithValue(ctx, idsKey{}, want)
	if tid, sid := g.NewIDs(marked); tid != want.TraceID() || sid != want.SpanID() {
		t.Errorf("NewIDs for an entry: %s/%s, want %s/%s", tid, sid, want.TraceID(), want.SpanID())
	}
	if sid := g.NewSpanID(marked, t1); sid == want.SpanID() {
		t.Error("NewSpanID gave the entry's span id to a span of another trace")
	}
	if sid := g.NewSpanID(ctx, t1); !sid.IsValid() || sid == s1 {
		t.Errorf("NewSpanID: %s", sid)
	}
}

func TestEarlierEntriesAreTheFirstAndTheLast(t *testing.T) {
	created := time.Unix(1_700_000_000, 0)
	for entry, want := range map[int][]int{
		1:  nil,
		2:  {1},
		16: {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15},
		17: {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16},
		40: {1, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39},
	} {
		links := earlierEntries(resume.EntryInfo{RunID: "r-1", Created: created, Entry: entry})
		var got []int
		for _, l := range links {
			for n := 1; n < entry; n++ {
				if l.SpanContext.Equal(EntrySpanContext("r-1", created, n)) {
					got = append(got, n)
				}
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(want) || len(links) != len(want) {
			t.Errorf("entry %d links to entries %v (%d links), want %v", entry, got, len(links), want)
		}
	}
}
