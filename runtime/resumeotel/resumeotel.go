// Package resumeotel records the runs of a [resume.Engine] as OpenTelemetry
// spans: one per entry of a run into a process, and one per attempt of a
// step's code, inside it.
//
//	tp := sdktrace.NewTracerProvider(
//		sdktrace.WithBatcher(exporter),
//		sdktrace.WithIDGenerator(resumeotel.IDGenerator{}),
//	)
//	e := resume.NewEngine(j, resume.WithTracer(resumeotel.New(tp)))
//
// # Spans
//
// An entry's span ("run " and the workflow) carries resume.run_id,
// resume.workflow, resume.version, resume.entry (1 for the run's first
// entry, counted across processes by the journal) and
// resume.journaled_steps (the steps the body replays); as it ends,
// resume.outcome (the run's status: succeeded, failed, needs_attention,
// waiting, ...) and, when they apply, resume.attention_step,
// resume.attention_kind, resume.failed_step, resume.wait_kind,
// resume.wait_name and resume.wake_at. Its status is Ok for a run that
// succeeded, Error (with the error recorded) for one that failed or needs a
// person, unset otherwise. A replayed step executes nothing and has no
// span.
//
// An attempt's span ("step " and the step's name) is a child of its entry's
// and carries resume.run_id, resume.workflow, resume.version,
// resume.step_key, resume.attempt (counted across processes),
// resume.policy and, as it ends, resume.outcome: succeeded, failed
// (resume.final says whether the body receives the failure or another
// attempt follows), in_flight (a once step whose outcome is unknown: the
// run parks), waiting or stopped (see [resume.AttemptEnd]). A child run's
// entry is a child of its parent's attempt, with resume.parent_run_id.
//
// # Links between the processes of a run
//
// A run outlives the call that started it, and its entries happen in
// several processes, over days. So each entry of a top-level run is the
// root of a trace of its own, linked to the span of the call that started
// it (if the context held one), and to the spans of the run's earlier
// entries: the first and the last 15. Nothing is stored to find them: the
// trace and span ids of an entry's span derive from the run (its id and
// creation time) and the entry's number ([EntrySpanContext]), so a later
// process computes the earlier ones. That needs [IDGenerator] on the
// tracer provider; without it, spans get the SDK's random ids and no
// links to earlier entries. An entry cut short by a process's death never
// ends, so its own span is never exported; its attempts that ended before
// the death were, under that entry's span id, and the link from the next
// entry leads to them.
package resumeotel

import (
	"context"
	"errors"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/resumegen/resumegen/runtime/resume"
)

// ScopeName is the instrumentation scope of the spans this package records.
const ScopeName = "github.com/resumegen/resumegen/runtime/resumeotel"

// maxLinks bounds the links of an entry's span to earlier entries: the
// first entry and the most recent ones.
const maxLinks = 16

// New returns a [resume.Tracer] that records spans through tp (see the
// package documentation).
func New(tp trace.TracerProvider) resume.Tracer {
	return &tracer{t: tp.Tracer(ScopeName)}
}

type tracer struct{ t trace.Tracer }

// Entry starts the span of an entry of a run.
func (t *tracer) Entry(ctx context.Context, in resume.EntryInfo) (context.Context, func(resume.EntryEnd)) {
	attrs := []attribute.KeyValue{
		attribute.String("resume.run_id", in.RunID),
		attribute.String("resume.workflow", in.Workflow),
		attribute.String("resume.version", in.Version),
		attribute.Int("resume.entry", in.Entry),
		attribute.Int("resume.journaled_steps", in.Journaled),
	}
	opts := []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindInternal)}
	start := ctx
	var want trace.SpanContext
	if in.Parent != "" {
		attrs = append(attrs, attribute.String("resume.parent_run_id", in.Parent))
	} else {
		// A top-level run's entry: the root of a trace of its own, with
		// ids the run's later entries can compute.
		opts = append(opts, trace.WithNewRoot())
		if caller := trace.SpanContextFromContext(ctx); caller.IsValid() {
			opts = append(opts, trace.WithLinks(trace.Link{
				SpanContext: caller, Attributes: []attribute.KeyValue{attribute.String("resume.link", "caller")},
			}))
		}
		want = EntrySpanContext(in.RunID, in.Created, in.Entry)
		start = context.WithValue(ctx, idsKey{}, want)
	}
	opts = append(opts, trace.WithAttributes(attrs...))
	_, span := t.t.Start(start, "run "+in.Workflow, opts...)
	if sc := span.SpanContext(); want.IsValid() && sc.TraceID() == want.TraceID() && sc.SpanID() == want.SpanID() {
		for _, l := range earlierEntries(in) {
			span.AddLink(l)
		}
	}
	// The body's context: the span, without the ids marker (its spans get
	// ids of their own).
	return trace.ContextWithSpan(ctx, span), func(end resume.EntryEnd) { endEntry(span, end) }
}

