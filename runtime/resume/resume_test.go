package resume

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/resumegen/resumegen/runtime/journal"
)

func TestParseFault(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    Fault
		wantErr string
	}{
		{in: "ScoreAll:effect", want: Fault{"ScoreAll", FaultEffect}},
		{in: "NotifyOwner#2:before", want: Fault{"NotifyOwner#2", FaultBefore}},
		{in: "Client.Send:after", want: Fault{"Client.Send", FaultAfter}},
		{in: "ScoreAll", wantErr: "want STEP:POINT"},
		{in: ":effect", wantErr: "want STEP:POINT"},
		{in: "ScoreAll:during", wantErr: `unknown point "during"`},
	} {
		got, err := ParseFault(tc.in)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("ParseFault(%q) error = %v, want %q", tc.in, err, tc.wantErr)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("ParseFault(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
		if got.String() != tc.in {
			t.Errorf("%v.String() = %q, want %q", got, got.String(), tc.in)
		}
	}
}

func TestBackoffIsBoundedFullJitter(t *testing.T) {
	def := &StepDef{BackoffMin: 10 * time.Millisecond, BackoffMax: 80 * time.Millisecond}
	for n, bound := range map[int]time.Duration{1: 10, 2: 20, 3: 40, 4: 80, 5: 80, 30: 80} {
		bound *= time.Millisecond
		var most time.Duration
		for i := 0; i < 2000; i++ {
			d := backoff(def, n)
			if d < 0 || d > bound {
				t.Fatalf("backoff after attempt %d = %v, outside [0, %v]", n, d, bound)
			}
			most = max(most, d)
		}
		// Full jitter spreads over the whole range, not just near the bound.
		if most < bound/2 {
			t.Errorf("backoff after attempt %d never exceeded %v of a %v bound", n, most, bound)
		}
	}
	if d := backoff(&StepDef{}, 100); d > DefaultBackoffMax {
		t.Errorf("default backoff = %v, over %v", d, DefaultBackoffMax)
	}
}

func TestSleepRespectsCancellation(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	t0 := time.Now()
	if err := sleep(ctx, time.Hour); !errors.Is(err, context.Canceled) {
		t.Fatalf("sleep = %v, want context.Canceled", err)
	}
	if time.Since(t0) > time.Second {
		t.Fatal("sleep ignored its cancelled context")
	}
}

func TestPermanent(t *testing.T) {
	base := errors.New("card declined")
	err := fmt.Errorf("charge: %w", Permanent(base))
	if !IsPermanent(err) || !errors.Is(err, base) {
		t.Errorf("IsPermanent = %v, errors.Is = %v; want both true", IsPermanent(err), errors.Is(err, base))
	}
	if IsPermanent(base) || Permanent(nil) != nil {
		t.Error("an unmarked error is permanent, or Permanent(nil) is not nil")
	}
}

func TestIdempotencyKey(t *testing.T) {
	k := idempotencyKey("run-1", "ScoreAll")
	if !regexp.MustCompile(`^rg-[0-9a-f]{32}$`).MatchString(k) {
		t.Errorf("key %q is not rg- and 32 hex digits", k)
	}
	if k != idempotencyKey("run-1", "ScoreAll") {
		t.Error("the key is not stable")
	}
	for _, other := range [][2]string{{"run-1", "ScoreAll#2"}, {"run-2", "ScoreAll"}, {"run-1S", "coreAll"}} {
		if idempotencyKey(other[0], other[1]) == k {
			t.Errorf("%v has the same key as run-1/ScoreAll", other)
		}
	}
	if IdempotencyKey(context.Background()) != "" {
		t.Error("a key outside a step")
	}
	ctx := context.WithValue(context.Background(), stepInfoKey{}, StepInfo{RunID: "run-1", StepKey: "ScoreAll", Attempt: 3})
	if IdempotencyKey(ctx) != k {
		t.Error("the step's key depends on more than run id and step key")
	}
}

type execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

