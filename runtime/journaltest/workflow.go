package journaltest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/resumegen/resumegen/runtime/resume"
)

// Plan steers the suite's workflow: how often each step fails before it
// succeeds, and how long its loop is. It is the run's input, so a resumed
// run follows the same plan.
type Plan struct {
	FailFetch      int  // Fetch fails this many times before succeeding
	CrashFetch     int  // the process dies during Fetch's execution number CrashFetch
	PermanentFetch bool // Fetch's failures are permanent
	FailNotify     int  // Notify (once) fails this many times
	FailWrite      bool // Write (tx) inserts its row, then fails: rolled back
	Loop           int  // Loop runs this many times
	// SlowLoop is how long each Loop step takes (it ignores cancellation,
	// like a step that must finish what it started).
	SlowLoop time.Duration
}

// effects counts what the steps did, per run, as the outside world would.
type effects struct {
	mu    sync.Mutex
	calls map[string]int         // run/step → executions
	keys  map[string][]string    // run/step → idempotency keys seen
	times map[string][]time.Time // run/step → when each execution began, by this host's clock
}

var seen = &effects{calls: map[string]int{}, keys: map[string][]string{}, times: map[string][]time.Time{}}

func (e *effects) record(ctx context.Context, step string) int {
	info, _ := resume.StepFromContext(ctx)
	now := time.Now()
	e.mu.Lock()
	defer e.mu.Unlock()
	k := info.RunID + "/" + step
	e.calls[k]++
	e.keys[k] = append(e.keys[k], info.IdempotencyKey())
	e.times[k] = append(e.times[k], now)
	return e.calls[k]
}

// timesOf returns when each execution of step of run runID began, by this
// host's clock (the test server's clock too: it runs on this host).
func (e *effects) timesOf(runID, step string) []time.Time {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]time.Time(nil), e.times[runID+"/"+step]...)
}

func (e *effects) count(runID, step string) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.calls[runID+"/"+step]
}

func (e *effects) keysOf(runID, step string) []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.keys[runID+"/"+step]...)
}

// current is the harness of the running test, for the Write step. The
// suite's tests run one after another.
var current struct {
	sync.Mutex
	h Harness
}

func harness() Harness {
	current.Lock()
	defer current.Unlock()
	return current.h
}

var errTransient = errors.New("transient failure")

// Fetch is a default-policy step with a retry budget.
func Fetch(ctx context.Context, p Plan) (string, error) {
	n := seen.record(ctx, "Fetch")
	if n == p.CrashFetch {
		panic(crash{})
	}
	if n <= p.FailFetch {
		if p.PermanentFetch {
			return "", resume.Permanent(fmt.Errorf("fetch %d: %w", n, errTransient))
		}
		return "", fmt.Errorf("fetch %d: %w", n, errTransient)
	}
	return "data", nil
}

// notifyHook, if set, runs in every execution of Notify, after its
// effect: an attack's trigger (see DatabaseBlip).
var notifyHook atomic.Pointer[func()]

// Notify is a once step.
func Notify(ctx context.Context, p Plan) error {
	n := seen.record(ctx, "Notify")
	if h := notifyHook.Load(); h != nil {
		(*h)()
	}
	if n <= p.FailNotify {
		return fmt.Errorf("notify %d: %w", n, errTransient)
	}
	return nil
}

// Write is a tx step: it inserts one effect row through resume.Tx.
func Write(ctx context.Context, p Plan, data string) error {
	seen.record(ctx, "Write")
	info, _ := resume.StepFromContext(ctx)
	if err := harness().InsertEffect(ctx, info.RunID); err != nil {
		return err
	}
	if p.FailWrite {
		return resume.Permanent(errors.New("write refused after inserting"))
	}
	return nil
}

// loops counts Loop steps executing at this moment, and the most seen.
var loops struct {
	active, most atomic.Int32
}

