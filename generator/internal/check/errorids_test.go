package check_test

import (
	"testing"

	"github.com/resumegen/resumegen/generator/internal/check"
	"github.com/resumegen/resumegen/generator/internal/pipetest"
)

// A comparison or errors.Is of an error with anything but nil or a
// package-level error variable is refused at the target: a replayed
// error keeps only the identities the journal knows. Sentinels of the
// package and of others, nil and comparisons of values that are no
// errors are accepted. Of two errors neither of which is a sentinel, the
// right one is named.
func TestErrorIdentitiesSentinels(t *testing.T) {
	pipetest.Want(t, check.ErrorIdentities, `package p

import (
	"context"
	"errors"
	"io"
)

var ErrA = errors.New("a")

var count = 3

type holder struct{ Err error }

//resume:workflow
func W(ctx context.Context, n int) error {
	err := S(ctx)
	local := errors.New("x")
	h := holder{}
	_ = err == local // want "^in err == local, local is not a package-level error variable: its identity cannot be journaled, so a step error replayed after a resume would not match it; compare with a package-level sentinel \\(var ErrX = errors.New\\(...\\)\\)$"
	_ = local != err // want "^in local != err, err is not a package-level error variable"
	_ = errors.Is(err, local) // want "^in errors.Is\\(err, local\\), local is not a package-level error variable"
	_ = err == errors.New("y") // want "^in err == errors.New\\(\"y\"\\), errors.New\\(\"y\"\\) is not a package-level error variable"
	_ = errors.Is(err, h.Err) // want "^in errors.Is\\(err, h.Err\\), h.Err is not a package-level error variable"
	switch err {
	case ErrA, nil:
	case local: // want "^in switch err \\{ case local: \\}, local is not a package-level error variable"
	}
	_ = err == ErrA || ErrA != err || err == nil || nil != err
	_ = errors.Is(err, ErrA) || errors.Is(err, io.EOF) || errors.Is(err, context.Canceled) || errors.Is(err, nil)
	_ = n == count
	return helper(err)
}

func helper(err error) error {
	if errors.Is(err, errors.ErrUnsupported) {
		return nil
	}
	target := io.ErrUnexpectedEOF
	_ = errors.Is(err, target) // want "^in errors.Is\\(err, target\\), target is not a package-level error variable"
	return nil
}

//resume:step
func S(ctx context.Context) error { return nil }
`)
}

// A test for a type is refused when a replayed error could not answer
// it: an interface not every error satisfies, a type parameter (whatever
// its constraint), a type the generated code cannot name, and an error
// type whose value JSON cannot carry. Concrete types JSON carries (with
// error fields, own marshalers, non-struct kinds), of the package and of
// others, interfaces every error satisfies and assertions on values that
// are no errors are accepted.
func TestErrorIdentitiesTypes(t *testing.T) {
	pipetest.Want(t, check.ErrorIdentities, `package p

import (
	"context"
	"errors"
	"strconv"

	"github.com/resumegen/resumegen/generator/internal/check/testdata/other"
)

type Good struct {
	Code  int
	Cause error
}

func (e *Good) Error() string { return "good" }

type Hidden struct{ code int }

func (e *Hidden) Error() string { return "hidden" }

type Dashed struct {
	Code int `+"`"+`json:"-"`+"`"+`
}

func (e Dashed) Error() string { return "dashed" }

type FnField struct{ F func() }

func (e FnField) Error() string { return "fn" }

type FuncKind func()

func (f FuncKind) Error() string { return "func" }

type Code int

func (c Code) Error() string { return "code" }

type Marsh struct{ hidden int }

func (m *Marsh) Error() string                { return "m" }
func (m *Marsh) MarshalJSON() ([]byte, error) { return nil, nil }
func (m *Marsh) UnmarshalJSON([]byte) error   { return nil }

type temporary interface {
	error
	Temporary() bool
}

//resume:workflow
func W(ctx context.Context) error {
	err := S(ctx)
	type Inner struct{ error }
	var (
		g    *Good
		h    *Hidden
		d    Dashed
		ff   FnField
		fk   FuncKind
		c    Code
		m    *Marsh
		tmp  temporary
		in   *Inner
		num  *strconv.NumError
		any_ any
		e    error
	)
	_ = errors.As(err, &tmp) // want "^errors.As into interface type temporary cannot be replayed: a step error replayed after a resume keeps only the sentinels and concrete error types its workflow tests; test a concrete error type or a package-level sentinel instead$"
	_, _ = err.(temporary) // want "^type assertion to interface type temporary cannot be replayed"
	switch err.(type) {
	case *Good, nil:
	case temporary: // want "^type switch case interface type temporary cannot be replayed"
	}
	_, _ = errors.AsType[temporary](err) // want "^errors.AsType of interface type temporary cannot be replayed"
	_ = errors.As(err, &in) // want "^errors.As into \\*Inner cannot be replayed: Inner is declared inside a function, where the generated code cannot name it; declare it at package level$"
	code := other.NewCodeError()
	_ = errors.As(err, &code) // want "^errors.As into \\*other.codeError cannot be replayed: codeError is unexported in package github.com/resumegen/resumegen/generator/internal/check/testdata/other, so the generated code cannot name it; test an exported type or a sentinel$"
	_ = errors.As(err, &h) // want "^errors.As into \\*Hidden cannot be replayed: a step error of this type is journaled as JSON and its field code is unexported, which JSON cannot carry; export its state in JSON-encodable fields \\(an exported field of type error for the error it wraps\\), implement json.Marshaler and json.Unmarshaler, or test a package-level sentinel instead$"
	_ = errors.As(err, &d) // want "^errors.As into Dashed cannot be replayed: a step error of this type is journaled as JSON and its field Code is tagged json:\"-\", so it would come back empty;"
	_ = errors.As(err, &ff) // want "^errors.As into FnField cannot be replayed: a step error of this type is journaled as JSON and its field F cannot be journaled: func\\(\\) is a function, which JSON cannot encode;"
	_ = errors.As(err, &fk) // want "^errors.As into FuncKind cannot be replayed: a step error of this type is journaled as JSON and FuncKind is a function, which JSON cannot encode;"
	_, _ = err.(*Hidden) // want "^type assertion to \\*Hidden cannot be replayed: a step error of this type is journaled as JSON and its field code is unexported"
	_ = errors.As(err, &g) || errors.As(err, &c) || errors.As(err, &m) || errors.As(err, &num)
	_ = errors.As(err, &e) || errors.As(err, &any_)
	_, _ = errors.AsType[*Good](err)
	_, _ = err.(interface{ Error() string })
	var v any = 1
	_, _ = v.(*Hidden)
	_ = asAny[*Good](err)
	return asTemporary[*tempErr](err)
}

func asAny[T error](err error) bool {
	var t T
	return errors.As(err, &t) // want "^errors.As into type parameter T cannot be replayed: test a concrete error type or a package-level sentinel$"
}

type tempErr struct{ Msg string }

func (e *tempErr) Error() string   { return e.Msg }
func (e *tempErr) Temporary() bool { return true }

func asTemporary[T interface {
	*tempErr
	temporary
}](err error) error {
	_, ok := errors.AsType[T](err) // want "^errors.AsType of type parameter T cannot be replayed"
	if _, isT := err.(T); isT || ok { // want "^type assertion to type parameter T cannot be replayed"
		return nil
	}
	return err
}

//resume:step
func S(ctx context.Context) error { return nil }
`)
}
