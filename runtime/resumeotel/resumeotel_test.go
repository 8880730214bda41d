package resumeotel_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/resumegen/resumegen/runtime/resume"
	"github.com/resumegen/resumegen/runtime/resumeotel"
	"github.com/resumegen/resumegen/runtime/resumeotel/internal/tracefixture"
	"github.com/resumegen/resumegen/runtime/sqlitejournal"
)

// The generator satisfies the SDK's interface without the package
// importing the SDK.
var _ sdktrace.IDGenerator = resumeotel.IDGenerator{}

// traced is a journal and what its engines' spans were exported to.
type traced struct {
	t   *testing.T
	j   *sqlitejournal.Journal
	exp *tracetest.InMemoryExporter
	tp  *sdktrace.TracerProvider
}

func newTraced(t *testing.T, opts ...sdktrace.TracerProviderOption) *traced {
	t.Helper()
	j, err := sqlitejournal.Open(context.Background(), filepath.Join(t.TempDir(), "journal.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { j.Close() })
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(append([]sdktrace.TracerProviderOption{sdktrace.WithSyncer(exp)}, opts...)...)
	return &traced{t: t, j: j, exp: exp, tp: tp}
}

// engine returns an engine over the journal, traced.
func (x *traced) engine(opts ...resume.Option) *resume.Engine {
	quiet := resume.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))
	return resume.NewEngine(x.j, append([]resume.Option{quiet, resume.WithTracer(resumeotel.New(x.tp))}, opts...)...)
}

// entryContext is the span context entry n of run runID must have.
func (x *traced) entryContext(runID string, n int) trace.SpanContext {
	x.t.Helper()
	run, _, err := x.j.LoadRun(context.Background(), runID)
	if err != nil {
		x.t.Fatal(err)
	}
	return resumeotel.EntrySpanContext(runID, run.CreatedAt, n)
}

// spans returns the exported spans named name, in the order they ended.
func (x *traced) spans(name string) []tracetest.SpanStub {
	var out []tracetest.SpanStub
	for _, s := range x.exp.GetSpans() {
		if s.Name == name || strings.HasSuffix(s.Name, "/"+name) {
			out = append(out, s)
		}
	}
	return out
}

// one returns the only exported span named name.
func (x *traced) one(name string) tracetest.SpanStub {
	x.t.Helper()
	got := x.spans(name)
	if len(got) != 1 {
		x.t.Fatalf("%d spans named %s, want 1; spans: %s", len(got), name, x.names())
	}
	return got[0]
}

func (x *traced) names() string {
	var names []string
	for _, s := range x.exp.GetSpans() {
		names = append(names, s.Name)
	}
	return strings.Join(names, ", ")
}

func attr(s tracetest.SpanStub, key string) attribute.Value {
	for _, kv := range s.Attributes {
		if string(kv.Key) == key {
			return kv.Value
		}
	}
	return attribute.Value{}
}

// wantAttrs fails t unless span s has each attribute of want (a string,
// an int or a bool).
func wantAttrs(t *testing.T, s tracetest.SpanStub, want map[string]any) {
	t.Helper()
	for k, v := range want {
		got := attr(s, k)
		var ok bool
		switch v := v.(type) {
		case string:
			ok = got.Type() == attribute.STRING && got.AsString() == v
		case int:
			ok = got.Type() == attribute.INT64 && got.AsInt64() == int64(v)
		case bool:
			ok = got.Type() == attribute.BOOL && got.AsBool() == v
		}
		if !ok {
			t.Errorf("span %s: %s = %v (%s), want %v", s.Name, k, got.Emit(), got.Type(), v)
		}
	}
}

func wantStatus(t *testing.T, s tracetest.SpanStub, code codes.Code) {
	t.Helper()
	if s.Status.Code != code {
		t.Errorf("span %s: status %v %q, want %v", s.Name, s.Status.Code, s.Status.Description, code)
	}
	recorded := false
	for _, ev := range s.Events {
		recorded = recorded || ev.Name == "exception"
	}
	if recorded != (code == codes.Error) {
		t.Errorf("span %s: error recorded %v, want %v", s.Name, recorded, code == codes.Error)
	}
}

func wantParent(t *testing.T, child, parent tracetest.SpanStub) {
	t.Helper()
	if child.Parent.SpanID() != parent.SpanContext.SpanID() || child.SpanContext.TraceID() != parent.SpanContext.TraceID() {
		t.Errorf("span %s: parent %s in trace %s, want %s (%s) in trace %s", child.Name, child.Parent.SpanID(),
			child.SpanContext.TraceID(), parent.SpanContext.SpanID(), parent.Name, parent.SpanContext.TraceID())
	}
}

