package resume

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/resumegen/resumegen/runtime/journal"
)

// The measured case of issue 19: version 1 of a workflow created a
// database and died before journaling the step; version 2 renamed the step.
// The provider honours idempotency keys: a key it saw before gets the
// database it made for it. A rename the run accepts must hand it the same
// key (one database); a plain rename must not be taken as safe.

// provider is a cloud API that creates one database per idempotency key.
var provider = struct {
	sync.Mutex
	keys map[string][]string // run → the keys it was called with, in order
	dbs  map[string]string   // idempotency key → database
}{keys: map[string][]string{}, dbs: map[string]string{}}

// createDB is the provider's call: the database for key, made the first
// time key is seen.
func createDB(ctx context.Context, name string) (string, error) {
	info, _ := StepFromContext(ctx)
	key := info.IdempotencyKey()
	provider.Lock()
	defer provider.Unlock()
	provider.keys[info.RunID] = append(provider.keys[info.RunID], key)
	db, ok := provider.dbs[key]
	if !ok {
		db = name + "-" + key[3:11]
		provider.dbs[key] = db
	}
	return db, nil
}

// databases is how many databases run id's calls made, and the keys they
// were made with.
func databases(id string) (int, []string) {
	provider.Lock()
	defer provider.Unlock()
	keys := provider.keys[id]
	made := map[string]bool{}
	for _, k := range keys {
		made[provider.dbs[k]] = true
	}
	return len(made), append([]string(nil), keys...)
}

const provisionID = "example.com/infra.Provision"

func provisionStep(name string) StepDef {
	return StepDef{Name: name, Callee: "example.com/infra." + name, Signature: "func(context.Context, string) (string, error)",
		JSON: "string", Shape: []string{"result string"}}
}

var (
	// P1: Plan, then CreateDB.
	provisionP1 = []StepDef{provisionStep("Plan"), provisionStep("CreateDB")}
	// P2 renames CreateDB (the function and the step) to ProvisionDB
	// without renamed-from=; P2r is P2 with renamed-from=CreateDB, of the
	// same version (renamed-from= does not enter it).
	provisionP2  = []StepDef{provisionStep("Plan"), provisionStep("ProvisionDB")}
	provisionP2r = func() []StepDef {
		s := append([]StepDef(nil), provisionP2...)
		s[1].RenamedFrom = []string{"CreateDB"}
		return s
	}()
)

func provisionBody(ctx context.Context, steps []StepDef, name string) (string, error) {
	plan, err := Call(ctx, &steps[0], func(ctx context.Context) (string, error) { return "plan-" + name, nil })
	if err != nil {
		return "", err
	}
	return Call(ctx, &steps[1], func(ctx context.Context) (string, error) { return createDB(ctx, plan) })
}

func provisionV1(ctx context.Context, name string) (string, error) {
	return provisionBody(ctx, provisionP1, name)
}
func provisionV2(ctx context.Context, name string) (string, error) {
	return provisionBody(ctx, provisionP2, name)
}
func provisionV2r(ctx context.Context, name string) (string, error) {
	return provisionBody(ctx, provisionP2r, name)
}

func provisionDef(v string, fn func(context.Context, string) (string, error), steps []StepDef, lineage ...string) *WorkflowDef {
	return &WorkflowDef{Package: "example.com/infra", Name: "Provision", Version: v, Steps: steps, Lineage: lineage,
		Shape: []string{"input arg 1 string", "output string"},
		Run: func(ctx context.Context, args Args) (any, error) {
			var name string
			if err := args.Decode(&name); err != nil {
				return nil, err
			}
			return fn(ctx, name)
		}}
}

// startKilledAt starts run id of wf with arg on an engine that dies at
// point of step key, as a SIGKILL would, and checks that it died.
func startKilledAt(t *testing.T, j journal.Journal, id string, wf, arg any, key string, point FaultPoint) {
	t.Helper()
	e := NewEngine(j, WithOwner("killed-"+id), WithLease(time.Minute),
		WithFault(Fault{Step: key, Point: point}),
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
		_, _ = e.Start(context.Background(), id, wf, arg)
		return false
	}()
	if !died {
		t.Fatalf("run %s did not die at %s of step %s", id, point, key)
	}
	if l, ok := j.(journal.Liveness); ok {
		if err := l.Release(context.Background(), "killed-"+id); err != nil {
			t.Fatal(err)
		}
	}
}

