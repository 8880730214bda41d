package journaltest

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/resumegen/resumegen/runtime/journal"
	"github.com/resumegen/resumegen/runtime/resume"
)

// gripPlan steers keepFlow: how long its Grip step holds in its first
// execution of a run, and whether it ignores its context meanwhile.
type gripPlan struct {
	Hold         time.Duration
	IgnoreCancel bool
}

// grips logs Grip's executions by run.
var grips = struct {
	sync.Mutex
	byRun map[string][]*gripExec
}{byRun: map[string][]*gripExec{}}

// gripExec is one execution of Grip: when it began and ended, and why its
// context ended, if it did.
type gripExec struct {
	start, end time.Time
	cause      error
}

// gripStep is the step Grip: it holds p.Hold in its first execution of a
// run (until its context ends, unless p.IgnoreCancel), at once after.
func gripStep(ctx context.Context, p gripPlan) (string, error) {
	info, _ := resume.StepFromContext(ctx)
	g := &gripExec{start: time.Now()}
	grips.Lock()
	first := len(grips.byRun[info.RunID]) == 0
	grips.byRun[info.RunID] = append(grips.byRun[info.RunID], g)
	grips.Unlock()
	var err error
	if first {
		if p.IgnoreCancel {
			time.Sleep(p.Hold)
		} else {
			select {
			case <-time.After(p.Hold):
			case <-ctx.Done():
				err = context.Cause(ctx)
			}
		}
	}
	grips.Lock()
	g.end, g.cause = time.Now(), err
	grips.Unlock()
	return "gripped", err
}

// gripsOf returns run runID's Grip executions.
func gripsOf(runID string) []gripExec {
	grips.Lock()
	defer grips.Unlock()
	var out []gripExec
	for _, g := range grips.byRun[runID] {
		out = append(out, *g)
	}
	return out
}

// keepFlow, the workflow Keep, runs Grip.
func keepFlow(ctx context.Context, p gripPlan) (string, error) { return gripStep(ctx, p) }

var keepSteps = []resume.StepDef{
	{Name: "Grip", Callee: waitPkg + ".gripStep", Signature: "func(context.Context, " + waitPkg + ".gripPlan) (string, error)", JSON: "string"},
}

func init() {
	resume.Register(keepFlow, &resume.WorkflowDef{
		Package: waitPkg, Name: "Keep", Version: "keep-v1", Steps: keepSteps,
		Run: func(ctx context.Context, args resume.Args) (any, error) {
			var p gripPlan
			if err := args.Decode(&p); err != nil {
				return nil, err
			}
			return resume.Call(ctx, &keepSteps[0], func(ctx context.Context) (string, error) { return gripStep(ctx, p) })
		},
	})
}

// unreachable is a journal its process can no longer reach once cut (a
// network partition of that process alone): renewals, step writes and
// finishes fail. It hides the journal's optional interfaces, so that its
// engine holds no liveness signal another process could read.
type unreachable struct {
	journal.Journal
	cut atomic.Bool
}

var errUnreachable = errors.New("dial tcp: connect: connection refused (a partition)")

// RenewLease fails once u is cut.
func (u *unreachable) RenewLease(ctx context.Context, l journal.Lease, d time.Duration) error {
	if u.cut.Load() {
		return errUnreachable
	}
	return u.Journal.RenewLease(ctx, l, d)
}

// WriteStep fails once u is cut.
func (u *unreachable) WriteStep(ctx context.Context, l journal.Lease, s journal.StepRecord) error {
	if u.cut.Load() {
		return errUnreachable
	}
	return u.Journal.WriteStep(ctx, l, s)
}

// FinishRun fails once u is cut.
func (u *unreachable) FinishRun(ctx context.Context, l journal.Lease, r journal.RunRecord) error {
	if u.cut.Load() {
		return errUnreachable
	}
	return u.Journal.FinishRun(ctx, l, r)
}