// links returns the links of s marked kind (resume.link).
func links(s tracetest.SpanStub, kind string) []sdktrace.Link {
	var out []sdktrace.Link
	for _, l := range s.Links {
		for _, kv := range l.Attributes {
			if kv.Key == "resume.link" && kv.Value.AsString() == kind {
				out = append(out, l)
			}
		}
	}
	return out
}

func TestRetriedStepAndChildRun(t *testing.T) {
	x := newTraced(t, sdktrace.WithIDGenerator(resumeotel.IDGenerator{}))
	ctx, caller := x.tp.Tracer("test").Start(context.Background(), "request")
	res, err := x.engine().Start(ctx, "o-1", tracefixture.Order, "o-1", 1)
	caller.End()
	if err != nil {
		t.Fatal(err)
	}
	var got string
	if err := res.Decode(&got); err != nil || !strings.Contains(got, "attempt 2") {
		t.Fatalf("output %q: the first attempt did not fail", got)
	}

	entry := x.one("tracefixture.Order")
	version := attr(entry, "resume.version").AsString()
	if version == "" {
		t.Fatal("entry span without resume.version")
	}
	wantAttrs(t, entry, map[string]any{
		"resume.run_id": "o-1", "resume.entry": 1, "resume.journaled_steps": 0, "resume.outcome": "succeeded",
	})
	wantStatus(t, entry, codes.Ok)
	if entry.Parent.IsValid() {
		t.Errorf("entry span has parent %s: a top-level run's entry is a root", entry.Parent.SpanID())
	}
	if want := x.entryContext("o-1", 1); entry.SpanContext.TraceID() != want.TraceID() || entry.SpanContext.SpanID() != want.SpanID() {
		t.Errorf("entry span %s/%s, want the derived %s/%s", entry.SpanContext.TraceID(), entry.SpanContext.SpanID(), want.TraceID(), want.SpanID())
	}
	if l := links(entry, "caller"); len(l) != 1 || l[0].SpanContext.SpanID() != caller.SpanContext().SpanID() {
		t.Errorf("entry links to the caller: %v, want the request span %s", l, caller.SpanContext().SpanID())
	}
	if l := links(entry, "earlier_entry"); len(l) != 0 {
		t.Errorf("first entry links to %d earlier entries", len(l))
	}

	reserve := x.spans("step Reserve")
	if len(reserve) != 2 {
		t.Fatalf("%d attempts of Reserve traced, want 2: %s", len(reserve), x.names())
	}
	common := map[string]any{"resume.run_id": "o-1", "resume.version": version, "resume.step_key": "Reserve", "resume.policy": "default"}
	wantAttrs(t, reserve[0], common)
	wantAttrs(t, reserve[0], map[string]any{"resume.attempt": 1, "resume.outcome": "failed", "resume.final": false})
	wantStatus(t, reserve[0], codes.Error)
	wantAttrs(t, reserve[1], common)
	wantAttrs(t, reserve[1], map[string]any{"resume.attempt": 2, "resume.outcome": "succeeded"})
	wantStatus(t, reserve[1], codes.Ok)
	charge := x.one("step Charge")
	wantAttrs(t, charge, map[string]any{"resume.policy": "once", "resume.attempt": 1, "resume.outcome": "succeeded"})
	for _, s := range append(reserve, charge) {
		wantParent(t, s, entry)
	}

	// The child run: its entry is a child of the parent's attempt.
	call := x.one("step Notify")
	wantParent(t, call, entry)
	child := x.one("tracefixture.Notify")
	wantParent(t, child, call)
	wantAttrs(t, child, map[string]any{
		"resume.run_id": "o-1/Notify", "resume.parent_run_id": "o-1", "resume.entry": 1, "resume.outcome": "succeeded",
	})
	send := x.one("step Send")
	wantParent(t, send, child)
	wantAttrs(t, send, map[string]any{"resume.run_id": "o-1/Notify", "resume.step_key": "Send", "resume.outcome": "succeeded"})
}

