package check_test

import (
	"testing"

	"github.com/resumegen/resumegen/generator/internal/check"
	"github.com/resumegen/resumegen/generator/internal/pipetest"
)

// A journaled call (a step, a child workflow, a wait) is refused where
// the journal cannot order it, with the reason of the outermost place it
// stands in; a deferred step, a literal called where it is written and
// ranges over ordered sequences are accepted.
func TestPlacement(t *testing.T) {
	pipetest.Want(t, check.Placement, `package p

import (
	"context"
	"maps"
	"slices"
	"time"

	"github.com/resumegen/resumegen/runtime/resume"
)

//resume:workflow
func W(ctx context.Context, m map[string]int, xs []int) error {
	go S(ctx) // want "^step S is called in a go statement: it would run concurrently with the steps after it, in no fixed order; call it directly in the workflow body, or start the goroutine inside a step; to run child workflows in parallel, fan them out with resume.Map\\(ctx, items, func\\(ctx context.Context, it T\\) \\(R, error\\) \\{ return Child\\(ctx, it\\) //resume:step key=it.ID \\}\\)$"
	go Child(ctx) // want "^child workflow Child is called in a go statement"
	go resume.Sleep(ctx, time.Second) // want "^resume.Sleep is called in a go statement"
	// wantnext "^child workflow Child \\(step Kid\\) is called in a go statement"
	go Child(ctx) //resume:step name=Kid
	f := func() error {
		return S(ctx) // want "^step S is called inside a function literal: a closure may run later, several times or never, so the journal cannot order it; call the step directly in the workflow body, or call the literal where it is written \\(func\\(\\) \\{ ... \\}\\(\\)\\)$"
	}
	_ = f
	go func() {
		_ = S(ctx) // want "^step S is called in a go statement"
	}()
	select {
	case <-ctx.Done():
		_, _ = resume.Await[int](ctx, "approval", 0) // want "^resume.Await \"approval\" is called inside select: which case runs is not deterministic, so a resume could take another branch; choose the branch first \\(for example in a step\\) and call the step after the select$"
	default:
	}
	for range m {
		_ = S(ctx) // want "^step S is called in a range over a map: map order is random, so a resume would replay its occurrences against other keys; range over sorted keys instead \\(slices.Sorted\\(maps.Keys\\(m\\)\\)\\)$"
	}
	for range maps.Keys(m) {
		_ = S(ctx) // want "^step S is called in a range over maps.Keys: it yields in map order, which is random, so a resume would replay its occurrences against other keys; range over sorted keys instead \\(slices.Sorted\\(maps.Keys\\(m\\)\\)\\)$"
	}
	for range maps.Values(m) {
		_ = S(ctx) // want "^step S is called in a range over maps.Values:"
	}
	for range maps.All(m) {
		_ = S(ctx) // want "^step S is called in a range over maps.All:"
	}
	for range slices.Collect(maps.Keys(m)) {
		_ = S(ctx) // want "^step S is called in a range over slices.Collect\\(maps.Keys\\):"
	}
	for range slices.AppendSeq(xs, maps.Values(m)) {
		_ = S(ctx) // want "^step S is called in a range over slices.AppendSeq\\(maps.Values\\):"
	}
	for range source() {
		_ = S(ctx) // want "^step S is called in a range over a channel the workflow body does not own: received values are not journaled, so a resume would see other values; receive them in a step that returns a slice and range over that, or make, fill and close the channel in the body itself$"
	}
	for range m {
		go S(ctx) // want "^step S is called in a range over a map:"
	}
	defer resume.Sleep(ctx, time.Second) // want "^resume.Sleep is called in a deferred call: it would run as the function returns, also after a failed step or while the run is being suspended, where the journal cannot order a wait; wait in the body before returning instead$"
	defer resume.Await[int](ctx, "late", 0) // want "^resume.Await \"late\" is called in a deferred call"
	defer S(ctx)
	func() { _ = S(ctx) }()
	for range slices.Sorted(maps.Keys(m)) {
		_ = S(ctx)
	}
	for range slices.Values(xs) {
		_ = S(ctx)
	}
	for i := range 3 {
		_ = S(ctx) //resume:step name=Loop key=i
		_ = i
	}
	go func() {}()
	select {
	case <-ctx.Done():
	default:
	}
	return inHelper(ctx)
}

func inHelper(ctx context.Context) error {
	go S(ctx) // want "^step S is called in a go statement: .* key=it.ID \\}\\) \\(in inHelper, called from W via inHelper\\)$"
	return nil
}

func source() chan int { return nil }

//resume:workflow
func Child(ctx context.Context) error { return nil }

//resume:step
func S(ctx context.Context) error { return nil }
`)
}

