package journaltest

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/resumegen/resumegen/runtime/resume"
)

// The cancellation workflows (issue 19): what resumegen generates for a
// saga whose compensations are deferred steps, and for a parent that runs
// it as a child run.

// TripPlan steers Trip: what it does between its reservations and its
// payment.
type TripPlan struct {
	// Wait is "await" (the event "go"), "sleep" (resume.Sleep for
	// Sleep), "slow" (the step Slow, until its context ends), or ""
	// (nothing).
	Wait  string
	Sleep time.Duration
	// Swallow makes the body swallow the stop of its deadline and return
	// "swallowed", as a careless body would.
	Swallow bool
}

// Reserve, Unreserve, Pay, Slow, After and Release are the saga's steps;
// each records its execution.
func Reserve(ctx context.Context, leg string) error { seen.record(ctx, "Reserve:"+leg); return nil }

// Unreserve is Reserve's compensation: it also records what its context
// was like (unwound).
func Unreserve(ctx context.Context, leg string) error {
	seen.record(ctx, "Unreserve:"+leg)
	info, _ := resume.StepFromContext(ctx)
	dl, has := ctx.Deadline()
	unwound.Lock()
	unwound.ctx[info.RunID+"/"+leg] = unwoundCtx{err: ctx.Err(), deadline: dl, hasDeadline: has}
	unwound.Unlock()
	return nil
}

// Pay is the saga's last step.
func Pay(ctx context.Context) error { seen.record(ctx, "Pay"); return nil }

// Slow runs until its context ends (at most a minute), and returns why.
func Slow(ctx context.Context) error {
	seen.record(ctx, "Slow")
	select {
	case <-ctx.Done():
		return context.Cause(ctx)
	case <-time.After(time.Minute):
		return nil
	}
}

// After is TripParent's step after its child.
func After(ctx context.Context) error { seen.record(ctx, "After"); return nil }

// Release is TripParent's compensation.
func Release(ctx context.Context) error { seen.record(ctx, "Release"); return nil }

// unwoundCtx is what an Unreserve saw of its context.
type unwoundCtx struct {
	err         error
	deadline    time.Time
	hasDeadline bool
}

var unwound = struct {
	sync.Mutex
	ctx map[string]unwoundCtx // run/leg → what Unreserve saw
}{ctx: map[string]unwoundCtx{}}

func unwoundOf(runID, leg string) (unwoundCtx, bool) {
	unwound.Lock()
	defer unwound.Unlock()
	u, ok := unwound.ctx[runID+"/"+leg]
	return u, ok
}

// Trip reserves a flight and a hotel, each undone by a deferred Unreserve
// should the trip fail, waits as its plan says, and pays.
func Trip(ctx context.Context, p TripPlan) (out string, err error) {
	for _, leg := range []string{"flight", "hotel"} {
		if err := Reserve(ctx, leg); err != nil {
			return "", err
		}
		defer func() {
			if err != nil {
				_ = Unreserve(ctx, leg)
			}
		}()
	}
	if err := Pay(ctx); err != nil {
		return "", err
	}
	return "paid", nil
}

// TripParent runs Trip as a child run, tells a cancelled or expired child
// apart (its body decides), executes After, and releases with a deferred
// step should it fail.
func TripParent(ctx context.Context, p TripPlan) (out string, err error) {
	defer func() {
		if err != nil {
			_ = Release(ctx)
		}
	}()
	out, err = Trip(ctx, p)
	switch {
	case errors.Is(err, resume.ErrRunCancelled):
		out = "child cancelled"
	case errors.Is(err, resume.ErrDeadline):
		out = "child past its deadline"
	case err != nil:
		return "", err
	}
	return out, After(ctx)
}

const tripPkg = "github.com/resumegen/resumegen/runtime/journaltest"

