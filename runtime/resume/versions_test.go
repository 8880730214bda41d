package resume

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/resumegen/resumegen/internal/pgtest"
	"github.com/resumegen/resumegen/runtime/deploy"
	"github.com/resumegen/resumegen/runtime/journal"
	"github.com/resumegen/resumegen/runtime/pgjournal"
	"github.com/resumegen/resumegen/runtime/sqlitejournal"
)

// The versions of one workflow, example.com/shop.Order, as four deploys
// of it would register them (each test registers the ones its "program"
// has; see useRegistry):
//
//	V1: A, B (called twice: B, B#2), C
//	V2: V1 and an appended step D
//	V3: V2 with B's policy changed to once (a middle step changed)
//	V4: V2 with B renamed Bee (renamed-from=B)
const orderID = "example.com/shop.Order"

var orderShape = []string{"input arg 1 int", "output int"}

func orderStep(name string) StepDef {
	return StepDef{Name: name, Callee: "example.com/shop." + name, Signature: "func(context.Context, int) (int, error)", JSON: "int", Shape: []string{"result int"}}
}

var (
	stepsV1 = []StepDef{orderStep("A"), orderStep("B"), orderStep("C")}
	stepsV2 = []StepDef{orderStep("A"), orderStep("B"), orderStep("C"), orderStep("D")}
	stepsV3 = func() []StepDef {
		s := append([]StepDef(nil), stepsV2...)
		s[1].Policy = PolicyOnce
		return s
	}()
	stepsV4 = func() []StepDef {
		s := append([]StepDef(nil), stepsV2...)
		s[1] = orderStep("Bee")
		s[1].RenamedFrom = []string{"B"}
		return s
	}()
)

// executed counts the executions of each step key, by run.
var executed = struct {
	sync.Mutex
	n map[string]int
}{n: map[string]int{}}

// resetExecutions forgets the executions counted so far: each journal
// of eachJournal starts from none, also under -count (the run ids repeat;
// these tests do not run in parallel).
func resetExecutions() {
	executed.Lock()
	defer executed.Unlock()
	clear(executed.n)
}

func executions(runID, key string) int {
	executed.Lock()
	defer executed.Unlock()
	return executed.n[runID+"/"+key]
}

// orderStepCall executes step s of a version's step list on x.
func orderStepCall(ctx context.Context, s *StepDef, x int) (int, error) {
	return Call(ctx, s, func(ctx context.Context) (int, error) {
		info, _ := StepFromContext(ctx)
		executed.Lock()
		executed.n[info.RunID+"/"+info.StepKey]++
		executed.Unlock()
		return x*3 + 1, nil
	})
}

// orderBody is every version's body, over its step list: A, B twice, C,
// then D when the version has it.
func orderBody(ctx context.Context, steps []StepDef, n int) (int, error) {
	a, err := orderStepCall(ctx, &steps[0], n)
	if err != nil {
		return 0, err
	}
	sum := a
	for i := 0; i < 2; i++ {
		b, err := orderStepCall(ctx, &steps[1], a+i)
		if err != nil {
			return 0, err
		}
		sum += b
	}
	c, err := orderStepCall(ctx, &steps[2], sum)
	if err != nil || len(steps) < 4 {
		return c, err
	}
	return orderStepCall(ctx, &steps[3], c)
}

func orderV1(ctx context.Context, n int) (int, error) { return orderBody(ctx, stepsV1, n) }
func orderV2(ctx context.Context, n int) (int, error) { return orderBody(ctx, stepsV2, n) }
func orderV3(ctx context.Context, n int) (int, error) { return orderBody(ctx, stepsV3, n) }
func orderV4(ctx context.Context, n int) (int, error) { return orderBody(ctx, stepsV4, n) }

// orderLineage is the lineage resumegen records for each version of
// Order, from the version's previous generated file: V1 followed a V0
// saved by an older resumegen (no step list), V2 follows V1, and V3 and V4
// are each a change of V2.
var orderLineage = map[string][]string{"V1": {"V0"}, "V2": {"V1", "V0"}, "V3": {"V2", "V1", "V0"}, "V4": {"V2", "V1", "V0"}}

// orderDef is the definition resumegen would generate for fn, version v.
func orderDef(v string, fn func(context.Context, int) (int, error), steps []StepDef) *WorkflowDef {
	return &WorkflowDef{Package: "example.com/shop", Name: "Order", Version: v, Lineage: orderLineage[v], Steps: steps, Shape: orderShape,
		Run: func(ctx context.Context, args Args) (any, error) {
			var n int
			if err := args.Decode(&n); err != nil {
				return nil, err
			}
			return fn(ctx, n)
		}}
}

// program is the set of workflows one binary registers.
type program map[string]struct {
	fn  any
	def *WorkflowDef
}

func prog(pairs ...any) program {
	p := program{}
	for i := 0; i < len(pairs); i += 2 {
		def := pairs[i+1].(*WorkflowDef)
		p[def.Name+"@"+def.Version] = struct {
			fn  any
			def *WorkflowDef
		}{pairs[i], def}
	}
	return p
}

// useRegistry makes the registry hold what p registers, as if this process
// were the binary p is, until the test ends.
func useRegistry(t *testing.T, p program) {
	t.Helper()
	registry.Lock()
	byFunc, byName, versions, aliases := registry.byFunc, registry.byName, registry.versions, registry.aliases
	registry.byFunc, registry.byName = map[string]*WorkflowDef{}, map[string]*WorkflowDef{}
	registry.versions, registry.aliases = map[string]map[string]*WorkflowDef{}, map[string]string{}
	registry.Unlock()
	t.Cleanup(func() {
		registry.Lock()
		registry.byFunc, registry.byName, registry.versions, registry.aliases = byFunc, byName, versions, aliases
		registry.Unlock()
	})
	for _, r := range p {
		Register(r.fn, r.def)
	}
}

