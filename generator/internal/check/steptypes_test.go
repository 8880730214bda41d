package check_test

import (
	"testing"

	"github.com/resumegen/resumegen/generator/internal/check"
	"github.com/resumegen/resumegen/generator/internal/pipetest"
)

// A step is refused when the journal cannot carry what it returns or
// writes: an error that is not its last and only error, a result JSON
// cannot round-trip, a pointee that may hold the result but that JSON
// cannot carry, a variadic pointer, a call-site step on a pointer
// receiver whose state may hold the result, and a step called as a method
// expression. Pointees JSON carries, dependencies (no exported fields), a
// declared step's receiver and value receivers are accepted.
func TestStepTypes(t *testing.T) {
	pipetest.Want(t, check.StepTypes, `package p

import (
	"bytes"
	"context"
	"strings"
)

type Info struct {
	Email string
	token string
}

type Lossy struct {
	Name string
	C    chan int
}

type Good struct{ Name string }

type Dep struct{ conn chan int }

type Cmd struct{ Stdout string }

func (c Cmd) Show() error { return nil }

type client struct{ n int }

func (c *client) Call() error { return nil }

type Svc struct{ Out string }

//resume:step
func (s *Svc) Declared(ctx context.Context) error { return nil }

//resume:workflow
func W(ctx context.Context) error {
	_, _ = ErrFirst(ctx) // want "^step ErrFirst: ErrFirst returns \\(error, int\\); a step's error, if it returns one, must be its last result, and the only error$"
	_, _ = TwoErrs(ctx)  // want "^step TwoErrs: TwoErrs returns \\(error, error\\); a step's error"
	_, _ = Chan(ctx)     // want "^step Chan: result type chan int cannot be journaled as JSON: chan int is a channel, which JSON cannot encode$"
	_, _, _ = Pair(ctx)  // want "^step Pair: result type func\\(\\) cannot be journaled as JSON: func\\(\\) is a function"
	var b bytes.Buffer
	var sb strings.Builder
	_ = Render(ctx, &b)   // want "^step Render: parameter 2 \\(\\*bytes.Buffer\\): a bytes.Buffer holds what the step writes into it, which the journal cannot record, so a replay would leave it empty: return the contents as the step's result instead$"
	_ = Build(ctx, &sb)   // want "^step Build: parameter 2 \\(\\*strings.Builder\\): a strings.Builder holds what the step writes into it"
	var info Info
	var lossy Lossy
	var good Good
	var dep Dep
	_ = Fetch(ctx, &info)  // want "^step Fetch: parameter 2 \\(\\*Info\\): its exported fields \\(Email\\) may hold the step's result, which is journaled to be restored on replay, but field token of Info is unexported, so JSON does not carry it: export it, or return what the step computes as its result instead$"
	_ = Lose(ctx, 1, &lossy) // want "^step Lose: parameter 3 \\(\\*Lossy\\): its exported fields \\(Name, C\\) may hold the step's result, which is journaled to be restored on replay, but field C: chan int is a channel"
	_ = Many(ctx, &good, &good) // want "^step Many: variadic parameter ...\\*Good: the step may write through any of the pointers, which the journal does not record; pass a slice of values and return what the step computes$"
	_ = Into(ctx, &good, &dep)
	_ = ManyDeps(ctx, &dep)
	cmd := Cmd{}
	_ = cmd.Show() //resume:step name=Show
	c := &client{}
	_ = c.Call() //resume:step name=Call
	svc := &Svc{}
	_ = svc.Declared(ctx)
	_ = (*Svc).Declared(svc, ctx) // want "^step Declared: a method expression cannot be a step; call the method on a value$"
	_, _ = Kid(ctx)
	return nil
}

// Kid's own declaration is refused (its output is a channel); its call is
// a child run, whose types the children check judges.
//
//resume:workflow
func Kid(ctx context.Context) (chan int, error) { return nil, nil }

//resume:step
func ErrFirst(ctx context.Context) (error, int) { return nil, 0 }

//resume:step
func TwoErrs(ctx context.Context) (error, error) { return nil, nil }

//resume:step
func Chan(ctx context.Context) (chan int, error) { return nil, nil }

//resume:step
func Pair(ctx context.Context) (int, func(), error) { return 0, nil, nil }

//resume:step
func Render(ctx context.Context, b *bytes.Buffer) error { return nil }

//resume:step
func Build(ctx context.Context, b *strings.Builder) error { return nil }

//resume:step
func Fetch(ctx context.Context, i *Info) error { return nil }

//resume:step
func Lose(ctx context.Context, n int, l *Lossy) error { return nil }

//resume:step
func Many(ctx context.Context, gs ...*Good) error { return nil }

//resume:step
func Into(ctx context.Context, g *Good, d *Dep) error { return nil }

//resume:step
func ManyDeps(ctx context.Context, ds ...*Dep) error { return nil }
`)
}