// A range over a channel is ordered only when the body owns the channel:
// made with := and only sent to, closed, measured and ranged over. Every
// other use may hand it to another sender and is refused.
func TestPlacementChannelOwnership(t *testing.T) {
	pipetest.Want(t, check.Placement, `package p

import "context"

//resume:workflow
func W(ctx context.Context) error {
	own := make(chan int, 2)
	own <- 1
	_, _ = len(own), cap(own)
	close(own)
	for v := range own {
		_ = S(ctx) //resume:step name=Own key=v
		_ = v
	}

	passed := make(chan int, 1)
	fill(passed)
	for range passed {
		_ = S(ctx) // want "^step S is called in a range over a channel the workflow body does not own"
	}

	captured := make(chan int, 1)
	func() { captured <- 1 }()
	for range captured {
		_ = S(ctx) // want "^step S is called in a range over a channel the workflow body does not own"
	}

	sent := make(chan int, 1)
	go func() { sent <- 1 }()
	for range sent {
		_ = S(ctx) // want "^step S is called in a range over a channel the workflow body does not own"
	}

	aliased := make(chan int, 1)
	alias := aliased
	alias <- 1
	for range aliased {
		_ = S(ctx) // want "^step S is called in a range over a channel the workflow body does not own"
	}

	var declared = make(chan int, 1)
	for range declared {
		_ = S(ctx) // want "^step S is called in a range over a channel the workflow body does not own"
	}

	received := make(chan int, 1)
	<-received
	for range received {
		_ = S(ctx) // want "^step S is called in a range over a channel the workflow body does not own"
	}
	return ranges(ctx, make(chan int))
}

func ranges(ctx context.Context, in chan int) error {
	for range in {
		_ = S(ctx) // want "^step S is called in a range over a channel the workflow body does not own: .* \\(in ranges, called from W via ranges\\)$"
	}
	return nil
}

func fill(chan int) {}

//resume:step
func S(ctx context.Context) error { return nil }
`)
}

// A call of a helper that reaches a journaled call is refused where the
// step search cannot follow it: in a place the journal cannot order (the
// witness named as a step or as a wait), and for a helper the generator
// cannot copy (generic, a method expression, a method promoted through
// an embedded field). A deferred helper that only runs steps, and the
// same methods called on a value or through the named field, are
// followed.
func TestPlacementBlockedHelpers(t *testing.T) {
	pipetest.Want(t, check.Placement, `package p

import (
	"context"
	"maps"
	"time"

	"github.com/resumegen/resumegen/runtime/resume"
)

type Base struct{}

func (b *Base) Do(ctx context.Context) error { return S(ctx) }

type Outer struct{ Base }

type Deep struct{ *Outer }

type Svc struct{}

func (s *Svc) Run(ctx context.Context) error { return S(ctx) }

//resume:workflow
func W(ctx context.Context, m map[string]int) error {
	go h(ctx) // want "^call of h, which runs step S, is in a go statement: it would run concurrently with the steps after it, in no fixed order; call it directly in the workflow body, or start the goroutine inside a step; to run child workflows in parallel, fan them out with resume.Map\\(ctx, items, func\\(ctx context.Context, it T\\) \\(R, error\\) \\{ return Child\\(ctx, it\\) //resume:step key=it.ID \\}\\)$"
	go waits(ctx) // want "^call of waits, which runs resume.Sleep, is in a go statement"
	for range maps.Keys(m) {
		_ = h(ctx) // want "^call of h, which runs step S, is in a range over maps.Keys: it yields in map order"
	}
	select {
	default:
		_ = named(ctx) // want "^call of named, which runs step Named, is inside select"
	}
	defer waits(ctx) // want "^call of waits, which runs resume.Sleep, is in a deferred call: it would run as the function returns"
	defer awaits(ctx) // want "^call of awaits, which runs resume.Await \"ok\", is in a deferred call"
	defer h(ctx)
	_ = generic[int](ctx) // want "^generic runs step S and is generic: the generator does not copy generic helpers; make generic non-generic, or mark it //resume:step$"
	_ = genericWait[int](ctx) // want "^genericWait runs resume.Sleep and is generic: the generator does not copy generic helpers; make genericWait non-generic$"
	svc := &Svc{}
	_ = (*Svc).Run(svc, ctx) // want "^Svc.Run runs step S and is called as a method expression: call it on a value \\(x.Run\\(...\\)\\) so the generator can journal its steps$"
	_ = svc.Run(ctx)
	o := &Outer{}
	_ = o.Do(ctx) // want "^Base.Do runs step S and is reached here through an embedded field: name the field \\(x.Base.Do\\(...\\)\\) so the generator can journal its steps$"
	_ = o.Base.Do(ctx)
	d := Deep{o}
	_ = d.Do(ctx) // want "^Base.Do runs step S and is reached here through an embedded field: name the field \\(x.Outer.Base.Do\\(...\\)\\)"
	return indirect(ctx)
}

func indirect(ctx context.Context) error {
	go h(ctx) // want "^call of h, which runs step S, is in a go statement: .* \\(in indirect, called from W via indirect\\)$"
	return nil
}

func h(ctx context.Context) error { return S(ctx) }

func named(ctx context.Context) error {
	return S(ctx) //resume:step name=Named
}

func waits(ctx context.Context) error { return resume.Sleep(ctx, time.Second) }

func awaits(ctx context.Context) error {
	_, err := resume.Await[int](ctx, "ok", 0)
	return err
}

func generic[T any](ctx context.Context) error { return S(ctx) }

func genericWait[T any](ctx context.Context) error { return resume.Sleep(ctx, time.Second) }

//resume:step
func S(ctx context.Context) error { return nil }
`)
}

