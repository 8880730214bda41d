package resume

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/resumegen/resumegen/runtime/journal"
	"github.com/resumegen/resumegen/runtime/sqlitejournal"
)

// stepJournal takes step rows, or refuses them with fail.
type stepJournal struct {
	journal.Journal
	fail error
}

func (j *stepJournal) WriteStep(context.Context, journal.Lease, journal.StepRecord) error {
	return j.fail
}

// recordingTracer writes down what the engine tells a tracer.
type recordingTracer struct{ events []string }

type tracerMark struct{}

func (r *recordingTracer) Entry(ctx context.Context, in EntryInfo) (context.Context, func(EntryEnd)) {
	r.events = append(r.events, fmt.Sprintf("entry %s %d %s", in.RunID, in.Entry, in.Version))
	return ctx, func(end EntryEnd) {
		r.events = append(r.events, fmt.Sprintf("end entry %s %s", end.Result.Status, end.Result.Version))
	}
}

func (r *recordingTracer) Attempt(ctx context.Context, s StepInfo) (context.Context, func(AttemptEnd)) {
	r.events = append(r.events, fmt.Sprintf("attempt %s %d %s %s", s.StepKey, s.Attempt, s.Policy, s.Version))
	return context.WithValue(ctx, tracerMark{}, s.StepKey), func(end AttemptEnd) {
		r.events = append(r.events, fmt.Sprintf("end %s %s final=%v err=%v", s.StepKey, end.Outcome, end.Final, end.Err != nil))
	}
}

// stepState returns a run's state over a journal that takes step rows (or
// refuses them with fail), with tracer t (none if nil).
func stepState(fail error, t Tracer) *runState {
	opts := []Option{WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))}
	if t != nil {
		opts = append(opts, WithTracer(t))
	}
	e := NewEngine(&stepJournal{fail: fail}, opts...)
	e.writeTimeout = time.Second
	st := newRunState(e, &WorkflowDef{}, journal.RunRecord{RunID: "r-1", Workflow: "w"}, nil)
	st.leaseUntil = time.Now().Add(time.Hour)
	return st
}

// TestTracerSeesAttempts: each attempt is observed with its outcome, and
// the step's code runs in the context the tracer returned.
func TestTracerSeesAttempts(t *testing.T) {
	boom := errors.New("boom")
	for _, tc := range []struct {
		name  string
		def   StepDef
		fail  error // of the journal's writes
		body  func(context.Context) (json.RawMessage, error)
		wantN int // attempts
		want  string
	}{
		{name: "succeeded", def: StepDef{Name: "S"}, body: ok, want: "end S succeeded final=false err=false"},
		{name: "retried", def: StepDef{Name: "S", Attempts: 2}, body: failing(boom), wantN: 2,
			want: "end S failed final=false err=true|end S failed final=true err=true"},
		{name: "once panicked", def: StepDef{Name: "S", Policy: PolicyOnce},
			body: func(context.Context) (json.RawMessage, error) { panic("lost") }, want: "end S in_flight final=false err=true"},
		{name: "journal refused", def: StepDef{Name: "S"}, fail: Permanent(errors.New("disk gone")), body: ok,
			want: "end S stopped final=false err=true"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &recordingTracer{}
			st := stepState(tc.fail, r)
			var sawCtx bool
			body := func(ctx context.Context) (json.RawMessage, error) {
				sawCtx = ctx.Value(tracerMark{}) == "S"
				return tc.body(ctx)
			}
			st.step(context.Background(), &tc.def, stepKey{}, body, nil)
			var ends []string
			attempts := 0
			for _, ev := range r.events {
				if strings.HasPrefix(ev, "end entry") {
					continue
				}
				if strings.HasPrefix(ev, "end ") {
					ends = append(ends, ev)
				} else {
					attempts++
				}
			}
			if got := strings.Join(ends, "|"); got != tc.want {
				t.Errorf("attempts ended %q, want %q (events %q)", got, tc.want, r.events)
			}
			if want := max(tc.wantN, 1); attempts != want {
				t.Errorf("%d attempts began, want %d", attempts, want)
			}
			if !sawCtx {
				t.Error("the step's code did not run in the tracer's context")
			}
		})
	}
}

// TestTracerSeesTheVersionARunContinuesOn: a run killed on V1 and resumed
// by a program that has V2 begins its entry on V1, is moved, and its steps
// are attempted on V2.
func TestTracerSeesTheVersionARunContinuesOn(t *testing.T) {
	j, err := sqlitejournal.Open(context.Background(), filepath.Join(t.TempDir(), "journal.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { j.Close() })
	id := "traced-" + t.Name()
	useRegistry(t, prog(orderV1, orderDef("V1", orderV1, stepsV1)))
	startKilled(t, j, id, orderV1, 7, "C")
	useRegistry(t, prog(orderV2, orderDef("V2", orderV2, stepsV2)))
	r := &recordingTracer{}
	if _, err := NewEngine(j, WithOwner("v2"), WithTracer(r)).Resume(context.Background(), id); err != nil {
		t.Fatal(err)
	}
	want := []string{"entry " + id + " 2 V1", "attempt D 1 default V2", "end D succeeded final=false err=false", "end entry succeeded V2"}
	if strings.Join(r.events, "|") != strings.Join(want, "|") {
		t.Errorf("tracer saw\n%q\nwant\n%q", r.events, want)
	}
}

func ok(context.Context) (json.RawMessage, error) { return nullResult, nil }

func failing(err error) func(context.Context) (json.RawMessage, error) {
	return func(context.Context) (json.RawMessage, error) { return nil, err }
}
