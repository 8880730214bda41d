package journaltest

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/resumegen/resumegen/runtime/journal"
	"github.com/resumegen/resumegen/runtime/resume"
)

// FanPlan is the input of FanParent: how many items, which of them fail,
// and the mistakes the runtime must refuse.
type FanPlan struct {
	N       int
	Fail    []int
	Unkeyed bool // the child call has no key=
	Sleep   bool // an item sleeps (resume.Sleep)
}

// FanOut is FanParent's output: the items' values, in the items' order,
// and the error resume.Map returned, as text.
type FanOut struct {
	Values []int
	Err    string
}

// ErrFanKid is the error of a FanKid told to fail.
var ErrFanKid = errors.New("kid failed")

// FanParent fans FanKid out over plan.N items with resume.Map. Its
// durable form is registered by hand below, as resumegen would generate
// it.
func FanParent(ctx context.Context, plan FanPlan) (FanOut, error) { return FanOut{}, nil }

// FanKid squares i in its step Square, or fails.
func FanKid(ctx context.Context, i int, fail bool) (int, error) { return 0, nil }

var fanSteps = []resume.StepDef{
	{Name: "FanKid", Callee: "journaltest.FanKid", Signature: "func(context.Context, int, bool) (int, error)", Child: true, JSON: "int"},
	{Name: "resume.Sleep", Callee: "github.com/resumegen/resumegen/runtime/resume.Sleep", Signature: "func(context.Context, time.Duration) error"},
	{Name: "Square", Callee: "journaltest.Square", Signature: "func(context.Context, int, bool) (int, error)", JSON: "int"},
}

func square(ctx context.Context, i int, fail bool) (int, error) {
	seen.record(ctx, "Square")
	if fail {
		return 0, resume.Permanent(fmt.Errorf("item %d: %w", i, ErrFanKid))
	}
	return i * i, nil
}

var fanParentDef = &resume.WorkflowDef{
	Package: "github.com/resumegen/resumegen/runtime/journaltest", Name: "FanParent", Version: "fan-v1", Steps: fanSteps[:2],
	Errors: []resume.ErrorDef{resume.ErrorSentinel("journaltest.ErrFanKid", ErrFanKid)},
	Run: func(ctx context.Context, args resume.Args) (any, error) {
		var plan FanPlan
		if err := args.Decode(&plan); err != nil {
			return nil, err
		}
		items := make([]int, plan.N)
		for i := range items {
			items[i] = i
		}
		vals, err := resume.Map(ctx, items, func(ctx context.Context, i int) (int, error) {
			fail := false
			for _, f := range plan.Fail {
				fail = fail || f == i
			}
			if plan.Sleep && i == 1 {
				if err := resume.Sleep(ctx, time.Millisecond); err != nil {
					return 0, err
				}
			}
			kid := func(ctx context.Context) (int, error) { return FanKid(ctx, i, fail) }
			if plan.Unkeyed {
				return resume.CallChild(ctx, &fanSteps[0], FanKid, kid, i, fail)
			}
			return resume.CallChildKey(ctx, &fanSteps[0], fmt.Sprint(i), FanKid, kid, i, fail)
		})
		var stop *resume.RunError
		if errors.As(err, &stop) || errors.Is(err, resume.ErrRunWaiting) {
			return nil, err
		}
		out := FanOut{Values: vals}
		if err != nil {
			if !errors.Is(err, ErrFanKid) && len(plan.Fail) > 0 {
				return nil, fmt.Errorf("resume.Map's error does not match ErrFanKid: %w", err)
			}
			out.Err = err.Error()
		}
		return out, nil
	},
}

var fanKidDef = &resume.WorkflowDef{
	Package: "github.com/resumegen/resumegen/runtime/journaltest", Name: "FanKid", Version: "fankid-v1", Steps: fanSteps[2:],
	Run: func(ctx context.Context, args resume.Args) (any, error) {
		var i int
		var fail bool
		if err := args.Decode(&i, &fail); err != nil {
			return nil, err
		}
		return resume.Call(ctx, &fanSteps[2], func(ctx context.Context) (int, error) { return square(ctx, i, fail) })
	},
}

func init() {
	resume.Register(FanParent, fanParentDef)
	resume.Register(FanKid, fanKidDef)
}