func TestTx(t *testing.T) {
	var fallback *sql.DB
	if got := Tx[execer](context.Background(), fallback); got != execer(fallback) {
		t.Errorf("outside a tx step Tx returned %v, want the fallback", got)
	}
	if InTx(context.Background()) {
		t.Error("InTx outside a step")
	}
	tx := &sql.Tx{}
	ctx := context.WithValue(context.Background(), txKey{}, tx)
	if got := Tx[execer](ctx, fallback); got != execer(tx) {
		t.Errorf("inside a tx step Tx returned %v, want the step's transaction", got)
	}
	defer func() {
		if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), "does not implement") {
			t.Errorf("a transaction of the wrong kind: recovered %v, want a clear panic", r)
		}
	}()
	type pgxLike interface {
		Exec(context.Context, string, ...any) error
	}
	Tx[pgxLike](ctx, nil)
}

func TestArgs(t *testing.T) {
	args, err := encodeArgs([]any{"a", 2})
	if err != nil {
		t.Fatal(err)
	}
	var s string
	var n int
	if err := args.Decode(&s, &n); err != nil || s != "a" || n != 2 {
		t.Errorf("Decode = %q, %d, %v", s, n, err)
	}
	if err := args.Decode(&s); err == nil || !strings.Contains(err.Error(), "have 2 arguments, the workflow takes 1") {
		t.Errorf("Decode with too few pointers: %v", err)
	}
	empty, _ := encodeArgs(nil)
	if string(empty) != "[]" || empty.Decode() != nil {
		t.Errorf("no arguments encode as %s", empty)
	}
	if err := Args(`[1]`).Decode(&s); err == nil || !strings.Contains(err.Error(), "argument 1") {
		t.Errorf("Decode of a mistyped argument: %v", err)
	}
}

func TestDiffManifests(t *testing.T) {
	old := "A a func() default\nB b func() default\n"
	new := "A a func() default\nC c func() once\nB b func() default\n"
	var got []string
	for _, c := range DiffManifests(old, new) {
		got = append(got, c.Op+c.Step)
	}
	if want := " A a func() default|+C c func() once| B b func() default"; strings.Join(got, "|") != want {
		t.Errorf("diff = %q, want %q", strings.Join(got, "|"), want)
	}
	got = nil
	for _, c := range DiffManifests("A\nB\n", "B\nA\n") {
		got = append(got, c.Op+c.Step)
	}
	if want := "-A| B|+A"; strings.Join(got, "|") != want {
		t.Errorf("moved step diff = %q, want %q", strings.Join(got, "|"), want)
	}
}

func workflowA(ctx context.Context) error    { return nil }
func notAWorkflow(ctx context.Context) error { return nil }

func TestRegister(t *testing.T) {
	def := &WorkflowDef{Package: "example.com/p", Name: "workflowA", Version: "v1"}
	Register(workflowA, def)
	got, err := lookupFunc(workflowA)
	if err != nil || got != def {
		t.Fatalf("lookupFunc = %v, %v", got, err)
	}
	if d, ok := Lookup("example.com/p.workflowA"); !ok || d != def {
		t.Error("Lookup by qualified name failed")
	}
	if _, err := lookupFunc(notAWorkflow); err == nil || !strings.Contains(err.Error(), "run go generate") {
		t.Errorf("an unregistered function: %v", err)
	}
	defer func() {
		if r := recover(); r == nil {
			t.Error("registering a workflow twice did not panic")
		}
	}()
	Register(workflowA, def)
}

func TestStepKeys(t *testing.T) {
	st := newRunState(nil, &WorkflowDef{}, journal.RunRecord{RunID: "r"}, nil)
	var got []string
	for _, k := range []stepKey{{}, {}, {"alice@example.com", true}, {"bob@example.com", true}, {}} {
		key, err := st.nextKey("Notify", k)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, key)
	}
	if want := "Notify,Notify#2,Notify[alice@example.com],Notify[bob@example.com],Notify#3"; strings.Join(got, ",") != want {
		t.Errorf("keys = %s, want %s", strings.Join(got, ","), want)
	}
	if _, err := st.nextKey("Notify", stepKey{"", true}); err == nil || !strings.Contains(err.Error(), "key= value is empty") {
		t.Errorf("an empty key: %v", err)
	}
	if _, err := st.nextKey("Notify", stepKey{"alice@example.com", true}); err == nil || !strings.Contains(err.Error(), "Notify[alice@example.com] executed twice") {
		t.Errorf("a repeated key: %v", err)
	}
}