// checkOneDatabase fails unless run id's provider calls, want of them,
// all carried one idempotency key and made one database.
func checkOneDatabase(t *testing.T, id string, calls int) {
	t.Helper()
	n, keys := databases(id)
	if n != 1 || len(keys) != calls {
		t.Fatalf("run %s: %d database(s) from %d call(s) with keys %v; want 1 database from %d calls", id, n, len(keys), keys, calls)
	}
	for _, k := range keys[1:] {
		if k != keys[0] {
			t.Fatalf("run %s: the provider saw keys %v, want one key", id, keys)
		}
	}
}

// V1 died between CreateDB's effect and its row; V2 renames the step with
// renamed-from=CreateDB. The run moves, the move records the rename, and
// ProvisionDB hands the provider CreateDB's key: one database.
func TestRenameKeepsIdempotencyKey(t *testing.T) {
	eachJournal(t, func(t *testing.T, j journal.Journal) {
		ctx := context.Background()
		id := "renamed-from-" + t.Name()
		useRegistry(t, prog(provisionV1, provisionDef("P1", provisionV1, provisionP1)))
		startKilledAt(t, j, id, provisionV1, "orders", "CreateDB", FaultEffect)
		checkOneDatabase(t, id, 1)

		useRegistry(t, prog(provisionV2r, provisionDef("P2", provisionV2r, provisionP2r, "P1")))
		res, err := NewEngine(j).Resume(ctx, id)
		if err != nil || res.Version != "P2" {
			t.Fatalf("resume on P2: %+v, %v", res, err)
		}
		checkOneDatabase(t, id, 2)
		run, _, _ := j.LoadRun(ctx, id)
		if len(run.Moves) != 1 || run.Moves[0].Renames["CreateDB"] != "ProvisionDB" || !strings.Contains(run.Moves[0].Why, "renamed CreateDB -> ProvisionDB") {
			t.Errorf("moves = %+v, want one recording CreateDB -> ProvisionDB", run.Moves)
		}
	})
}

// The same with a plain rename: the run, which a process entered, parks
// naming the likely rename and its fix, and nothing executes. Once the
// code says renamed-from=CreateDB and an operator accepts the version,
// ProvisionDB hands the provider CreateDB's key: one database.
func TestPlainRenameParksThenKeepsKey(t *testing.T) {
	eachJournal(t, func(t *testing.T, j journal.Journal) {
		ctx := context.Background()
		id := "plain-" + t.Name()
		useRegistry(t, prog(provisionV1, provisionDef("P1", provisionV1, provisionP1)))
		startKilledAt(t, j, id, provisionV1, "orders", "CreateDB", FaultEffect)

		useRegistry(t, prog(provisionV2, provisionDef("P2", provisionV2, provisionP2, "P1")))
		res, err := NewEngine(j).Resume(ctx, id)
		if !errors.Is(err, ErrNeedsAttention) || res.AttentionKind != AttentionKindVersion {
			t.Fatalf("resume on P2 with a plain rename: %+v, %v; want a version stop", res, err)
		}
		for _, want := range []string{"step 2 CreateDB: looks like step CreateDB renamed ProvisionDB", "if ProvisionDB is CreateDB renamed, add renamed-from=CreateDB to it", "resumectl runs accept-version"} {
			if !strings.Contains(res.Error, want) {
				t.Errorf("park reason %q does not say %q", res.Error, want)
			}
		}
		checkOneDatabase(t, id, 1)

		// The fix deployed: the same version, with renamed-from=.
		useRegistry(t, prog(provisionV2r, provisionDef("P2", provisionV2r, provisionP2r, "P1")))
		if err := j.AcceptVersion(ctx, id, "P2"); err != nil {
			t.Fatal(err)
		}
		res, err = NewEngine(j).Resume(ctx, id)
		if err != nil || res.Status != StatusSucceeded {
			t.Fatalf("resume after the fix and the accept: %+v, %v", res, err)
		}
		checkOneDatabase(t, id, 2)
		run, _, _ := j.LoadRun(ctx, id)
		if last := run.Moves[len(run.Moves)-1]; last.By == "operator" || last.Renames["CreateDB"] != "ProvisionDB" {
			t.Errorf("moves = %+v, want the engine's record of the accepted rename last", run.Moves)
		}
	})
}

