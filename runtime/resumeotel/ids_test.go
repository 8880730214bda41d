package resumeotel

import (
	"context"
	"testing"
	"time"

	"go.opentelemetry.io/otel/trace"
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