var tripSteps = []resume.StepDef{
	{Name: "Reserve", Callee: tripPkg + ".Reserve", Signature: "func(context.Context, string) error", JSON: "null", Key: "leg"},
	{Name: "Unreserve", Callee: tripPkg + ".Unreserve", Signature: "func(context.Context, string) error", JSON: "null", Key: "leg", Deferred: true},
	{Name: "go", Callee: "github.com/resumegen/resumegen/runtime/resume.Await", Signature: "func(context.Context, string, time.Duration) (bool, error)", JSON: "bool"},
	{Name: "resume.Sleep", Callee: "github.com/resumegen/resumegen/runtime/resume.Sleep", Signature: "func(context.Context, time.Duration) error"},
	{Name: "Slow", Callee: tripPkg + ".Slow", Signature: "func(context.Context) error", JSON: "null"},
	{Name: "Pay", Callee: tripPkg + ".Pay", Signature: "func(context.Context) error", JSON: "null"},
}

var tripDef = &resume.WorkflowDef{
	Package: tripPkg, Name: "Trip", Version: "trip-v1", Steps: tripSteps,
	Run: func(ctx context.Context, args resume.Args) (any, error) {
		var p TripPlan
		if err := args.Decode(&p); err != nil {
			return nil, err
		}
		return tripBody(ctx, p)
	},
}

func tripBody(ctx context.Context, p TripPlan) (out string, err error) {
	for _, leg := range []string{"flight", "hotel"} {
		if err := resume.Call0Key(ctx, &tripSteps[0], leg, func(ctx context.Context) error { return Reserve(ctx, leg) }); err != nil {
			return "", err
		}
		defer func() {
			if err != nil {
				_ = resume.Call0Key(ctx, &tripSteps[1], leg, func(ctx context.Context) error { return Unreserve(ctx, leg) })
			}
		}()
	}
	switch p.Wait {
	case "await":
		_, err = resume.Await[bool](ctx, "go", 0)
	case "sleep":
		err = resume.Sleep(ctx, p.Sleep)
	case "slow":
		err = resume.Call0(ctx, &tripSteps[4], Slow)
	}
	if err == nil {
		err = resume.Call0(ctx, &tripSteps[5], Pay)
	}
	if err != nil {
		if p.Swallow && errors.Is(err, resume.ErrDeadline) {
			return "swallowed", nil
		}
		return "", err
	}
	return "paid", nil
}

var tripParentSteps = []resume.StepDef{
	{Name: "Release", Callee: tripPkg + ".Release", Signature: "func(context.Context) error", JSON: "null", Deferred: true},
	{Name: "Trip", Callee: tripPkg + ".Trip", Signature: "func(context.Context, " + tripPkg + ".TripPlan) (string, error)", Child: true, JSON: "string"},
	{Name: "After", Callee: tripPkg + ".After", Signature: "func(context.Context) error", JSON: "null"},
}

var tripParentDef = &resume.WorkflowDef{
	Package: tripPkg, Name: "TripParent", Version: "tripparent-v1", Steps: tripParentSteps,
	Run: func(ctx context.Context, args resume.Args) (any, error) {
		var p TripPlan
		if err := args.Decode(&p); err != nil {
			return nil, err
		}
		return tripParentBody(ctx, p)
	},
}

func tripParentBody(ctx context.Context, p TripPlan) (out string, err error) {
	defer func() {
		if err != nil {
			_ = resume.Call0(ctx, &tripParentSteps[0], Release)
		}
	}()
	out, err = resume.CallChild(ctx, &tripParentSteps[1], Trip, func(ctx context.Context) (string, error) { return Trip(ctx, p) }, p)
	switch {
	case errors.Is(err, resume.ErrRunCancelled):
		out = "child cancelled"
	case errors.Is(err, resume.ErrDeadline):
		out = "child past its deadline"
	case err != nil:
		return "", err
	}
	return out, resume.Call0(ctx, &tripParentSteps[2], After)
}

func init() {
	resume.Register(Trip, tripDef)
	resume.Register(TripParent, tripParentDef)
}