// An operator who confirms the plain rename as a new step (accept-version
// with the code that has no renamed-from=) gets what was confirmed: the
// new step executes under its own key. A run no process entered executed
// nothing, so a plain rename does not stop it.
func TestPlainRenameConfirmedOrUnentered(t *testing.T) {
	eachJournal(t, func(t *testing.T, j journal.Journal) {
		ctx := context.Background()
		confirmed, queued := "confirmed-"+t.Name(), "queued-"+t.Name()
		useRegistry(t, prog(provisionV1, provisionDef("P1", provisionV1, provisionP1)))
		startKilledAt(t, j, confirmed, provisionV1, "orders", "CreateDB", FaultEffect)
		if _, err := NewEngine(j).Enqueue(ctx, queued, provisionV1, "orders"); err != nil {
			t.Fatal(err)
		}

		useRegistry(t, prog(provisionV2, provisionDef("P2", provisionV2, provisionP2, "P1")))
		e := NewEngine(j)
		if res, _ := e.Resume(ctx, confirmed); res.AttentionKind != AttentionKindVersion {
			t.Fatalf("the plain rename did not stop the entered run: %+v", res)
		}
		if err := j.AcceptVersion(ctx, confirmed, "P2"); err != nil {
			t.Fatal(err)
		}
		if res, err := e.Resume(ctx, confirmed); err != nil || res.Status != StatusSucceeded {
			t.Fatalf("resume after the confirmation: %+v, %v", res, err)
		}
		if n, keys := databases(confirmed); n != 2 || len(keys) != 2 || keys[0] == keys[1] {
			t.Errorf("confirmed as a new step: %d databases, keys %v; want 2 under two keys", n, keys)
		}
		res, err := e.Resume(ctx, queued)
		if err != nil || res.Status != StatusSucceeded || res.Version != "P2" {
			t.Fatalf("a queued run never entered, on P2: %+v, %v; want it continued", res, err)
		}
		checkOneDatabase(t, queued, 1)
	})
}

// A renamed child call (renamed-from=) finds the child run its earlier
// name started, journaled by the parent or not: the child's steps do not
// execute again.
func TestRenamedChildKeepsItsRun(t *testing.T) {
	renamedParent := []StepDef{parentSteps[0], parentSteps[1]}
	renamedParent[0].Name, renamedParent[0].RenamedFrom = "Purchase", []string{"Order"}
	body := func(ctx context.Context, n int) (int, error) {
		o, err := CallChild(ctx, &renamedParent[0], orderV1, func(ctx context.Context) (int, error) { return orderV1(ctx, n) }, n)
		if err != nil {
			return 0, err
		}
		return orderStepCall(ctx, &renamedParent[1], o)
	}
	eachJournal(t, func(t *testing.T, j journal.Journal) {
		ctx := context.Background()
		id := "kid-" + t.Name()
		useRegistry(t, prog(parentP1, parentDef(parentP1), orderV1, orderDef("V1", orderV1, stepsV1)))
		startKilledAt(t, j, id, parentP1, 6, "Order", FaultEffect)
		if keys := stepKeys(t, j, id); len(keys) != 0 {
			t.Fatalf("the parent journaled %v before it died", keys)
		}

		pd := orderDef("P2", body, renamedParent)
		pd.Name, pd.Lineage = "Parent", []string{"P1"}
		useRegistry(t, prog(body, pd, orderV1, orderDef("V1", orderV1, stepsV1)))
		res, err := NewEngine(j).Resume(ctx, id)
		if err != nil || res.Status != StatusSucceeded {
			t.Fatalf("resume the renamed parent: %+v, %v", res, err)
		}
		if _, _, err := j.LoadRun(ctx, ChildRunID(id, "Purchase")); !errors.Is(err, journal.ErrRunNotFound) {
			t.Errorf("a second child run %s was started: %v", ChildRunID(id, "Purchase"), err)
		}
		for _, k := range []string{"A", "B", "B#2", "C"} {
			if n := executions(ChildRunID(id, "Order"), k); n != 1 {
				t.Errorf("the child's %s executed %d times, want once", k, n)
			}
		}
		run, _, _ := j.LoadRun(ctx, id)
		if got := ChildRunOf(run, "Purchase"); got != ChildRunID(id, "Order") {
			t.Errorf("ChildRunOf(Purchase) = %s, want the child Order started", got)
		}
	})
}
