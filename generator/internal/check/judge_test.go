package check

import (
	"go/token"
	"go/types"
	"testing"
)

// TestJudge checks the rule for functions of other modules: a listed one
// as listed, an unlisted package-level function of no parameters that
// returns a value refused as probably non-deterministic, any other (with
// parameters, returning only an error, a method) taken for a function of
// its arguments; and the standard library by its table alone.
func TestJudge(t *testing.T) {
	str, errT := types.Typ[types.String], types.Universe.Lookup("error").Type()
	fn := func(path, name string, params, results []types.Type) *types.Func {
		pkg := types.NewPackage(path, path[len(path)-1:])
		vars := func(ts []types.Type) *types.Tuple {
			var vs []*types.Var
			for _, t := range ts {
				vs = append(vs, types.NewParam(token.NoPos, pkg, "", t))
			}
			return types.NewTuple(vs...)
		}
		return types.NewFunc(token.NoPos, pkg, name, types.NewSignatureType(nil, nil, nil, vars(params), vars(results), false))
	}
	for _, tc := range []struct {
		fn   *types.Func
		want nondetKind
	}{
		{fn("github.com/google/uuid", "New", nil, []types.Type{str}), nondetValue},
		{fn("github.com/google/uuid", "Parse", []types.Type{str}, []types.Type{str, errT}), nondetNone},
		{fn("example.org/ids", "Next", nil, []types.Type{str}), nondetGuess},
		{fn("example.org/ids", "Next", nil, []types.Type{str, errT}), nondetGuess},
		{fn("example.org/ids", "Flush", nil, []types.Type{errT}), nondetNone},
		{fn("example.org/ids", "Format", []types.Type{str}, []types.Type{str}), nondetNone},
		{fn("strings", "Clone", []types.Type{str}, []types.Type{str}), nondetNone},
		{fn("os", "Getwd", nil, []types.Type{str, errT}), nondetEnv},
		{fn("net/http", "Get", []types.Type{str}, []types.Type{str, errT}), nondetNet},
		{fn("crypto/rand", "Text", nil, []types.Type{str}), nondetValue},
		{fn("runtime", "GC", nil, nil), nondetNone},
	} {
		if got := judge(tc.fn); got != tc.want {
			t.Errorf("judge(%s.%s%s) = %d, want %d", tc.fn.Pkg().Path(), tc.fn.Name(), tc.fn.Type(), got, tc.want)
		}
	}
}