// Loop is a default step called in a loop.
func Loop(ctx context.Context, p Plan, i int) (int, error) {
	seen.record(ctx, "Loop")
	n := loops.active.Add(1)
	defer loops.active.Add(-1)
	for {
		most := loops.most.Load()
		if n <= most || loops.most.CompareAndSwap(most, n) {
			break
		}
	}
	time.Sleep(p.SlowLoop)
	return i * i, nil
}

// Chain is the suite's workflow, written as a user would.
func Chain(ctx context.Context, p Plan) (int, error) {
	data, err := Fetch(ctx, p)
	if err != nil {
		return 0, err
	}
	if err := Notify(ctx, p); err != nil {
		return 0, err
	}
	if err := Write(ctx, p, data); err != nil {
		return 0, err
	}
	sum := 0
	for i := 0; i < p.Loop; i++ {
		sq, err := Loop(ctx, p, i)
		if err != nil {
			return 0, err
		}
		sum += sq
	}
	return sum, nil
}

// chainDef is what resumegen would generate for Chain.
var chainDef = &resume.WorkflowDef{
	Package: "github.com/resumegen/resumegen/runtime/journaltest",
	Name:    "Chain",
	Version: "chain-v1",
	// chain-v0 is the version an old binary left runs of (see the suite's
	// version cases): chain-v1 descends from it.
	Lineage: []string{"chain-v0"},
	Steps:   chainSteps,
	Run: func(ctx context.Context, args resume.Args) (any, error) {
		var p Plan
		if err := args.Decode(&p); err != nil {
			return nil, err
		}
		return chainBody(ctx, p)
	},
}

// chainSteps is a variable of its own: the step wrappers refer to it, and
// referring to chainDef would make an initialization cycle.
var chainSteps = []resume.StepDef{
	{Name: "Fetch", Callee: "journaltest.Fetch", Signature: "func(context.Context, Plan) (string, error)", Policy: resume.PolicyDefault, Attempts: 3, BackoffMin: 1, BackoffMax: 1, JSON: "string"},
	{Name: "Notify", Callee: "journaltest.Notify", Signature: "func(context.Context, Plan) error", Policy: resume.PolicyOnce, Attempts: 2, BackoffMin: 1, BackoffMax: 1, JSON: "null"},
	{Name: "Write", Callee: "journaltest.Write", Signature: "func(context.Context, Plan, string) error", Policy: resume.PolicyTx, JSON: "null"},
	{Name: "Loop", Callee: "journaltest.Loop", Signature: "func(context.Context, Plan, int) (int, error)", Policy: resume.PolicyDefault, JSON: "int"},
}

func init() { resume.Register(Chain, chainDef) }

func chainBody(ctx context.Context, p Plan) (int, error) {
	data, err := chainFetch(ctx, p)
	if err != nil {
		return 0, err
	}
	if err := chainNotify(ctx, p); err != nil {
		return 0, err
	}
	if err := chainWrite(ctx, p, data); err != nil {
		return 0, err
	}
	sum := 0
	for i := 0; i < p.Loop; i++ {
		sq, err := chainLoop(ctx, p, i)
		if err != nil {
			return 0, err
		}
		sum += sq
	}
	return sum, nil
}

func chainFetch(ctx context.Context, p Plan) (string, error) {
	return resume.Call(ctx, &chainSteps[0], func(ctx context.Context) (string, error) { return Fetch(ctx, p) })
}

func chainNotify(ctx context.Context, p Plan) error {
	return resume.Call0(ctx, &chainSteps[1], func(ctx context.Context) error { return Notify(ctx, p) })
}

func chainWrite(ctx context.Context, p Plan, data string) error {
	return resume.Call0(ctx, &chainSteps[2], func(ctx context.Context) error { return Write(ctx, p, data) })
}

func chainLoop(ctx context.Context, p Plan, i int) (int, error) {
	return resume.Call(ctx, &chainSteps[3], func(ctx context.Context) (int, error) { return Loop(ctx, p, i) })
}