// A step whose callee takes no context.Context gets the run's context
// from the helper it stands in, which must have a named context.Context
// parameter; a callee taking one, and a step in the body, need none.
func TestHelperContext(t *testing.T) {
	pipetest.Want(t, check.HelperContext, `package p

import "context"

type Svc struct{}

func (Svc) noCtx() error {
	// wantnext "^step InMethod takes no context.Context and Svc.noCtx has no named context.Context parameter .* \\(in Svc.noCtx, called from W via Svc.noCtx\\)$"
	return Plain() //resume:step name=InMethod
}

//resume:workflow
func W(ctx context.Context) error {
	_ = Plain() //resume:step name=InBody
	_ = Svc{}.noCtx()
	_ = blank(ctx)
	_ = named(ctx)
	return takesCtx()
}

func blank(_ context.Context) error {
	// wantnext "^step InBlank takes no context.Context and blank has no named context.Context parameter to pass the run's context on: add one \\(ctx context.Context\\) and pass the workflow's ctx \\(in blank, called from W via blank\\)$"
	return Plain() //resume:step name=InBlank
}

func named(c context.Context) error {
	return Plain() //resume:step name=InNamed
}

func takesCtx() error { return S(context.Background()) }

func Plain() error { return nil }

//resume:step
func S(ctx context.Context) error { return nil }
`)
}

// The function literal handed to resume.Map is called once per item, in
// the items' order: its journaled calls are ordered, but each needs key=,
// and a wait there is refused.
func TestPlacementMap(t *testing.T) {
	pipetest.Want(t, check.Placement, `package p

import (
	"context"
	"time"

	"github.com/resumegen/resumegen/runtime/resume"
)

type Item struct{ ID string }

//resume:workflow
func W(ctx context.Context, items []Item) error {
	_, err := resume.Map(ctx, items, func(ctx context.Context, it Item) (int, error) {
		if err := S(ctx); err != nil { // want "^step S is called inside resume.Map without key=: each item's calls are journaled by key"
			return 0, err
		}
		_ = resume.Sleep(ctx, time.Second) // want "^resume.Sleep is called inside resume.Map: an item cannot wait"
		_ = S(ctx) //resume:step name=S2 key=it.ID
		return Child(ctx, it) //resume:step key=it.ID
	})
	if err != nil {
		return err
	}
	_, err = resume.Map(ctx, items, func(ctx context.Context, it Item) (int, error) {
		return Child(ctx, it) // want "^child workflow Child is called inside resume.Map without key="
	})
	return err
}

//resume:workflow
func Child(ctx context.Context, it Item) (int, error) { return 0, nil }

//resume:step
func S(ctx context.Context) error { return nil }
`)
}