// eachJournal runs test against a fresh SQLite journal and, when a test
// server is given (scripts/with-postgres.sh), a fresh PostgreSQL one.
func eachJournal(t *testing.T, test func(t *testing.T, j journal.Journal)) {
	t.Run("sqlite", func(t *testing.T) {
		resetExecutions()
		j, err := sqlitejournal.Open(context.Background(), filepath.Join(t.TempDir(), "journal.db"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { j.Close() })
		test(t, j)
	})
	t.Run("postgres", func(t *testing.T) {
		resetExecutions()
		pool, err := pgxpool.New(context.Background(), pgtest.FreshDatabase(t))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(pool.Close)
		j, err := pgjournal.Open(context.Background(), pool)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { j.Close() })
		test(t, j)
	})
}

type testCrash struct{}

// startKilled starts run id of wf with n on an engine that dies right
// after step key's row commits, as a SIGKILL would, and checks that it
// died: the run is left running under a dead owner, whose runs the next
// claim takes over at once.
func startKilled(t *testing.T, j journal.Journal, id string, wf any, n int, key string) {
	t.Helper()
	e := NewEngine(j, WithOwner("killed-"+id), WithLease(time.Minute),
		WithFault(Fault{Step: key, Point: FaultAfter}),
		WithFaultAction(func() { panic(testCrash{}) }),
		WithCrashPanics(func(v any) bool { _, ok := v.(testCrash); return ok }))
	died := func() (died bool) {
		defer func() {
			if v := recover(); v != nil {
				if _, ok := v.(testCrash); !ok {
					panic(v)
				}
				died = true
			}
		}()
		_, _ = e.Start(context.Background(), id, wf, n)
		return false
	}()
	if !died {
		t.Fatalf("run %s did not die after step %s", id, key)
	}
	if l, ok := j.(journal.Liveness); ok {
		if err := l.Release(context.Background(), "killed-"+id); err != nil {
			t.Fatal(err)
		}
	}
}

