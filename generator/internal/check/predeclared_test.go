package check_test

import (
	"testing"

	"github.com/resumegen/resumegen/generator/internal/check"
	"github.com/resumegen/resumegen/generator/internal/pipetest"
)

// A package-level declaration shadowing a predeclared identifier the
// generated code names is refused at each workflow that needs it: any,
// error and nil always.
func TestPredeclaredAlways(t *testing.T) {
	pipetest.Want(t, check.Predeclared, `package p

import "context"

var nil = 0

type error struct{}

func any() {}

//resume:workflow
func W(ctx context.Context) (int, error) { // want "^workflow W: the generated code needs the predeclared any, which the package-level any at p.go:9:6 shadows; rename that declaration$" "^workflow W: the generated code needs the predeclared error, which the package-level error at p.go:7:6 shadows" "^workflow W: the generated code needs the predeclared nil, which the package-level nil at p.go:5:5 shadows"
	return 0, error{}
}
`)
}

// The types the generated code prints (here a step of another package
// whose signature names the predeclared float32 and uint32) and the
// conversion a key needs (int64, uint64) are refused when shadowed. An
// alias of the identical type, a predeclared name only the user's code
// uses, the package's own types that happen to be named like predeclared
// ones (the generated code means them too), a local shadow, and a key
// that needs no conversion are accepted.
func TestPredeclaredTypes(t *testing.T) {
	pipetest.Want(t, check.Predeclared, `package p

import (
	"context"
	"math"
)

type any = interface{}

type int64 = int

type uint64 struct{}

type float32 int

type uint32 = uint16

var rune = 'x'

type ID string

type Box struct{}

//resume:step
func (b *Box) Put(ctx context.Context, xs []float32, m map[uint32]any) error { return nil }

//resume:step
func Gen[T any](ctx context.Context, t T) error { return nil }

//resume:workflow
func W(ctx context.Context, n int, id ID, u uint16) error { // want "^workflow W: the generated code needs the predeclared int64, which the package-level int64 at p.go:10:6 shadows; rename that declaration$" "^workflow W: the generated code needs the predeclared uint64, which the package-level uint64 at p.go:12:6 shadows"
	_ = S(ctx) //resume:step key=n
	_ = S(ctx) //resume:step name=S2 key=id
	_ = S(ctx) //resume:step name=S3 key=u
	return nil
}

//resume:workflow
func Printed(ctx context.Context) error { // want "^workflow Printed: the generated code needs the predeclared float32, which the package-level float32 at p.go:14:6 shadows" "^workflow Printed: the generated code needs the predeclared uint32, which the package-level uint32 at p.go:16:6 shadows"
	_ = math.Float32bits(1) //resume:step name=Bits
	return nil
}

//resume:workflow
func Fine(ctx context.Context, s []int32, f float32) error {
	_ = rune
	var string = 1
	_ = string
	b := &Box{}
	_ = b.Put(ctx, nil, nil)
	_ = Gen[[]float32](ctx, nil)
	return S(ctx) //resume:step key="k"
}

//resume:step
func S(ctx context.Context) error { return nil }
`)
}