// runFanOut proves resume.Map's fan-out on a journal that offers it
// (journal.FanOut): children any worker claims, a parent that waits for
// them holding no lease and is woken by the last one, results gathered by
// key in the items' order, errors joined in the items' order, and the
// mistakes refused.
func runFanOut(t *testing.T, open func(t *testing.T) journal.Journal) {
	ctx := context.Background()
	j := open(t)
	if _, ok := journal.Find[journal.FanOut](j); !ok {
		t.Fatal("the journal does not implement journal.FanOut")
	}
	opts := resume.WorkerOptions{Concurrency: 4, PollInterval: 20 * time.Millisecond}
	outOf := func(t *testing.T, res resume.Result, err error) FanOut {
		t.Helper()
		if err != nil {
			t.Fatalf("the parent ended %s: %v", res.Status, err)
		}
		var out FanOut
		if err := res.Decode(&out); err != nil {
			t.Fatal(err)
		}
		return out
	}

	t.Run("the parent waits holding no lease; any worker claims the children; the last wakes the parent", func(t *testing.T) {
		id := newRunID(t)
		e := resume.NewEngine(j, resume.WithOwner("parent-process"))
		res, err := e.Start(ctx, id, FanParent, FanPlan{N: 6})
		if res.Status != resume.StatusWaiting || !errors.Is(err, resume.ErrRunWaiting) {
			t.Fatalf("Start = %s, %v; want waiting for its children", res.Status, err)
		}
		p, _, err := j.LoadRun(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if p.Status != journal.StatusWaiting || p.WaitKind != journal.WaitChildren || p.LeaseOwner != "" || p.WakeAt.IsZero() {
			t.Fatalf("parent after dispatching: status %s, wait %q, lease %q, wake %v; want waiting for children, no lease, a recheck time", p.Status, p.WaitKind, p.LeaseOwner, p.WakeAt)
		}
		kids, err := j.ListRuns(ctx, journal.RunFilter{Parent: id})
		if err != nil {
			t.Fatal(err)
		}
		if len(kids) != 6 {
			t.Fatalf("%d child runs, want 6", len(kids))
		}
		for _, k := range kids {
			if k.Status != journal.StatusPending || k.LeaseOwner != "" {
				t.Errorf("child %s: %s held by %q; want pending and free", k.RunID, k.Status, k.LeaseOwner)
			}
		}
		// Another process's worker claims a child by itself.
		c, _, err := j.ClaimNext(ctx, journal.ClaimNextRequest{Owner: "other-worker", Lease: time.Minute, Workflows: []string{fanKidDef.QualifiedName()}})
		if err != nil || c.Parent != id {
			t.Fatalf("ClaimNext of FanKid = %s (parent %q), %v; want one of the fanned-out children", c.RunID, c.Parent, err)
		}
		if err := j.FinishRun(ctx, journal.Lease{RunID: c.RunID, Owner: "other-worker", Epoch: c.Epoch}, journal.RunRecord{RunID: c.RunID, Status: journal.StatusPending}); err != nil {
			t.Fatal(err)
		}
		stop := startWorker(ctx, resume.NewEngine(j, resume.WithOwner("worker")), opts)
		defer stop()
		res, err = resume.NewEngine(j).Wait(ctx, id)
		out := outOf(t, res, err)
		if want := []int{0, 1, 4, 9, 16, 25}; !reflect.DeepEqual(out.Values, want) || out.Err != "" {
			t.Fatalf("output %+v, want values %v and no error", out, want)
		}
		for i := range 6 {
			kid := resume.ChildRunID(id, fmt.Sprintf("FanKid[%d]", i))
			if n := seen.count(kid, "Square"); n != 1 {
				t.Errorf("%s: Square executed %d times, want 1", kid, n)
			}
		}
		if _, steps, _ := j.LoadRun(ctx, id); len(steps) != 6 {
			t.Errorf("the parent journaled %d rows, want one per item (6)", len(steps))
		}
	})

	t.Run("errors are joined in the items' order, every item runs", func(t *testing.T) {
		id := newRunID(t)
		stop := startWorker(ctx, resume.NewEngine(j, resume.WithOwner("worker")), opts)
		defer stop()
		e := resume.NewEngine(j)
		if _, err := e.Enqueue(ctx, id, FanParent, FanPlan{N: 7, Fail: []int{5, 2}}); err != nil {
			t.Fatal(err)
		}
		res, err := e.Wait(ctx, id)
		out := outOf(t, res, err)
		if want := []int{0, 1, 0, 9, 16, 0, 36}; !reflect.DeepEqual(out.Values, want) {
			t.Errorf("values %v, want %v", out.Values, want)
		}
		i2, i5 := strings.Index(out.Err, "item 2: "), strings.Index(out.Err, "item 5: ")
		if i2 < 0 || i5 < 0 || i2 > i5 {
			t.Errorf("error %q: want item 2's error, then item 5's", out.Err)
		}
	})

	for _, tc := range []struct {
		name string
		plan FanPlan
		want string
	}{
		{"a call without key= is refused", FanPlan{N: 3, Unkeyed: true}, "inside resume.Map without key="},
		{"a wait inside an item is refused", FanPlan{N: 3, Sleep: true}, "resume.Sleep inside resume.Map"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id := newRunID(t)
			res, err := resume.NewEngine(j).Start(ctx, id, FanParent, tc.plan)
			if res.Status != resume.StatusFailed || err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), id) {
				t.Fatalf("Start = %s, %v; want failed, naming the run and saying %q", res.Status, err, tc.want)
			}
		})
	}

	t.Run("cancelling the parent cancels its fanned-out children", func(t *testing.T) {
		id := newRunID(t)
		e := resume.NewEngine(j)
		if res, err := e.Start(ctx, id, FanParent, FanPlan{N: 4}); res.Status != resume.StatusWaiting {
			t.Fatalf("Start = %s, %v; want waiting", res.Status, err)
		}
		if err := e.Cancel(ctx, id, resume.CancelOptions{}); err != nil {
			t.Fatal(err)
		}
		stop := startWorker(ctx, resume.NewEngine(j, resume.WithOwner("worker")), opts)
		defer stop()
		wctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		defer cancel()
		if res, err := e.Wait(wctx, id); res.Status != resume.StatusCancelled {
			t.Fatalf("parent ended %s, %v; want cancelled", res.Status, err)
		}
		kids, err := j.ListRuns(ctx, journal.RunFilter{Parent: id})
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range kids {
			if k.Status != journal.StatusCancelled && k.Status != journal.StatusSucceeded {
				t.Errorf("child %s is %s after its parent was cancelled", k.RunID, k.Status)
			}
			if n := seen.count(k.RunID, "Square"); k.Status == journal.StatusCancelled && n != 0 {
				t.Errorf("cancelled child %s executed Square %d times", k.RunID, n)
			}
		}
	})
}