// earlierEntries returns the links to the spans of the entries of the run
// before in: the first, and the most recent ones up to maxLinks.
func earlierEntries(in resume.EntryInfo) []trace.Link {
	var links []trace.Link
	for n := 1; n < in.Entry; n++ {
		if n > 1 && n < in.Entry-(maxLinks-1) {
			n = in.Entry - (maxLinks - 1)
		}
		links = append(links, trace.Link{
			SpanContext: EntrySpanContext(in.RunID, in.Created, n),
			Attributes:  []attribute.KeyValue{attribute.String("resume.link", "earlier_entry"), attribute.Int("resume.entry", n)},
		})
	}
	return links
}

// endEntry records how an entry ended on its span and ends it.
func endEntry(span trace.Span, end resume.EntryEnd) {
	r := end.Result
	if r.Status != "" {
		span.SetAttributes(attribute.String("resume.outcome", string(r.Status)))
	}
	// The version the entry continued the run on, if it moved it.
	setIf(span, "resume.version", r.Version)
	setIf(span, "resume.attention_step", r.AttentionStep)
	setIf(span, "resume.attention_kind", r.AttentionKind)
	setIf(span, "resume.failed_step", r.FailedStep)
	setIf(span, "resume.wait_kind", r.WaitKind)
	setIf(span, "resume.wait_name", r.WaitName)
	if !r.WakeAt.IsZero() {
		setIf(span, "resume.wake_at", r.WakeAt.UTC().Format(time.RFC3339Nano))
	}
	switch {
	case r.Status == resume.StatusSucceeded && end.Err == nil:
		span.SetStatus(codes.Ok, "")
	case r.Status == resume.StatusWaiting || r.Status == resume.StatusCancelled:
	case r.Status == resume.StatusPending && end.Err != nil:
		// Given back, resumable (a worker shutting down, a journal write
		// that failed): say why, without calling the run failed.
		span.RecordError(end.Err)
	case end.Err != nil:
		span.RecordError(end.Err)
		span.SetStatus(codes.Error, end.Err.Error())
	}
	span.End()
}

func setIf(span trace.Span, key, value string) {
	if value != "" {
		span.SetAttributes(attribute.String(key, value))
	}
}

// Attempt starts the span of an attempt of a step.
func (t *tracer) Attempt(ctx context.Context, s resume.StepInfo) (context.Context, func(resume.AttemptEnd)) {
	ctx, span := t.t.Start(ctx, "step "+s.Name, trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(
		attribute.String("resume.run_id", s.RunID),
		attribute.String("resume.workflow", s.Workflow),
		attribute.String("resume.version", s.Version),
		attribute.String("resume.step_key", s.StepKey),
		attribute.Int("resume.attempt", s.Attempt),
		attribute.String("resume.policy", s.Policy.String()),
	))
	return ctx, func(end resume.AttemptEnd) { endAttempt(span, end) }
}

// endAttempt records how an attempt ended on its span and ends it.
func endAttempt(span trace.Span, end resume.AttemptEnd) {
	span.SetAttributes(attribute.String("resume.outcome", end.Outcome))
	if end.Outcome == "failed" {
		span.SetAttributes(attribute.Bool("resume.final", end.Final))
	}
	switch {
	case end.Err == nil:
		span.SetStatus(codes.Ok, "")
	case end.Outcome == "waiting" || errors.Is(end.Err, resume.ErrRunWaiting):
	default:
		span.RecordError(end.Err)
		span.SetStatus(codes.Error, end.Err.Error())
	}
	span.End()
}
