package generator

import (
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"strings"
	"testing"
)

// collectFrom type-checks src (package p) and collects the error
// identities of the bodies of the named functions.
func collectFrom(t *testing.T, src string, funcs ...string) ([]errorIdentity, []Diagnostic) {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "p.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	info := &types.Info{Types: map[ast.Expr]types.TypeAndValue{}, Defs: map[*ast.Ident]types.Object{},
		Uses: map[*ast.Ident]types.Object{}, Instances: map[*ast.Ident]types.Instance{}}
	conf := types.Config{Importer: importer.Default()}
	pkg, err := conf.Check("example.com/p", fset, []*ast.File{f}, info)
	if err != nil {
		t.Fatal(err)
	}
	var scopes []errorScope
	for _, d := range f.Decls {
		if fd, ok := d.(*ast.FuncDecl); ok {
			for _, name := range funcs {
				if fd.Name.Name == name {
					scopes = append(scopes, errorScope{body: fd.Body, info: info})
				}
			}
		}
	}
	ds := &diagnostics{fset: fset}
	return collectErrorIdentities(scopes, pkg, ds), ds.sorted()
}

func ids(list []errorIdentity) string {
	var out []string
	for _, id := range list {
		out = append(out, id.id)
	}
	return strings.Join(out, " ")
}

// Go 1.26's errors.AsType[T] is a type test like errors.As.
func TestErrorIdentitiesAsType(t *testing.T) {
	got, diags := collectFrom(t, `package p

import "errors"

type CodeError struct{ Code int }

func (e *CodeError) Error() string { return "code" }

type temporary interface {
	error
	Temporary() bool
}

func body(err error) bool {
	_, ok := errors.AsType[*CodeError](err)
	_, ok2 := errors.AsType[temporary](err)
	return ok && ok2
}
`, "body")
	if ids(got) != "*example.com/p.CodeError" {
		t.Errorf("identities = %q, want *example.com/p.CodeError", ids(got))
	}
	if len(diags) != 1 || !strings.Contains(diags[0].String(), "p.go:16:12: errors.AsType of interface type temporary cannot be replayed") {
		t.Errorf("diagnostics = %v, want the interface refused at 16:12", diags)
	}
}

// Identities are collected over every body handed in (a helper's too),
// once each, sorted by id; tests against nil, values that are not errors
// and interfaces every error satisfies add nothing.
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

func body(err error, n int) {
	_ = errors.Is(err, ErrB) || err == nil || n == notAnError
	_, _ = err.(error)
	_, _ = err.(interface{ Error() string })
	helper(err)
}

func helper(err error) {
	_ = ErrA != err || errors.Is(err, ErrB) || errors.Is(err, context.Canceled)
	switch err {
	case io.EOF:
	}
}
`
	got, diags := collectFrom(t, src, "body")
	if ids(got) != "example.com/p.ErrB" || len(diags) != 0 {
		t.Errorf("body alone: identities %q, diagnostics %v", ids(got), diags)
	}
	got, diags = collectFrom(t, src, "body", "helper")
	if want := "context.Canceled example.com/p.ErrA example.com/p.ErrB io.EOF"; ids(got) != want || len(diags) != 0 {
		t.Errorf("body and helper: identities %q, diagnostics %v; want %q", ids(got), diags, want)
	}
}
