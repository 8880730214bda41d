package check_test

import (
	"regexp"
	"testing"

	"github.com/resumegen/resumegen/generator/internal/check"
	"github.com/resumegen/resumegen/generator/internal/diag"
	"github.com/resumegen/resumegen/generator/internal/model"
	"github.com/resumegen/resumegen/generator/internal/pipetest"
)

// old-version-of= is refused at the directive when it names no current
// workflow of the package (itself, an old version, a function or method
// that is no workflow, nothing), and an old version is refused when its
// steps are those of its current workflow, or of another old version of
// it (both reported). Old versions of a function and of a method with
// steps of their own are accepted.
func TestOldVersions(t *testing.T) {
	pipetest.Want(t, check.OldVersions, `package p

import "context"

//resume:step
func K(ctx context.Context) error { return nil }

//resume:step
func L(ctx context.Context) error { return nil }

//resume:workflow
func W(ctx context.Context) error { return K(ctx) }

// wantnext "^//resume:workflow old-version-of=W: W1 has the same steps as W \\(version [0-9a-f]{16}\\): delete it, nothing is pinned to a version only it has$"
//resume:workflow old-version-of=W
func W1(ctx context.Context) error { return K(ctx) }

// wantnext "^//resume:workflow old-version-of=W: old versions W2 and W3 of W have the same steps \\(version [0-9a-f]{16}\\): delete one, they keep the same runs$"
//resume:workflow old-version-of=W
func W2(ctx context.Context) error { _ = L(ctx); return K(ctx) }

// wantnext "^//resume:workflow old-version-of=W: old versions W2 and W3 of W have the same steps"
//resume:workflow old-version-of=W
func W3(ctx context.Context) error { _ = L(ctx); return K(ctx) }

//resume:workflow old-version-of=W
func W4(ctx context.Context) error { return L(ctx) }

// wantnext "^//resume:workflow old-version-of=Self: Self cannot be an old version of itself: name the current workflow, whose identity this old version takes$"
//resume:workflow old-version-of=Self
func Self(ctx context.Context) error { return L(ctx) }

// wantnext "^//resume:workflow old-version-of=W2: W2 is itself an old version \\(of W\\): name the current workflow, old-version-of=W$"
//resume:workflow old-version-of=W2
func Chained(ctx context.Context) error { _ = K(ctx); return L(ctx) }

// wantnext "^//resume:workflow old-version-of=K: K is not a //resume:workflow: old-version-of= names the current workflow of this package whose old version NotFlow keeps$"
//resume:workflow old-version-of=K
func NotFlow(ctx context.Context) error { return L(ctx) }

type T struct{}

func (T) Plain() {}

//resume:workflow
func (T) Flow(ctx context.Context) error { return K(ctx) }

// wantnext "^//resume:workflow old-version-of=T.Plain: T.Plain is not a //resume:workflow:"
//resume:workflow old-version-of=T.Plain
func NotMethodFlow(ctx context.Context) error { return L(ctx) }

//resume:workflow old-version-of=T.Flow
func FlowV1(ctx context.Context) error { return L(ctx) }

// wantnext "^//resume:workflow old-version-of=Nope: package p has no workflow Nope: old-version-of= names the current workflow, in the same package, whose old version Missing keeps$"
//resume:workflow old-version-of=Nope
func Missing(ctx context.Context) error { return L(ctx) }

// wantnext "^//resume:workflow old-version-of=T.Nope: package p has no workflow T.Nope:"
//resume:workflow old-version-of=T.Nope
func MissingMethod(ctx context.Context) error { return L(ctx) }
`)
}

// Two workflows claiming one identity in the journal are refused at both
// directives, with the role the identity plays for each (its identity, or
// its earlier import-path name); old versions share their current
// workflow's identity, and a name= equal to the import-path name adds no
// earlier identity.
func TestIdentities(t *testing.T) {
	pipetest.Want(t, check.Identities, `package p

import "context"

//resume:step
func L(ctx context.Context) error { return nil }

// wantnext "^//resume:workflow name=shared: workflow A's identity shared is also the identity of workflow B \\(p.go:13:1\\): the journal could not tell their runs apart; give one of them another name=$" "^//resume:workflow name=shared: workflow A's earlier identity \\(import-path name\\) example.com/p.A is also the identity of workflow C \\(p.go:17:1\\)"
//resume:workflow name=shared
func A(ctx context.Context) error { return L(ctx) }

// wantnext "^//resume:workflow name=shared: workflow B's identity shared is also the identity of workflow A \\(p.go:9:1\\)"
//resume:workflow name=shared
func B(ctx context.Context) error { return L(ctx) }

// wantnext "^//resume:workflow name=example.com/p.A: workflow C's identity example.com/p.A is also the earlier identity \\(import-path name\\) of workflow A \\(p.go:9:1\\)"
//resume:workflow name=example.com/p.A
func C(ctx context.Context) error { return L(ctx) }

//resume:workflow name=example.com/p.D
func D(ctx context.Context) error { return L(ctx) }

//resume:workflow name=billing.charge
func E(ctx context.Context) error { return L(ctx) }

//resume:workflow old-version-of=E
func E1(ctx context.Context) error { _ = L(ctx); return L(ctx) }
`)
}

// The identities of the workflows of every package of the run are one
// namespace: a name= claimed in two packages is refused in both.
func TestIdentitiesAcrossPackages(t *testing.T) {
	// pipetest loads every source as package example.com/p: the
	// workflows' Go names differ so that only their name= can clash.
	src := func(fn, name string) string {
		return `package p

import "context"

//resume:workflow name=` + name + `
func ` + fn + `(ctx context.Context) error { return nil }
`
	}
	pkgs := []*model.Package{pipetest.Model(t, src("W1", "orders")), pipetest.Model(t, src("W2", "orders")), pipetest.Model(t, src("W3", "invoices"))}
	errs := diag.New(pkgs[0].Load.Fset, "")
	check.Run([]*check.Check{check.Identities}, pkgs, errs, diag.New(pkgs[0].Load.Fset, ""), false)
	got := errs.Sorted()
	if len(got) != 2 {
		t.Fatalf("refusals %v, want one at each workflow claiming orders", got)
	}
	re := regexp.MustCompile(`^//resume:workflow name=orders: workflow W[12]'s identity orders is also the identity of workflow W[12] \(p.go:5:1\)`)
	for _, d := range got {
		if !re.MatchString(d.Message) {
			t.Errorf("%s, want %s", d, re)
		}
	}
}