func TestFailedStep(t *testing.T) {
	x := newTraced(t, sdktrace.WithIDGenerator(resumeotel.IDGenerator{}))
	err := resume.NewEngine(x.j).SaveManifests(context.Background()) // an untraced engine traces nothing
	if err != nil {
		t.Fatal(err)
	}
	_, err = x.engine().Start(context.Background(), "f-1", tracefixture.Failing, "f-1")
	if !errors.Is(err, resume.ErrRunFailed) {
		t.Fatalf("Start: %v, want the run failed", err)
	}
	broken := x.spans("step Broken")
	if len(broken) != 2 {
		t.Fatalf("%d attempts of Broken traced, want 2: %s", len(broken), x.names())
	}
	for i, s := range broken {
		wantAttrs(t, s, map[string]any{"resume.attempt": i + 1, "resume.outcome": "failed", "resume.final": i == 1})
		wantStatus(t, s, codes.Error)
		if s.Status.Description != tracefixture.ErrBroken.Error() {
			t.Errorf("attempt %d: status %q, want the step's error", i+1, s.Status.Description)
		}
	}
	entry := x.one("tracefixture.Failing")
	wantAttrs(t, entry, map[string]any{"resume.outcome": "failed", "resume.failed_step": "Broken"})
	wantStatus(t, entry, codes.Error)
}

