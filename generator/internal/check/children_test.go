package check_test

import (
	"testing"

	"github.com/resumegen/resumegen/generator/internal/check"
	"github.com/resumegen/resumegen/generator/internal/pipetest"
)

// A call of a workflow of the package is a child run, refused with a
// policy or tuning option at the call, of an old version, of a workflow
// that is a method, of one taking a pointer, and with a key= on a
// variadic workflow or one that cannot be a key, each call for its first
// problem. name= and a sound key= are accepted, as is recursion; a child
// whose own declaration is refused is not refused again at the call.
func TestChildren(t *testing.T) {
	pipetest.Want(t, check.Children, `package p

import "context"

type ID string

func (i ID) String() string { return string(i) }

type Svc struct{}

//resume:workflow
func (Svc) Method(ctx context.Context) error { return nil }

//resume:workflow
func Child(ctx context.Context, n int) (int, error) { return n, nil }

//resume:workflow old-version-of=Child
func ChildV1(ctx context.Context, n int) (int, error) { return n + 1, nil }

//resume:workflow
func Many(ctx context.Context, xs ...int) error { return nil }

//resume:workflow
func Ptr(ctx context.Context, n *int, s []int, m *ID) error { return nil }

//resume:workflow
func NoCtx(n *int) error { return nil }

//resume:workflow
func W(ctx context.Context, n int, id ID, f float64) error {
	// wantnext "^//resume:step once: a call of workflow Child is a child run, which takes no once: the child's own steps carry their policies and retries; keep only name= and key= here, and set the options on the steps inside Child$"
	_, _ = Child(ctx, 1) //resume:step once
	// wantnext "^//resume:step name=C2 tx: a call of workflow Child is a child run, which takes no tx:"
	_, _ = Child(ctx, 2) //resume:step name=C2 tx
	// wantnext "^//resume:step name=C3 retry=3: a call of workflow Child is a child run, which takes no retry=:"
	_, _ = Child(ctx, 3) //resume:step name=C3 retry=3
	// wantnext "^//resume:step name=C4 timeout=5s: a call of workflow Child is a child run, which takes no timeout=:"
	_, _ = Child(ctx, 4) //resume:step name=C4 timeout=5s
	// wantnext "^//resume:step name=C5 key=f: key=f has type float64: a key must be a string, an integer or a fmt.Stringer$"
	_, _ = Child(ctx, 5) //resume:step name=C5 key=f
	// wantnext "^//resume:step name=C6 key=nope: key=nope does not type-check at the call: undefined: nope$"
	_, _ = Child(ctx, 6) //resume:step name=C6 key=nope
	// wantnext "^//resume:step key=n: key= on a call of the variadic workflow Many is not supported: give Many a slice parameter instead$"
	_ = Many(ctx, 1, 2) //resume:step key=n
	_, _ = ChildV1(ctx, 1) // want "^ChildV1 is an old version of workflow Child, kept only to finish the runs pinned to it: it starts no run, so it cannot run as a child; call Child$"
	_ = Svc{}.Method(ctx) // want "^workflow Method is a method: calling it from a workflow as a child run is not supported yet; make the child a function that takes what it needs as input, or call its steps here$"
	_ = Ptr(ctx, &n, nil, &id) // want "^child workflow Ptr takes \\*int: a child run decodes its input from the journal, so what it writes through the pointer never reaches this caller; pass the value and return what Ptr computes$" "^child workflow Ptr takes \\*ID:"
	// wantnext "^child workflow Ptr takes \\*int:" "^child workflow Ptr takes \\*ID:"
	_ = Ptr(ctx, &n, nil, &id) //resume:step name=P2 key=f
	_ = NoCtx(&n) //resume:step name=NC key=f
	_, _ = Child(ctx, 7) //resume:step name=C7 key=n
	_, _ = Child(ctx, 8) //resume:step name=C8 key=id
	_, _ = Child(ctx, 9) //resume:step name=C9
	_ = Many(ctx, 1, 2)
	return W(ctx, n-1, id, f)
}
`)
}

// A child workflow of another package of the module is checked at the
// call, since its own package's check does not run here: generic, without
// a context first, with results other than error or (T, error), and an
// input or output JSON cannot journal. A sound one is accepted.
func TestChildrenOfAnotherPackage(t *testing.T) {
	pipetest.Want(t, check.Children, `package p

import (
	"context"

	"github.com/resumegen/resumegen/generator/internal/check/testdata/other"
)

//resume:workflow
func W(ctx context.Context) error {
	_ = other.Generic(ctx, 1) // want "^child workflow other.Generic: a workflow cannot be generic$"
	_ = other.NoContext(1) // want "^child workflow other.NoContext: the first parameter must be a context.Context \\(the run's context\\)$"
	_ = other.ChanInput(ctx, nil) // want "^child workflow other.ChanInput: parameter type chan int cannot be journaled as JSON \\(it is the child run's input\\): chan int is a channel, which JSON cannot encode$"
	_, _ = other.TwoInts(ctx) // want "^child workflow other.TwoInts: returns \\(int, int\\); a workflow must return error or \\(T, error\\)$"
	_, _ = other.ChanOutput(ctx) // want "^child workflow other.ChanOutput: result type chan int cannot be journaled as JSON \\(it is the child run's output and this step's result\\): chan int is a channel"
	_ = other.TakesPointer(ctx, nil) // want "^child workflow TakesPointer takes \\*int:"
	_ = other.ManyChans(ctx, nil, nil) // want "^child workflow other.ManyChans: parameter type chan int cannot be journaled as JSON \\(it is the child run's input\\)"
	_ = other.ManyInts(ctx, 1, 2)
	_, _ = other.Child(ctx, 1)
	return nil
}
`)
}

// A workflow of a queue called directly executes in its parent's run,
// past its queue's limits: refused, with the fix; started by resume.Map it
// is a detached child, claimed through its queue: accepted.
func TestChildrenOfAQueue(t *testing.T) {
	pipetest.Want(t, check.Children, `package p

import (
	"context"

	"github.com/resumegen/resumegen/runtime/resume"
)

type Item struct{ ID string }

//resume:workflow queue=emails
func Send(ctx context.Context, it Item) (int, error) { return 0, nil }

//resume:workflow
func Unqueued(ctx context.Context, it Item) (int, error) { return 0, nil }

//resume:workflow
func W(ctx context.Context, items []Item) error {
	_, _ = Send(ctx, items[0]) // want "^workflow Send runs in queue emails, but a child run called here executes inside its parent's run, not through the queue, and its limits would not hold: start it with resume.Map \\(a detached child, claimed through its queue\\), or drop queue= from Send$"
	_, _ = Unqueued(ctx, items[0])
	_, err := resume.Map(ctx, items, func(ctx context.Context, it Item) (int, error) {
		return Send(ctx, it) //resume:step key=it.ID
	})
	return err
}
`)
}
