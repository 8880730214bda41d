package model_test

import (
	"strings"
	"testing"

	"github.com/resumegen/resumegen/generator/internal/model"
	"github.com/resumegen/resumegen/generator/internal/pipetest"
)

// collectFrom models src (package p), whose workflow W calls the named
// functions, and returns W's error identities and error tests.
func collectFrom(t *testing.T, src string) ([]model.ErrorIdentity, []model.ErrorTest) {
	t.Helper()
	m := pipetest.Model(t, src)
	for _, w := range m.Workflows {
		if w.Name == "W" {
			return w.ErrorIDs, w.ErrorTests
		}
	}
	t.Fatal("no workflow W")
	return nil, nil
}

func ids(list []model.ErrorIdentity) string {
	var out []string
	for _, id := range list {
		out = append(out, id.ID)
	}
	return strings.Join(out, " ")
}

// Go 1.26's errors.AsType[T] is a type test like errors.As: the concrete
// type is an identity; the interface not every error satisfies is a test
// the erroridentities check refuses, and no identity.
func TestErrorIdentitiesAsType(t *testing.T) {
	got, tests := collectFrom(t, `package p

import (
	"context"
	"errors"
)

type CodeError struct{ Code int }

func (e *CodeError) Error() string { return "code" }

type temporary interface {
	error
	Temporary() bool
}

//resume:workflow
func W(ctx context.Context) error {
	err := S(ctx)
	_, ok := errors.AsType[*CodeError](err)
	_, ok2 := errors.AsType[temporary](err)
	_ = ok && ok2
	return nil
}

//resume:step
func S(ctx context.Context) error { return nil }
`)
	if ids(got) != "*example.com/p.CodeError" {
		t.Errorf("identities = %q, want *example.com/p.CodeError", ids(got))
	}
	if len(tests) != 2 || tests[1].Type == nil || tests[1].Type.String() != "example.com/p.temporary" {
		t.Errorf("tests = %+v, want the concrete type and the interface", tests)
	}
}

// Identities are collected over the workflow's body and every function
// the step search entered from it (a helper reaching no step too), once
// each, sorted by id; tests against nil, values that are not errors and
// interfaces every error satisfies add nothing.
func TestErrorIdentitiesScopes(t *testing.T) {
	src := `package p

import (
	"context"
	"errors"
	"io"
)

var ErrB = errors.New("b")
var ErrA = errors.New("a")
var notAnError = 3

//resume:workflow
func W(ctx context.Context, n int) error {
	err := S(ctx)
	_ = errors.Is(err, ErrB) || err == nil || n == notAnError
	_, _ = err.(error)
	_, _ = err.(interface{ Error() string })
	helper(err)
	return nil
}

func helper(err error) {
	_ = ErrA != err || errors.Is(err, ErrB) || errors.Is(err, context.Canceled)
	switch err {
	case io.EOF:
	}
}

//resume:step
func S(ctx context.Context) error { return nil }
`
	got, tests := collectFrom(t, src)
	if want := "context.Canceled example.com/p.ErrA example.com/p.ErrB io.EOF"; ids(got) != want {
		t.Errorf("identities %q, want %q", ids(got), want)
	}
	for _, tt := range tests {
		if tt.Sentinel == nil && tt.Type == nil {
			t.Errorf("test %s names no sentinel", tt.What)
		}
	}
}