func TestParkedOnceStep(t *testing.T) {
	x := newTraced(t, sdktrace.WithIDGenerator(resumeotel.IDGenerator{}))
	e := x.engine()
	_, err := e.Start(context.Background(), "p-1", tracefixture.Parking, "p-1")
	if !errors.Is(err, resume.ErrNeedsAttention) {
		t.Fatalf("Start: %v, want the run parked", err)
	}
	explode := x.one("step Explode")
	wantAttrs(t, explode, map[string]any{"resume.policy": "once", "resume.attempt": 1, "resume.outcome": "in_flight"})
	wantStatus(t, explode, codes.Error)
	entry := x.one("tracefixture.Parking")
	wantAttrs(t, entry, map[string]any{
		"resume.outcome": "needs_attention", "resume.attention_step": "Explode", "resume.attention_kind": "step",
	})
	wantStatus(t, entry, codes.Error)

	// A person says redo: the next entry executes the step again (attempt
	// 2), parks again, and links to the first entry.
	x.exp.Reset()
	if err := e.Resolve(context.Background(), "p-1", "Explode", resume.Resolution{}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Resume(context.Background(), "p-1"); !errors.Is(err, resume.ErrNeedsAttention) {
		t.Fatalf("Resume: %v, want the run parked", err)
	}
	wantAttrs(t, x.one("step Explode"), map[string]any{"resume.attempt": 2, "resume.outcome": "in_flight"})
	second := x.one("tracefixture.Parking")
	wantAttrs(t, second, map[string]any{"resume.entry": 2, "resume.journaled_steps": 1, "resume.outcome": "needs_attention"})
	earlier := links(second, "earlier_entry")
	if len(earlier) != 1 || earlier[0].SpanContext.SpanID() != entry.SpanContext.SpanID() || earlier[0].SpanContext.TraceID() != entry.SpanContext.TraceID() {
		t.Errorf("second entry links %v, want the first entry's span %s", earlier, entry.SpanContext.SpanID())
	}
}

func TestWaitingRun(t *testing.T) {
	x := newTraced(t, sdktrace.WithIDGenerator(resumeotel.IDGenerator{}))
	_, err := x.engine().Start(context.Background(), "n-1", tracefixture.Napping, "n-1")
	if !errors.Is(err, resume.ErrRunWaiting) {
		t.Fatalf("Start: %v, want the run waiting", err)
	}
	entry := x.one("tracefixture.Napping")
	wantAttrs(t, entry, map[string]any{"resume.outcome": "waiting", "resume.wait_kind": "sleep"})
	if attr(entry, "resume.wake_at").AsString() == "" {
		t.Error("a sleeping run's entry has no resume.wake_at")
	}
	wantStatus(t, entry, codes.Unset)
}

// crash is the panic standing for the death of the first process.
type crash struct{}

// TestCrashedRunLinksToEarlierProcess kills the first process (in process:
// a fault whose action panics, unrecovered) after a step's row committed,
// and resumes the run in a second engine: the second entry's span links to
// the first's, whose ended attempts were exported under that span id.
func TestCrashedRunLinksToEarlierProcess(t *testing.T) {
	x := newTraced(t, sdktrace.WithIDGenerator(resumeotel.IDGenerator{}))
	first := x.engine(resume.WithOwner("first"),
		resume.WithFault(resume.Fault{Step: "Reserve", Point: resume.FaultAfter}),
		resume.WithFaultAction(func() { panic(crash{}) }),
		resume.WithCrashPanics(func(v any) bool { _, ok := v.(crash); return ok }))
	func() {
		defer func() {
			if v := recover(); v != (crash{}) {
				t.Fatalf("recovered %v, want the simulated crash", v)
			}
		}()
		first.Start(context.Background(), "c-1", tracefixture.Order, "c-1", 1)
	}()
	// The process is gone: its entry never ended; the attempts that did
	// were exported.
	if n := len(x.spans("tracefixture.Order")); n != 0 {
		t.Fatalf("the crashed entry's span was exported (%d): a dead process ends nothing", n)
	}
	dead := x.spans("step Reserve")
	if len(dead) != 1 {
		t.Fatalf("%d attempts of the crashed process exported, want Reserve's failed first: %s", len(dead), x.names())
	}
	if err := x.j.Release(context.Background(), "first"); err != nil {
		t.Fatal(err)
	}

	second := x.engine(resume.WithOwner("second"))
	if _, err := second.Resume(context.Background(), "c-1"); err != nil {
		t.Fatal(err)
	}
	entry := x.one("tracefixture.Order")
	wantAttrs(t, entry, map[string]any{"resume.entry": 2, "resume.journaled_steps": 1, "resume.outcome": "succeeded"})
	want1, want2 := x.entryContext("c-1", 1), x.entryContext("c-1", 2)
	if entry.SpanContext.SpanID() != want2.SpanID() || entry.SpanContext.TraceID() != want2.TraceID() {
		t.Errorf("second entry's span %s, want the derived %s", entry.SpanContext.SpanID(), want2.SpanID())
	}
	earlier := links(entry, "earlier_entry")
	if len(earlier) != 1 || earlier[0].SpanContext.TraceID() != want1.TraceID() || earlier[0].SpanContext.SpanID() != want1.SpanID() {
		t.Fatalf("second entry links %v, want entry 1's span %s", earlier, want1.SpanID())
	}
	// The link leads to what the dead process exported.
	if dead[0].Parent.SpanID() != want1.SpanID() || dead[0].SpanContext.TraceID() != want1.TraceID() {
		t.Errorf("the crashed process's attempt is under %s in trace %s; the link leads to %s in trace %s",
			dead[0].Parent.SpanID(), dead[0].SpanContext.TraceID(), want1.SpanID(), want1.TraceID())
	}
	if entry.SpanContext.TraceID() == want1.TraceID() {
		t.Error("both entries share a trace: each entry is the root of its own")
	}
	// The second process executed only what the first had not journaled.
	if n := len(x.spans("step Reserve")); n != 1 {
		t.Errorf("Reserve traced %d times in all, want only the crashed process's: the resume replays it", n)
	}
	charge := x.one("step Charge")
	wantParent(t, charge, entry)
}

// TestWithoutIDGenerator: spans still nest and carry their attributes, but
// an entry's ids are random, so no link to earlier entries is made (it
// would lead nowhere).
func TestWithoutIDGenerator(t *testing.T) {
	x := newTraced(t)
	e := x.engine()
	if _, err := e.Start(context.Background(), "w-1", tracefixture.Parking, "w-1"); !errors.Is(err, resume.ErrNeedsAttention) {
		t.Fatal(err)
	}
	if err := e.Resolve(context.Background(), "w-1", "Explode", resume.Resolution{}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Resume(context.Background(), "w-1"); !errors.Is(err, resume.ErrNeedsAttention) {
		t.Fatal(err)
	}
	entries := x.spans("tracefixture.Parking")
	if len(entries) != 2 {
		t.Fatalf("%d entries traced, want 2", len(entries))
	}
	if entries[0].SpanContext.SpanID() == x.entryContext("w-1", 1).SpanID() {
		t.Error("the first entry got the derived id without the generator")
	}
	if l := links(entries[1], "earlier_entry"); len(l) != 0 {
		t.Errorf("second entry links %v without the generator", l)
	}
	explode := x.spans("step Explode")
	if len(explode) != 2 {
		t.Fatalf("%d attempts of Explode traced, want 2", len(explode))
	}
	wantParent(t, explode[0], entries[0])
	wantParent(t, explode[1], entries[1])
}

// BenchmarkAttemptSpan measures what tracing adds to a step attempt: the
// span of the attempt, recorded by the SDK and handed to an exporter that
// drops it.
func BenchmarkAttemptSpan(b *testing.B) {
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(tracetest.NewNoopExporter()), sdktrace.WithIDGenerator(resumeotel.IDGenerator{}))
	tr := resumeotel.New(tp)
	ctx, endEntry := tr.Entry(context.Background(), resume.EntryInfo{RunID: "b-1", Workflow: "example.com/shop.Checkout", Version: "v1", Entry: 1})
	defer endEntry(resume.EntryEnd{})
	info := resume.StepInfo{RunID: "b-1", Workflow: "example.com/shop.Checkout", StepKey: "Charge", Name: "Charge", Attempt: 1}
	b.ReportAllocs()
	for b.Loop() {
		_, end := tr.Attempt(ctx, info)
		end(resume.AttemptEnd{Outcome: "succeeded"})
	}
}
