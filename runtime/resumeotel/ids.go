package resumeotel

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"math/rand/v2"
	"strconv"
	"time"

	"go.opentelemetry.io/otel/trace"
)

// IDGenerator makes the ids of spans for the OpenTelemetry SDK's tracer
// provider: sdktrace.WithIDGenerator(resumeotel.IDGenerator{}). Every span
// gets random ids, as with the SDK's default generator, except the span of
// an entry of a top-level run, whose ids are [EntrySpanContext]'s: the
// run's later entries link to it without anything stored.
type IDGenerator struct{}

// idsKey holds, in the context a span of an entry is started with, the
// span context it must have.
type idsKey struct{}

// NewIDs returns the ids of a root span.
func (IDGenerator) NewIDs(ctx context.Context) (trace.TraceID, trace.SpanID) {
	if sc, ok := ctx.Value(idsKey{}).(trace.SpanContext); ok {
		return sc.TraceID(), sc.SpanID()
	}
	var tid trace.TraceID
	for !tid.IsValid() {
		binary.BigEndian.PutUint64(tid[:8], rand.Uint64())
		binary.BigEndian.PutUint64(tid[8:], rand.Uint64())
	}
	return tid, randomSpanID()
}

// NewSpanID returns the id of a span of trace traceID.
func (IDGenerator) NewSpanID(ctx context.Context, traceID trace.TraceID) trace.SpanID {
	if sc, ok := ctx.Value(idsKey{}).(trace.SpanContext); ok && sc.TraceID() == traceID {
		return sc.SpanID()
	}
	return randomSpanID()
}

func randomSpanID() trace.SpanID {
	var sid trace.SpanID
	for !sid.IsValid() {
		binary.BigEndian.PutUint64(sid[:], rand.Uint64())
	}
	return sid
}

// EntrySpanContext returns the span context of the span of entry n (from
// 1) of the top-level run runID created at created, as recorded with
// [IDGenerator]: its trace id and span id are a SHA-256 of the run id, the
// creation time (in whole seconds: a run of the same id in another journal
// gets other ids) and n. An operator's tool finds a run's traces with it.
func EntrySpanContext(runID string, created time.Time, n int) trace.SpanContext {
	h := sha256.New()
	h.Write([]byte("resumegen run entry\x00"))
	h.Write([]byte(runID))
	h.Write([]byte{0})
	h.Write(strconv.AppendInt(nil, created.Unix(), 10))
	h.Write([]byte{0})
	h.Write(strconv.AppendInt(nil, int64(n), 10))
	sum := h.Sum(nil)
	var tid trace.TraceID
	var sid trace.SpanID
	copy(tid[:], sum[:16])
	copy(sid[:], sum[16:24])
	// All zeros is no id (odds of 2^-64 and 2^-128).
	if !tid.IsValid() {
		tid[15] = 1
	}
	if !sid.IsValid() {
		sid[7] = 1
	}
	return trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid, Remote: true})
}