// The receiver of a call-site step on a pointer method may hold the
// step's result when its type has exported fields or is no struct at all;
// the message says which.
func TestStepTypesReceivers(t *testing.T) {
	pipetest.Want(t, check.StepTypes, `package p

type Cmd struct{ Stdout, Stderr, Dir, Path string }

func (c *Cmd) Run() error { return nil }

type List []string

func (l *List) Load() error { return nil }

type Count int

func (c *Count) Bump() (int, error) { return 0, nil }

//resume:workflow
func W(ctx interface{}) error {
	cmd := &Cmd{}
	// wantnext "^step Run: \\(\\*Cmd\\).Run has a pointer receiver: its exported fields \\(Stdout, Stderr, Dir, ...\\) may hold the step's result, which the journal does not record, so a replay would read it unset: wrap the call in a function of your own that makes it and returns what you read afterwards, and mark that function //resume:step$"
	_ = cmd.Run() //resume:step name=Run
	var l List
	// wantnext "^step Load: \\(\\*List\\).Load has a pointer receiver: the step may write its result through it, which the journal does not record"
	_ = l.Load() //resume:step name=Load
	var c Count
	// wantnext "^step Bump: \\(\\*Count\\).Bump has a pointer receiver: the step may write its result through it"
	_, _ = c.Bump() //resume:step name=Bump
	return nil
}
`)
}

// key= is refused when it does not type-check at the call (also a
// variable declared after it), when its type is no string, integer or
// fmt.Stringer (a struct with a String method is one), and on a call of a
// variadic function; a key is judged only
// on a step whose types are sound, and a child's key is the children
// check's. A key= that does not parse never gets here: the directive
// stage refuses it.
func TestKeys(t *testing.T) {
	pipetest.Want(t, check.Keys, `package p

import "context"

type ID string

func (i ID) String() string { return "id-" + string(i) }

type Ref struct{ N int }

func (r Ref) String() string { return "ref" }

type Order struct {
	ID   int64
	Tags []string
	Tag  ID
	Ref  Ref
}

//resume:workflow
func W(ctx context.Context, o Order, n uint8, f float64, ok bool) error {
	// wantnext "^//resume:step name=K1 key=nope: key=nope does not type-check at the call: undefined: nope$"
	_ = S(ctx) //resume:step name=K1 key=nope
	// wantnext "^//resume:step name=K2 key=later: key=later does not type-check at the call: undefined: later$"
	_ = S(ctx) //resume:step name=K2 key=later
	later := 1
	_ = later
	// wantnext "^//resume:step name=K3 key=f: key=f has type float64: a key must be a string, an integer or a fmt.Stringer$"
	_ = S(ctx) //resume:step name=K3 key=f
	// wantnext "^//resume:step name=K4 key=o.Tags: key=o.Tags has type \\[\\]string: a key must be"
	_ = S(ctx) //resume:step name=K4 key=o.Tags
	// wantnext "^//resume:step name=K5 key=ok: key=ok has type bool: a key must be"
	_ = S(ctx) //resume:step name=K5 key=ok
	// wantnext "^//resume:step name=K6 key=o: key=o has type Order: a key must be"
	_ = S(ctx) //resume:step name=K6 key=o
	// wantnext "^//resume:step name=K7 key=o.ID: key= on a call of a variadic function is not supported: wrap the call in a non-variadic function and mark that one$"
	_ = Many(ctx, 1, 2) //resume:step name=K7 key=o.ID
	_ = S(ctx) //resume:step name=K8 key=o.ID
	_ = S(ctx) //resume:step name=K9 key=o.Tag
	_ = S(ctx) //resume:step name=K15 key=o.Ref
	_ = S(ctx) //resume:step name=K10 key=n
	_ = S(ctx) //resume:step name=K11 key="order-" + string(o.Tag) + "-x"
	_ = S(ctx) //resume:step name=K12 key=len(o.Tags)
	_, _ = Bad(ctx) //resume:step name=K13 key=f
	_ = Child(ctx) //resume:step name=K14 key=f
	return nil
}

//resume:step
func S(ctx context.Context) error { return nil }

//resume:step
func Many(ctx context.Context, xs ...int) error { return nil }

//resume:step
func Bad(ctx context.Context) (chan int, error) { return nil, nil }

//resume:workflow
func Child(ctx context.Context) error { return nil }
`)
}
