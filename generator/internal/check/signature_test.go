package check_test

import (
	"testing"

	"github.com/resumegen/resumegen/generator/internal/check"
	"github.com/resumegen/resumegen/generator/internal/pipetest"
)

// A workflow is refused, at its name (a method of a generic type at its
// directive), when the runtime cannot drive it: generic, without a
// context.Context first, with an input or output JSON cannot journal
// (each bad parameter reported, a variadic one by its element), or with
// results other than error and (T, error). A context alias, a variadic
// journalable input, pointers to journalable values and a method of a
// named type are accepted.
func TestSignature(t *testing.T) {
	pipetest.Want(t, check.Signature, `package p

import (
	"context"
	"time"
)

type G[T any] struct{}

// wantnext "^//resume:workflow: M is a method of a generic or unnamed type: a workflow may be a method of a named type of its package, whose value the engine is given to run it on \\(resume.WithReceiver\\)$"
//resume:workflow
func (g G[T]) M(ctx context.Context) error { return nil }

//resume:workflow
func Gen[T any](ctx context.Context, t T) error { return nil } // want "^workflow Gen: a workflow cannot be generic: its journaled input and output need one type, and its version one step list; declare a workflow per type you run it with, each calling the steps with its own types$"

//resume:workflow
func NoCtx(n int) error { return nil } // want "^workflow NoCtx: the first parameter must be a context.Context \\(the run's context\\)$"

//resume:workflow
func NoParams() error { return nil } // want "^workflow NoParams: the first parameter must be a context.Context"

//resume:workflow
func CtxSecond(n int, ctx context.Context) (int, chan int) { return 0, nil } // want "^workflow CtxSecond: the first parameter must be a context.Context" "^workflow CtxSecond: parameter type context.Context cannot be journaled as JSON" "^workflow CtxSecond: returns \\(int, chan int\\); a workflow must return error or \\(T, error\\)$"

//resume:workflow
func BadIn(ctx context.Context, c chan int, f func(), xs ...complex64) error { return nil } // want "^workflow BadIn: parameter type chan int cannot be journaled as JSON \\(it is the run's input\\): chan int is a channel, which JSON cannot encode$" "^workflow BadIn: parameter type func\\(\\) cannot be journaled as JSON \\(it is the run's input\\): func\\(\\) is a function" "^workflow BadIn: parameter type complex64 cannot be journaled as JSON \\(it is the run's input\\): complex64 is a complex number"

//resume:workflow
func TwoInts(ctx context.Context) (int, int) { return 0, 0 } // want "^workflow TwoInts: returns \\(int, int\\); a workflow must return error or \\(T, error\\)$"

//resume:workflow
func Nothing(ctx context.Context) {} // want "^workflow Nothing: returns nothing; a workflow must return error or \\(T, error\\)$"

//resume:workflow
func Three(ctx context.Context) (int, string, error) { return 0, "", nil } // want "^workflow Three: returns \\(int, string, error\\)"

//resume:workflow
func ErrFirst(ctx context.Context) (error, int) { return nil, 0 } // want "^workflow ErrFirst: returns \\(error, int\\)"

//resume:workflow
func BadOut(ctx context.Context) (any, error) { return nil, nil } // want "^workflow BadOut: result type any cannot be journaled as JSON \\(it is the run's output\\): any is an interface: JSON cannot decode into it the value that was encoded; use a concrete type$"

type Ctx = context.Context

type Input struct {
	ID   string
	When time.Time
}

type Svc struct{}

//resume:workflow
func Alias(ctx Ctx, xs ...int) (*Input, error) { return nil, nil }

//resume:workflow
func Ptr(ctx context.Context, in *Input, m map[string][]int) (map[int]Input, error) { return nil, nil }

//resume:workflow
func (s *Svc) Method(ctx context.Context, in Input) error { return nil }

//resume:workflow
func (Svc) ValueMethod(ctx context.Context) (string, error) { return "", nil }
`)
}