// uninterrupted is the output of a run of wf with n that nothing stops,
// on a journal of its own.
func uninterrupted(t *testing.T, wf any, n int) json.RawMessage {
	t.Helper()
	j, err := sqlitejournal.Open(context.Background(), filepath.Join(t.TempDir(), "clean.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	res, err := NewEngine(j).Start(context.Background(), "clean", wf, n)
	if err != nil {
		t.Fatal(err)
	}
	return res.Output
}

func stepKeys(t *testing.T, j journal.Journal, id string) []string {
	t.Helper()
	_, steps, err := j.LoadRun(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, s := range steps {
		keys = append(keys, s.StepKey)
	}
	return keys
}

// A run journaled on V1 continues on V2, which appends a step: it is moved,
// the move is recorded, its journaled steps are not executed again, and
// its output is the one an uninterrupted V2 run has.
func TestVersionContinuesOnAnAppendedStep(t *testing.T) {
	eachJournal(t, func(t *testing.T, j journal.Journal) {
		ctx := context.Background()
		id := "append-" + t.Name()
		useRegistry(t, prog(orderV1, orderDef("V1", orderV1, stepsV1)))
		startKilled(t, j, id, orderV1, 7, "C")
		// The cost of an entry on the run's own version, for comparison.
		startKilled(t, j, "same-"+id, orderV1, 7, "C")
		same := NewEngine(j)
		if err := same.SaveManifests(ctx); err != nil {
			t.Fatal(err)
		}
		c0 := j.Counters()
		if _, err := same.Resume(ctx, "same-"+id); err != nil {
			t.Fatal(err)
		}
		c1 := j.Counters()

		useRegistry(t, prog(orderV2, orderDef("V2", orderV2, stepsV2)))
		e := NewEngine(j, WithOwner("v2"))
		if err := e.SaveManifests(ctx); err != nil {
			t.Fatal(err)
		}
		c2 := j.Counters()
		res, err := e.Resume(ctx, id)
		if err != nil {
			t.Fatalf("resume on V2: %v", err)
		}
		// A move costs the stored definition of the run's version (a
		// read; whether it is older is the code's lineage, read from
		// nothing), the move's commit (which may read the run's row in
		// its transaction), beside the step D the run then executes.
		c3 := j.Counters()
		reads, commits := (c3.Reads-c2.Reads)-(c1.Reads-c0.Reads), (c3.Commits-c2.Commits)-(c1.Commits-c0.Commits)
		if reads < 1 || reads > 2 || commits != 2 {
			t.Errorf("a moved entry took %d reads and %d commits more than an unmoved one, want 1 or 2 and 2 (the move and D)", reads, commits)
		}
		t.Logf("a moved entry: %d reads and %d commits more than an unmoved one (the move and D)", reads, commits)
		if want := uninterrupted(t, orderV2, 7); string(res.Output) != string(want) || res.Version != "V2" {
			t.Errorf("resumed on V2: output %s, version %s; want %s, V2", res.Output, res.Version, want)
		}
		for _, k := range []string{"A", "B", "B#2", "C", "D"} {
			if n := executions(id, k); n != 1 {
				t.Errorf("step %s executed %d times, want once", k, n)
			}
		}
		run, _, err := j.LoadRun(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if len(run.Moves) != 1 {
			t.Fatalf("moves = %+v, want one", run.Moves)
		}
		m := run.Moves[0]
		if m.From != "V1" || m.To != "V2" || m.Workflow != orderID || m.FromWorkflow != "" || m.By != "engine v2" ||
			m.Why != "steps A, B, C journaled: an unchanged prefix of version V2" || m.At.IsZero() {
			t.Errorf("move = %+v", m)
		}
	})
}

// V3 changes a middle step (B's policy): a run that journaled B or a step
// after it parks, saying which step changed and how, then the diff; a run
// that journaled only A continues.
func TestVersionParksOnAChangedMiddleStepOnlyPastIt(t *testing.T) {
	eachJournal(t, func(t *testing.T, j journal.Journal) {
		ctx := context.Background()
		past, before := "past-"+t.Name(), "before-"+t.Name()
		useRegistry(t, prog(orderV1, orderDef("V1", orderV1, stepsV1)))
		startKilled(t, j, past, orderV1, 3, "B#2")
		startKilled(t, j, before, orderV1, 3, "A")

		useRegistry(t, prog(orderV3, orderDef("V3", orderV3, stepsV3)))
		e := NewEngine(j, WithOwner("v3"))
		res, err := e.Resume(ctx, past)
		var runErr *RunError
		if !errors.As(err, &runErr) || res.Status != StatusNeedsAttention || res.AttentionKind != AttentionKindVersion {
			t.Fatalf("resume past the change: %+v, %v; want a version stop", res, err)
		}
		if !strings.HasPrefix(res.Error, "step 2 B: policy default -> once; run was started under version V1") ||
			!strings.Contains(res.Error, "steps differ:") || !strings.Contains(res.Error, "+ B example.com/shop.B func(context.Context, int) (int, error) once") {
			t.Errorf("park error = %q", res.Error)
		}
		if n := executions(past, "C"); n != 0 {
			t.Errorf("the parked run executed C %d times", n)
		}
		if keys := stepKeys(t, j, past); strings.Join(keys, ",") != "A,B,B#2" {
			t.Errorf("parked run's rows = %v", keys)
		}
		res, err = e.Resume(ctx, before)
		if err != nil || res.Version != "V3" {
			t.Fatalf("resume before the change: %+v, %v", res, err)
		}
		if want := uninterrupted(t, orderV3, 3); string(res.Output) != string(want) {
			t.Errorf("output %s, want %s", res.Output, want)
		}
		if n := executions(before, "A"); n != 1 {
			t.Errorf("A executed %d times", n)
		}
	})
}

// V4 renames B to Bee (renamed-from=B): a run that journaled B and B#2
// continues, its rows relabelled Bee and Bee#2 by the move, and B is not
// executed again under its new name.
func TestVersionRenameRelabelsRows(t *testing.T) {
	eachJournal(t, func(t *testing.T, j journal.Journal) {
		ctx := context.Background()
		id := "rename-" + t.Name()
		useRegistry(t, prog(orderV1, orderDef("V1", orderV1, stepsV1)))
		startKilled(t, j, id, orderV1, 5, "B#2")

		useRegistry(t, prog(orderV4, orderDef("V4", orderV4, stepsV4)))
		res, err := NewEngine(j).Resume(ctx, id)
		if err != nil {
			t.Fatalf("resume on V4: %v", err)
		}
		if want := uninterrupted(t, orderV4, 5); string(res.Output) != string(want) {
			t.Errorf("output %s, want %s", res.Output, want)
		}
		if keys := stepKeys(t, j, id); strings.Join(keys, ",") != "A,Bee,Bee#2,C,D" {
			t.Errorf("rows after the move = %v, want A,Bee,Bee#2,C,D", keys)
		}
		if n := executions(id, "Bee") + executions(id, "Bee#2"); n != 0 {
			t.Errorf("the renamed step executed again %d times", n)
		}
		run, _, _ := j.LoadRun(ctx, id)
		if len(run.Moves) != 1 || run.Moves[0].Renames["B"] != "Bee" || !strings.Contains(run.Moves[0].Why, "renamed B -> Bee") {
			t.Errorf("moves = %+v", run.Moves)
		}
	})
}

// oldOrderV1 is V1 kept next to V2 with old-version-of=Order.
func oldOrderV1(ctx context.Context, n int) (int, error) { return orderBody(ctx, stepsV1, n) }

func oldDef() *WorkflowDef {
	d := orderDef("V1", oldOrderV1, stepsV1)
	d.Name, d.ID, d.Old = "oldOrderV1", orderID, true
	return d
}

// A program that keeps V1 (old-version-of=) next to V2 drains V1's runs on
// V1, not moved, while new runs start on V2; starting a run of the old
// function is refused, naming the current workflow.
func TestVersionOldVersionDrains(t *testing.T) {
	eachJournal(t, func(t *testing.T, j journal.Journal) {
		ctx := context.Background()
		old, fresh := "old-"+t.Name(), "new-"+t.Name()
		useRegistry(t, prog(orderV1, orderDef("V1", orderV1, stepsV1)))
		startKilled(t, j, old, orderV1, 4, "A")
		want := uninterrupted(t, orderV1, 4)

		useRegistry(t, prog(orderV2, orderDef("V2", orderV2, stepsV2), oldOrderV1, oldDef()))
		e := NewEngine(j)
		res, err := e.Resume(ctx, old)
		if err != nil || res.Version != "V1" {
			t.Fatalf("resume of a V1 run: %+v, %v; want it finished on V1", res, err)
		}
		if string(res.Output) != string(want) || executions(old, "D") != 0 {
			t.Errorf("drained output %s, want V1's %s (D executed %d times)", res.Output, want, executions(old, "D"))
		}
		if run, _, _ := j.LoadRun(ctx, old); len(run.Moves) != 0 {
			t.Errorf("a drained run was moved: %+v", run.Moves)
		}
		res, err = e.Start(ctx, fresh, orderV2, 4)
		if err != nil || res.Version != "V2" || res.Workflow != orderID {
			t.Errorf("new run: %+v, %v; want it on V2", res, err)
		}
		_, err = e.Start(ctx, "refused-"+t.Name(), oldOrderV1, 4)
		if err == nil || !strings.Contains(err.Error(), "it starts no run; start example.com/shop.Order instead") {
			t.Errorf("starting the old version: %v", err)
		}
		if _, err := e.Enqueue(ctx, "refused-"+t.Name(), oldOrderV1, 4); err == nil || !strings.Contains(err.Error(), "old-version-of=") {
			t.Errorf("enqueueing the old version: %v", err)
		}
		if _, _, err := j.LoadRun(ctx, "refused-"+t.Name()); !errors.Is(err, journal.ErrRunNotFound) {
			t.Errorf("a refused start stored a run: %v", err)
		}
	})
}

// During a rolling deploy a V1 worker never claims a V2 run (V2 is newer),
// and a V2 worker leaves a V1 run to a live V1 worker; once no V1 worker
// advertises V1, the V2 worker continues the V1 run on V2.
func TestVersionWorkersClaimTheirVersions(t *testing.T) {
	eachJournal(t, func(t *testing.T, j journal.Journal) {
		ctx := context.Background()
		v1run, v2run := "w1-"+t.Name(), "w2-"+t.Name()
		useRegistry(t, prog(orderV1, orderDef("V1", orderV1, stepsV1)))
		e1 := NewEngine(j, WithOwner("worker-v1"), WithLease(300*time.Millisecond))
		if err := e1.SaveManifests(ctx); err != nil {
			t.Fatal(err)
		}
		useRegistry(t, prog(orderV2, orderDef("V2", orderV2, stepsV2)))
		e2 := NewEngine(j, WithOwner("worker-v2"), WithLease(300*time.Millisecond))
		if _, err := e2.Enqueue(ctx, v2run, orderV2, 1); err != nil {
			t.Fatal(err)
		}
		// An old worker of V1 works for a while: it must not touch v2run.
		useRegistry(t, prog(orderV1, orderDef("V1", orderV1, stepsV1)))
		work(t, e1, 400*time.Millisecond)
		if run, _, _ := j.LoadRun(ctx, v2run); run.Status != StatusPending || run.Attempts != 0 || run.Version != "V2" {
			t.Fatalf("a V1 worker touched a V2 run: %+v", run)
		}
		// A V1 run, with a V1 worker advertising V1: a V2 worker leaves it.
		if _, err := e1.Enqueue(ctx, v1run, orderV1, 1); err != nil {
			t.Fatal(err)
		}
		if err := j.Advertise(ctx, "worker-v1", []journal.WorkflowVersion{{Workflow: orderID, Version: "V1"}}); err != nil {
			t.Fatal(err)
		}
		useRegistry(t, prog(orderV2, orderDef("V2", orderV2, stepsV2)))
		work(t, e2, 300*time.Millisecond)
		run, _, _ := j.LoadRun(ctx, v1run)
		if run.Status != StatusPending || run.Attempts != 0 {
			t.Fatalf("a V2 worker took a V1 run a V1 worker advertises: %+v", run)
		}
		if run, _, _ := j.LoadRun(ctx, v2run); run.Status != StatusSucceeded {
			t.Errorf("the V2 worker did not run the V2 run: %+v", run)
		}
		// The V1 worker is gone (its advertisement withdrawn): the V2
		// worker continues the V1 run on V2.
		if err := j.Advertise(ctx, "worker-v1", nil); err != nil {
			t.Fatal(err)
		}
		work(t, e2, 300*time.Millisecond)
		run, _, _ = j.LoadRun(ctx, v1run)
		if run.Status != StatusSucceeded || run.Version != "V2" || len(run.Moves) != 1 || run.Moves[0].Why != "no step journaled" {
			t.Errorf("V1 run after V1's workers left: %+v", run)
		}
		if want := uninterrupted(t, orderV2, 1); string(run.Output) != string(want) {
			t.Errorf("output %s, want %s", run.Output, want)
		}
	})
}

// work runs e's worker for d.
func work(t *testing.T, e *Engine, d time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	if err := e.Work(ctx, WorkerOptions{PollInterval: 20 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
}

// named is V2 once name=shop.Order was added: its identity is shop.Order,
// its import-path name an alias.
func namedDef(v string, fn func(context.Context, int) (int, error), steps []StepDef) *WorkflowDef {
	d := orderDef(v, fn, steps)
	d.ID, d.Aliases = "shop.Order", []string{orderID}
	return d
}

// Adding name= strands nothing: a run stored under the import-path name
// moves to the new identity, on the same version (its name only) or on a
// newer one it may continue on; a worker claims it under the alias.
func TestVersionAliasRunMovesToItsIdentity(t *testing.T) {
	eachJournal(t, func(t *testing.T, j journal.Journal) {
		ctx := context.Background()
		same, newer, queued := "same-"+t.Name(), "newer-"+t.Name(), "queued-"+t.Name()
		useRegistry(t, prog(orderV1, orderDef("V1", orderV1, stepsV1)))
		startKilled(t, j, same, orderV1, 2, "A")
		startKilled(t, j, newer, orderV1, 2, "C")
		if _, err := NewEngine(j).Enqueue(ctx, queued, orderV1, 2); err != nil {
			t.Fatal(err)
		}

		useRegistry(t, prog(orderV1, namedDef("V1", orderV1, stepsV1)))
		res, err := NewEngine(j).Resume(ctx, same)
		if err != nil || res.Workflow != "shop.Order" || res.Version != "V1" {
			t.Fatalf("alias run on its version: %+v, %v", res, err)
		}
		run, _, _ := j.LoadRun(ctx, same)
		if len(run.Moves) != 1 || run.Moves[0].FromWorkflow != orderID || run.Moves[0].Workflow != "shop.Order" || run.Moves[0].From != "V1" || run.Moves[0].To != "V1" {
			t.Errorf("moves = %+v", run.Moves)
		}

		useRegistry(t, prog(orderV2, namedDef("V2", orderV2, stepsV2)))
		e := NewEngine(j, WithLease(300*time.Millisecond))
		res, err = e.Resume(ctx, newer)
		if err != nil || res.Workflow != "shop.Order" || res.Version != "V2" {
			t.Fatalf("alias run on a newer version: %+v, %v", res, err)
		}
		if want := uninterrupted(t, orderV2, 2); string(res.Output) != string(want) {
			t.Errorf("output %s, want %s", res.Output, want)
		}
		run, _, _ = j.LoadRun(ctx, newer)
		if len(run.Moves) != 1 || run.Moves[0].FromWorkflow != orderID || run.Moves[0].From != "V1" || run.Moves[0].To != "V2" {
			t.Errorf("moves = %+v", run.Moves)
		}
		work(t, e, 300*time.Millisecond)
		if run, _, _ := j.LoadRun(ctx, queued); run.Status != StatusSucceeded || run.Workflow != "shop.Order" || run.Version != "V2" {
			t.Errorf("a queued run under the alias, after a worker: %+v", run)
		}
	})
}

// The measured case of issue 19 in an engine: the newer program (V2) met
// the journal first and enqueued a run; a worker of V1, whose lineage does
// not name V2, works on the journal and never takes that run (under the
// order of first sight it took it, and finished it on V1 without D). A V2
// worker, whose lineage names V1, then finishes it, and takes a V1 run no
// live worker advertises.
func TestVersionOlderWorkerLeavesNewerRun(t *testing.T) {
	eachJournal(t, func(t *testing.T, j journal.Journal) {
		ctx := context.Background()
		newer, older := "newer-"+t.Name(), "older-"+t.Name()
		useRegistry(t, prog(orderV2, orderDef("V2", orderV2, stepsV2)))
		e2 := NewEngine(j, WithOwner("worker-v2"), WithLease(300*time.Millisecond))
		if _, err := e2.Enqueue(ctx, newer, orderV2, 1); err != nil {
			t.Fatal(err)
		}
		useRegistry(t, prog(orderV1, orderDef("V1", orderV1, stepsV1)))
		e1 := NewEngine(j, WithOwner("worker-v1"), WithLease(300*time.Millisecond))
		if _, err := e1.Enqueue(ctx, older, orderV1, 1); err != nil {
			t.Fatal(err)
		}
		if m1, _, _ := j.LoadManifest(ctx, orderID, "V1"); m1.Seq < 2 {
			t.Fatalf("V1's manifest has seq %d: the journal saw V2 first, it should be later", m1.Seq)
		}
		work(t, e1, 400*time.Millisecond)
		if run, _, _ := j.LoadRun(ctx, newer); run.Status != StatusPending || run.Attempts != 0 || run.Version != "V2" {
			t.Fatalf("a V1 worker touched the run of the newer V2: %+v", run)
		}
		if n := executions(newer, "A"); n != 0 {
			t.Fatalf("the V1 worker executed A of the V2 run %d times", n)
		}
		if run, _, _ := j.LoadRun(ctx, older); run.Status != StatusSucceeded || run.Version != "V1" {
			t.Fatalf("the V1 worker did not run its own run: %+v", run)
		}
		if err := j.Advertise(ctx, "worker-v1", nil); err != nil { // the V1 worker is gone
			t.Fatal(err)
		}
		older2 := "older2-" + t.Name()
		if _, err := e1.Enqueue(ctx, older2, orderV1, 1); err != nil {
			t.Fatal(err)
		}
		useRegistry(t, prog(orderV2, orderDef("V2", orderV2, stepsV2)))
		work(t, e2, 400*time.Millisecond)
		for _, id := range []string{newer, older2} {
			run, _, _ := j.LoadRun(ctx, id)
			if run.Status != StatusSucceeded || run.Version != "V2" {
				t.Errorf("run %s after a V2 worker: %+v, want succeeded on V2", id, run)
			}
			if n := executions(id, "D"); n != 1 {
				t.Errorf("run %s: D executed %d times, want once", id, n)
			}
		}
	})
}

// A run pinned to a version newer than the program's is never moved back
// (a rollback leaves it to a process that has it).
func TestVersionNewerIsNotMovedBack(t *testing.T) {
	eachJournal(t, func(t *testing.T, j journal.Journal) {
		ctx := context.Background()
		newer := "newer-" + t.Name()
		useRegistry(t, prog(orderV1, orderDef("V1", orderV1, stepsV1)))
		if err := NewEngine(j).SaveManifests(ctx); err != nil {
			t.Fatal(err)
		}
		useRegistry(t, prog(orderV2, orderDef("V2", orderV2, stepsV2)))
		if _, err := NewEngine(j).Enqueue(ctx, newer, orderV2, 1); err != nil {
			t.Fatal(err)
		}
		useRegistry(t, prog(orderV1, orderDef("V1", orderV1, stepsV1)))
		_, err := NewEngine(j).Resume(ctx, newer)
		if err == nil || !strings.Contains(err.Error(), "pinned to version V2 of example.com/shop.Order, which this program's version V1 does not descend from (not in its lineage") {
			t.Errorf("resume of a newer run: %v", err)
		}
		if run, _, _ := j.LoadRun(ctx, newer); run.Status != StatusPending || run.Version != "V2" || len(run.Moves) != 0 {
			t.Errorf("a newer run after an old program's resume: %+v", run)
		}

	})
}

// A run whose version has no stored step list (an older resumegen saved
// its manifest) parks, saying so.
func TestVersionWithoutDefinitionParks(t *testing.T) {
	eachJournal(t, func(t *testing.T, j journal.Journal) {
		ctx := context.Background()
		unknown := "unknown-" + t.Name()
		if err := j.SaveManifest(ctx, journal.ManifestRecord{Workflow: orderID, Version: "V0", Manifest: "A example.com/shop.A func() default\n"}); err != nil {
			t.Fatal(err)
		}
		useRegistry(t, prog(orderV1, orderDef("V1", orderV1, stepsV1)))
		now := time.Now()
		if _, _, err := j.CreateRun(ctx, journal.RunRecord{RunID: unknown, Workflow: orderID, Version: "V0", Input: json.RawMessage(`[1]`), CreatedAt: now, UpdatedAt: now}); err != nil {
			t.Fatal(err)
		}
		res, _ := NewEngine(j).Resume(ctx, unknown)
		if res.Status != StatusNeedsAttention || !strings.HasPrefix(res.Error, "the journal has no step list for version V0: saved by an older resumegen; ") {
			t.Errorf("a run of a version without a step list: %+v", res)
		}
	})
}

// The engine saves the definition of every registered version, current
// and old, under the workflow's identity and its aliases.
func TestVersionDefinitionsSaved(t *testing.T) {
	eachJournal(t, func(t *testing.T, j journal.Journal) {
		ctx := context.Background()
		cur := namedDef("V2", orderV2, stepsV2)
		old := oldDef()
		old.ID, old.Aliases = "shop.Order", []string{orderID}
		useRegistry(t, prog(orderV2, cur, oldOrderV1, old))
		if err := NewEngine(j).SaveManifests(ctx); err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"shop.Order", orderID} {
			for _, d := range []*WorkflowDef{cur, old} {
				m, found, err := j.LoadManifest(ctx, name, d.Version)
				if err != nil || !found {
					t.Fatalf("manifest of %s@%s: found %v, %v", name, d.Version, found, err)
				}
				var got deploy.Definition
				if err := json.Unmarshal(m.Definition, &got); err != nil {
					t.Fatalf("definition of %s@%s: %v (%s)", name, d.Version, err, m.Definition)
				}
				want, _ := json.Marshal(definitionOf(d))
				if again, _ := json.Marshal(got); string(again) != string(want) || m.Manifest != d.Manifest() {
					t.Errorf("definition of %s@%s = %s, want %s", name, d.Version, again, want)
				}
			}
		}
	})
}

func TestRegisterVersions(t *testing.T) {
	useRegistry(t, prog(orderV2, namedDef("V2", orderV2, stepsV2), oldOrderV1, func() *WorkflowDef {
		d := oldDef()
		d.ID, d.Aliases = "shop.Order", []string{orderID}
		return d
	}()))
	if d, ok := Lookup("shop.Order"); !ok || d.Version != "V2" {
		t.Errorf("Lookup(identity) = %+v, %v; want the current version", d, ok)
	}
	if d, ok := Lookup(orderID); !ok || d.Version != "V2" {
		t.Errorf("Lookup(alias) = %+v, %v", d, ok)
	}
	if d, ok := lookupVersion(orderID, "V1"); !ok || !d.Old {
		t.Errorf("lookupVersion(alias, V1) = %+v, %v; want the old version", d, ok)
	}
	if _, ok := lookupVersion("shop.Order", "V9"); ok {
		t.Error("lookupVersion found an unregistered version")
	}
	for _, tc := range []struct {
		name string
		fn   any
		def  *WorkflowDef
		want string
	}{
		{"second current", orderV3, namedDef("V3", orderV3, stepsV3), "resume: workflow shop.Order registered twice (by example.com/shop.Order and example.com/shop.Order): one current version per identity"},
		{"version twice", orderV4, func() *WorkflowDef { d := namedDef("V1", orderV4, stepsV4); d.Old = true; return d }(), "resume: workflow shop.Order: version V1 registered twice"},
		{"identity is an alias", orderV3, orderDef("V3", orderV3, stepsV3), "resume: workflow example.com/shop.Order: its identity is an earlier name of workflow shop.Order"},
		{"alias is an identity", orderV3, func() *WorkflowDef {
			d := orderDef("V3", orderV3, stepsV3)
			d.ID, d.Aliases = "other.Flow", []string{"shop.Order"}
			return d
		}(),
			"resume: workflow other.Flow: its earlier name shop.Order is taken by workflow shop.Order"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				if v := recover(); v == nil || !strings.HasPrefix(fmt.Sprint(v), tc.want) {
					t.Errorf("Register panicked with %v, want %q", v, tc.want)
				}
			}()
			Register(tc.fn, tc.def)
		})
	}
}

// parentSteps is the step list of Parent, a workflow that calls Order as a
// child run, then a step E. Its version does not change when Order's does.
var parentSteps = []StepDef{
	{Name: "Order", Callee: "example.com/shop.Order", Signature: "func(context.Context, int) (int, error)", Child: true, JSON: "int", Shape: []string{"result int"}},
	orderStep("E"),
}

func parentBody(ctx context.Context, n int, child func(context.Context, int) (int, error)) (int, error) {
	o, err := CallChild(ctx, &parentSteps[0], child, func(ctx context.Context) (int, error) { return child(ctx, n) }, n)
	if err != nil {
		return 0, err
	}
	return orderStepCall(ctx, &parentSteps[1], o)
}

// parentP1 and parentP2 are Parent in the programs of V1 and of V2.
func parentP1(ctx context.Context, n int) (int, error) { return parentBody(ctx, n, orderV1) }
func parentP2(ctx context.Context, n int) (int, error) { return parentBody(ctx, n, orderV2) }

func parentDef(fn func(context.Context, int) (int, error)) *WorkflowDef {
	d := orderDef("P1", fn, parentSteps)
	d.Name = "Parent"
	return d
}

// A child run follows the same rule: a parent resumed by the V2 program
// finds its child run pinned to V1, which continues on V2.
func TestVersionChildRunContinues(t *testing.T) {
	eachJournal(t, func(t *testing.T, j journal.Journal) {
		ctx := context.Background()
		id := "parent-" + t.Name()
		useRegistry(t, prog(parentP1, parentDef(parentP1), orderV1, orderDef("V1", orderV1, stepsV1)))
		startKilled(t, j, id, parentP1, 6, "B#2")

		useRegistry(t, prog(parentP2, parentDef(parentP2), orderV2, orderDef("V2", orderV2, stepsV2)))
		res, err := NewEngine(j).Resume(ctx, id)
		if err != nil {
			t.Fatalf("resume the parent on V2: %v", err)
		}
		if want := uninterrupted(t, parentP2, 6); string(res.Output) != string(want) {
			t.Errorf("output %s, want %s", res.Output, want)
		}
		child, _, err := j.LoadRun(ctx, ChildRunID(id, "Order"))
		if err != nil || child.Version != "V2" || len(child.Moves) != 1 || child.Moves[0].From != "V1" {
			t.Errorf("child run: %+v, %v; want it moved to V2", child, err)
		}
		if n := executions(ChildRunID(id, "Order"), "B#2"); n != 1 {
			t.Errorf("the child's B#2 executed %d times", n)
		}
	})
}

// ResumeAll in a V2 program leaves a V1 run alone while a live worker
// advertises V1, and continues it on V2 once none does.
func TestVersionResumeAllLeavesAdvertisedVersions(t *testing.T) {
	eachJournal(t, func(t *testing.T, j journal.Journal) {
		ctx := context.Background()
		id := "all-" + t.Name()
		useRegistry(t, prog(orderV1, orderDef("V1", orderV1, stepsV1)))
		if _, err := NewEngine(j).Enqueue(ctx, id, orderV1, 8); err != nil {
			t.Fatal(err)
		}
		if err := j.Advertise(ctx, "worker-v1", []journal.WorkflowVersion{{Workflow: orderID, Version: "V1"}}); err != nil {
			t.Fatal(err)
		}
		useRegistry(t, prog(orderV2, orderDef("V2", orderV2, stepsV2)))
		e := NewEngine(j)
		if res, err := e.ResumeAll(ctx); err != nil || len(res) != 0 {
			t.Fatalf("ResumeAll with V1 advertised: %+v, %v; want nothing resumed", res, err)
		}
		if run, _, _ := j.LoadRun(ctx, id); run.Attempts != 0 || run.Version != "V1" {
			t.Fatalf("ResumeAll touched a run a live V1 worker has: %+v", run)
		}
		if err := j.Advertise(ctx, "worker-v1", nil); err != nil {
			t.Fatal(err)
		}
		res, err := e.ResumeAll(ctx)
		if err != nil || len(res) != 1 || res[0].Version != "V2" || res[0].Status != StatusSucceeded {
			t.Fatalf("ResumeAll once V1 is gone: %+v, %v", res, err)
		}
		if want := uninterrupted(t, orderV2, 8); string(res[0].Output) != string(want) {
			t.Errorf("output %s, want %s", res[0].Output, want)
		}
	})
}

// moveFault makes a journal's MoveRun fail with err, or, with crash, die
// right after the move commits.
type moveFault struct {
	journal.Journal
	err   error
	crash bool
}

func (m *moveFault) KeepAlive(ctx context.Context, owner string) error {
	return m.Journal.(journal.Liveness).KeepAlive(ctx, owner)
}

func (m *moveFault) OwnerGone(ctx context.Context, owner string) (bool, error) {
	return m.Journal.(journal.Liveness).OwnerGone(ctx, owner)
}

func (m *moveFault) Release(ctx context.Context, owner string) error {
	return m.Journal.(journal.Liveness).Release(ctx, owner)
}

func (m *moveFault) MoveRun(ctx context.Context, l journal.Lease, mv journal.Move) error {
	if m.err != nil {
		return m.err
	}
	if err := m.Journal.MoveRun(ctx, l, mv); err != nil {
		return err
	}
	if m.crash {
		panic(testCrash{})
	}
	return nil
}

// A move the journal refuses executes nothing: under a lost lease the
// entry stops, on a journal failure the run is left pending for a resume.
// A process that dies right after the move commits leaves a run of the new
// version, which the next entry executes without moving it again.
func TestVersionMoveFailures(t *testing.T) {
	eachJournal(t, func(t *testing.T, j journal.Journal) {
		ctx := context.Background()
		id := "move-" + t.Name()
		useRegistry(t, prog(orderV1, orderDef("V1", orderV1, stepsV1)))
		startKilled(t, j, id, orderV1, 9, "A")
		useRegistry(t, prog(orderV2, orderDef("V2", orderV2, stepsV2)))

		_, err := NewEngine(&moveFault{Journal: j, err: fmt.Errorf("move: %w", journal.ErrLeaseLost)}, WithOwner("lost")).Resume(ctx, id)
		if !errors.Is(err, ErrLeaseLost) || executions(id, "B") != 0 {
			t.Fatalf("a move under a lost lease: %v; B executed %d times", err, executions(id, "B"))
		}
		if l, ok := j.(journal.Liveness); ok {
			if err := l.Release(ctx, "lost"); err != nil {
				t.Fatal(err)
			}
		}

		res, err := NewEngine(&moveFault{Journal: j, err: errors.New("disk full")}, WithOwner("full")).Resume(ctx, id)
		if err == nil || !strings.Contains(err.Error(), "move from version V1 to V2: disk full") || res.Status != StatusPending || executions(id, "B") != 0 {
			t.Fatalf("a move the journal failed: %+v, %v; B executed %d times", res, err, executions(id, "B"))
		}
		if run, _, _ := j.LoadRun(ctx, id); run.Version != "V1" || len(run.Moves) != 0 || run.Status != StatusPending {
			t.Fatalf("after a failed move: %+v", run)
		}

		func() {
			defer func() {
				if _, ok := recover().(testCrash); !ok {
					t.Fatal("the engine did not die after the move")
				}
			}()
			e := NewEngine(&moveFault{Journal: j, crash: true}, WithOwner("mover"), WithCrashPanics(func(v any) bool { _, ok := v.(testCrash); return ok }))
			_, _ = e.Resume(ctx, id)
		}()
		if l, ok := j.(journal.Liveness); ok {
			if err := l.Release(ctx, "mover"); err != nil {
				t.Fatal(err)
			}
		}
		res, err = NewEngine(j).Resume(ctx, id)
		if err != nil || res.Version != "V2" {
			t.Fatalf("resume after a death past the move: %+v, %v", res, err)
		}
		if want := uninterrupted(t, orderV2, 9); string(res.Output) != string(want) {
			t.Errorf("output %s, want %s", res.Output, want)
		}
		if run, _, _ := j.LoadRun(ctx, id); len(run.Moves) != 1 || executions(id, "A") != 1 {
			t.Errorf("moves %+v, A executed %d times; want one move, A once", run.Moves, executions(id, "A"))
		}
	})
}

// adverts records a journal's Advertise calls.
type adverts struct {
	journal.Journal
	mu    sync.Mutex
	calls [][]journal.WorkflowVersion
}

func (a *adverts) Advertise(ctx context.Context, owner string, v []journal.WorkflowVersion) error {
	a.mu.Lock()
	a.calls = append(a.calls, v)
	a.mu.Unlock()
	return a.Journal.Advertise(ctx, owner, v)
}

// A worker advertises every version it executes, under the identity and
// its aliases, old versions included, when it starts and every third of a
// lease, and withdraws them when Work returns.
func TestVersionWorkerAdvertises(t *testing.T) {
	j, err := sqlitejournal.Open(context.Background(), filepath.Join(t.TempDir(), "journal.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	old := oldDef()
	old.ID, old.Aliases = "shop.Order", []string{orderID}
	useRegistry(t, prog(orderV2, namedDef("V2", orderV2, stepsV2), oldOrderV1, old))
	a := &adverts{Journal: j}
	work(t, NewEngine(a, WithLease(90*time.Millisecond)), 400*time.Millisecond)
	a.mu.Lock()
	defer a.mu.Unlock()
	if n := len(a.calls); n < 4 || n > 15 {
		t.Fatalf("%d advertisements in 400ms with a 90ms lease, want one at start, about one each 30ms, and a withdrawal", n)
	}
	want := fmt.Sprint([]journal.WorkflowVersion{{Workflow: orderID, Version: "V1"}, {Workflow: orderID, Version: "V2"},
		{Workflow: "shop.Order", Version: "V1"}, {Workflow: "shop.Order", Version: "V2"}})
	for i, c := range a.calls[:len(a.calls)-1] {
		if fmt.Sprint(c) != want {
			t.Errorf("advertisement %d = %v, want %s", i, c, want)
		}
	}
	if last := a.calls[len(a.calls)-1]; last != nil {
		t.Errorf("last advertisement = %v, want the withdrawal (nil)", last)
	}
}

// An operator who accepts, for a parked run, a version that renames one of
// its journaled steps gets it replayed, not executed again: the next
// entry relabels the rows journaled under the earlier name.
func TestVersionAcceptedRenameReplays(t *testing.T) {
	eachJournal(t, func(t *testing.T, j journal.Journal) {
		ctx := context.Background()
		id := "accepted-" + t.Name()
		useRegistry(t, prog(orderV1, orderDef("V1", orderV1, stepsV1)))
		startKilled(t, j, id, orderV1, 2, "B#2")
		useRegistry(t, prog(orderV3, orderDef("V3", orderV3, stepsV3)))
		if res, _ := NewEngine(j).Resume(ctx, id); res.AttentionKind != AttentionKindVersion {
			t.Fatalf("V3 did not park the run: %+v", res)
		}
		if err := j.AcceptVersion(ctx, id, "V4"); err != nil {
			t.Fatal(err)
		}
		useRegistry(t, prog(orderV4, orderDef("V4", orderV4, stepsV4)))
		res, err := NewEngine(j).Resume(ctx, id)
		if err != nil || res.Version != "V4" {
			t.Fatalf("resume after the accept: %+v, %v", res, err)
		}
		if want := uninterrupted(t, orderV4, 2); string(res.Output) != string(want) {
			t.Errorf("output %s, want %s", res.Output, want)
		}
		if n := executions(id, "Bee") + executions(id, "Bee#2"); n != 0 {
			t.Errorf("the renamed step executed again %d times", n)
		}
		run, _, _ := j.LoadRun(ctx, id)
		if last := run.Moves[len(run.Moves)-1]; last.From != "V4" || last.To != "V4" || last.Renames["B"] != "Bee" ||
			last.Why != "steps of version V1 renamed by this one, accepted by an operator: B -> Bee; rows journaled under earlier step names relabelled: B -> Bee" {
			t.Errorf("moves = %+v", run.Moves)
		}
	})
}

// A move whose relabelling would lose a row's identity is refused before
// the journal is asked, and the run parks: two rows would get one key, or
// a renamed child call has no settled outcome (its child run, found by the
// step's key, would be started anew).
func TestVersionRelabelRefusals(t *testing.T) {
	to := &WorkflowDef{Version: "V9", Steps: []StepDef{{Name: "Purchase", Child: true, RenamedFrom: []string{"Order"}}, {Name: "Bee", RenamedFrom: []string{"B"}}}}
	row := func(key string, st journal.StepStatus, final bool) journal.StepRecord {
		return journal.StepRecord{StepKey: key, Status: st, Final: final}
	}
	for _, tc := range []struct {
		name    string
		steps   []journal.StepRecord
		renames map[string]string
		want    string
	}{
		{"settled child", []journal.StepRecord{row("Order", journal.StepSucceeded, false), row("Order#2", journal.StepFailed, true)}, map[string]string{"Order": "Purchase"}, ""},
		{"unsettled child", []journal.StepRecord{row("Order#2", journal.StepFailed, false)}, map[string]string{"Order": "Purchase"},
			"moving to version V9: run r, step Order#2: its child run r/Order#2 has no settled outcome"},
		{"in-flight child", []journal.StepRecord{row("Order", journal.StepInFlight, false)}, map[string]string{"Order": "Purchase"}, "its child run r/Order has no settled outcome"},
		{"plain step", []journal.StepRecord{row("B#2", journal.StepFailed, false)}, map[string]string{"B": "Bee"}, ""},
		{"collision", []journal.StepRecord{row("B", journal.StepSucceeded, false), row("Bee", journal.StepSucceeded, false)}, map[string]string{"B": "Bee"},
			"steps B and Bee would both be Bee"},
		{"no renames", []journal.StepRecord{row("Order", journal.StepInFlight, false)}, nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := relabelProblem("r", to, tc.steps, tc.renames)
			if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
				t.Fatalf("relabelProblem = %v, want %q", err, tc.want)
			}
			if err != nil {
				if e := moveFailed(err); e.park == "" || e.err != nil {
					t.Errorf("a refused relabelling does not park the run: %+v", e)
				}
			}
		})
	}
}

// TestDefinitionCarriesPosAndGraph: the stored definition says where each
// step is called and how the steps connect, and the version does not
// depend on either.
func TestDefinitionCarriesPosAndGraph(t *testing.T) {
	def := &WorkflowDef{Package: "example.com/shop", Name: "Order", Version: "V1", Graph: "flowchart TD\n  n1[\"A\"]\n",
		Steps: []StepDef{{Name: "A", Callee: "example.com/shop.A", Signature: "func() error", Pos: "shop/order.go:12"}}}
	d := def.Definition()
	if d.Graph != def.Graph || d.Steps[0].Pos != "shop/order.go:12" {
		t.Fatalf("Definition() = %+v: Pos or Graph dropped", d)
	}
	moved := *def
	moved.Graph, moved.Steps = "", []StepDef{def.Steps[0]}
	moved.Steps[0].Pos = "shop/order.go:40"
	if dec := deploy.Decide(d, moved.Definition(), deploy.Run{Keys: []string{"A"}}); !dec.Continues {
		t.Errorf("a step called from another line stops the run: %s", dec.Why)
	}
	if def.Manifest() != moved.Manifest() {
		t.Errorf("the manifest depends on the call site:\n%s\n%s", def.Manifest(), moved.Manifest())
	}
}
