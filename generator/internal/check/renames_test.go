package check_test

import (
	"testing"

	"github.com/resumegen/resumegen/generator/internal/check"
	"github.com/resumegen/resumegen/generator/internal/pipetest"
)

// renamed-from= is refused when it names the step's own name, another
// step's name, or a name another step already claims, at the option
// where it is written: the call-site directive, the declaration's
// directive, or, for a step of another package, the call. Earlier names
// of one's own, one a step of another workflow has, and one claimed once
// per workflow are accepted.
func TestRenames(t *testing.T) {
	pipetest.Want(t, check.Renames, `package p

import (
	"context"

	"github.com/resumegen/resumegen/generator/internal/check/testdata/other"
)

//resume:workflow
func W(ctx context.Context) error {
	// wantnext "^renamed-from=K: K is step K's own name: renamed-from= lists the names the step had before; drop it$"
	_ = K(ctx) //resume:step renamed-from=K
	// wantnext "^renamed-from=K on step L: K is the name of another step of workflow W, whose rows are that step's: drop renamed-from=K, or rename that step too$"
	_ = L(ctx) //resume:step renamed-from=K
	_ = L(ctx) //resume:step name=L2 renamed-from=Old,Older
	// wantnext "^renamed-from=Old on steps L2 and L3 of workflow W: rows named Old can count for one step only; keep it on the step that had the name$"
	_ = L(ctx) //resume:step name=L3 renamed-from=Old
	_ = D(ctx)
	_ = other.Renamed(ctx) // want "^renamed-from=Renamed: Renamed is step Renamed's own name"
	_ = L(ctx) //resume:step name=L4 renamed-from=V1
	return nil
}

//resume:workflow
func V(ctx context.Context) error {
	_ = L(ctx) //resume:step name=V1 renamed-from=Old
	return K(ctx) //resume:step renamed-from=L4
}

// wantnext "^renamed-from=L on step D: L is the name of another step of workflow W"
//resume:step renamed-from=L
func D(ctx context.Context) error { return nil }

//resume:step
func K(ctx context.Context) error { return nil }

//resume:step
func L(ctx context.Context) error { return nil }
`)
}