// runLeases proves the takeover rule: an owner that cannot renew its
// lease stops itself before the lease expires (its step's context is
// cancelled with resume.ErrLeaseExpiring, or, for a step that ignores it,
// the overrun action runs), and another process takes the run over only
// once the lease expired by the journal's clock; the step never executes
// in both at once.
func runLeases(t *testing.T, open func(t *testing.T) journal.Journal) {
	ctx := context.Background()
	const lease = time.Second
	for _, ignore := range []bool{false, true} {
		name := "leases: an owner cut off from the journal stops its step before its lease expires; another takes the run over after"
		if ignore {
			name = "leases: a step that ignores its cancellation meets the overrun action before the lease expires"
		}
		t.Run(name, func(t *testing.T) {
			j := open(t)
			a := &unreachable{Journal: j}
			var overrun atomic.Pointer[time.Time]
			ea := resume.NewEngine(a, resume.WithOwner("cut-off"), resume.WithLease(lease), resume.WithLogger(slog.New(&records{})),
				resume.WithOverrunAction(func(resume.Overrun) { now := time.Now(); overrun.Store(&now) }))
			id := newRunID(t)
			done := make(chan error, 1)
			go func() {
				_, err := ea.Start(ctx, id, keepFlow, gripPlan{Hold: 3 * time.Second, IgnoreCancel: ignore})
				done <- err
			}()
			for end := time.Now().Add(10 * time.Second); len(gripsOf(id)) == 0; time.Sleep(2 * time.Millisecond) {
				if time.Now().After(end) {
					t.Fatal("Grip never started")
				}
			}
			a.cut.Store(true)
			r, _, err := j.LoadRun(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			expiry := r.LeaseUntil // as last renewed before the cut
			if err := <-done; !errors.Is(err, resume.ErrLeaseExpiring) {
				t.Errorf("the cut-off engine's Start returned %v, want ErrLeaseExpiring", err)
			}
			// The journal's expiry may have moved on by one renewal in
			// flight at the cut: read it again.
			if r, _, err := j.LoadRun(ctx, id); err == nil && r.LeaseUntil.After(expiry) {
				expiry = r.LeaseUntil
			}
			g := gripsOf(id)
			switch {
			case ignore && overrun.Load() == nil:
				t.Errorf("the step ignored its cancellation and the overrun action never ran")
			case ignore && !overrun.Load().Before(expiry):
				t.Errorf("the overrun action ran at %v, not before the lease's expiry at %v", overrun.Load().Format(time.RFC3339Nano), expiry.Format(time.RFC3339Nano))
			case !ignore && !errors.Is(g[0].cause, resume.ErrLeaseExpiring):
				t.Errorf("Grip's context ended with %v, want ErrLeaseExpiring", g[0].cause)
			case !ignore && !g[0].end.Before(expiry):
				t.Errorf("Grip was stopped at %v, not before the lease's expiry at %v", g[0].end.Format(time.RFC3339Nano), expiry.Format(time.RFC3339Nano))
			case !ignore && overrun.Load() != nil:
				t.Errorf("the overrun action ran although the step returned when cancelled")
			}

			// Another process takes it over, once the lease expired.
			eb := resume.NewEngine(j, resume.WithOwner("other"), resume.WithLease(lease))
			var res resume.Result
			for end := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
				if res, err = eb.Resume(ctx, id); !errors.Is(err, journal.ErrRunBusy) || time.Now().After(end) {
					break
				}
			}
			if err != nil || res.Status != resume.StatusSucceeded || string(res.Output) != `"gripped"` {
				t.Fatalf("the takeover: %+v, %v", res, err)
			}
			g = gripsOf(id)
			if len(g) != 2 {
				t.Fatalf("Grip executed %d times, want 2 (the cut-off owner's, stopped, and the takeover's)", len(g))
			}
			first := g[0].end
			if ignore {
				first = *overrun.Load() // the default action ends the process there
			}
			if g[1].start.Before(expiry) || g[1].start.Before(first) {
				t.Errorf("the takeover's Grip started at %v: before the lease's expiry (%v) or the first's end (%v)",
					g[1].start.Format(time.RFC3339Nano), expiry.Format(time.RFC3339Nano), first.Format(time.RFC3339Nano))
			}
		})
	}
}
