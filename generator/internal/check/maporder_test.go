package check_test

import (
	"testing"

	"github.com/resumegen/resumegen/generator/internal/check"
	"github.com/resumegen/resumegen/generator/internal/pipetest"
)

// TestMapOrder refuses loops over a map (or a map's iterator) whose
// outcome depends on the order, in the body and in a helper, and keeps
// those whose outcome does not: counting, summing integers, setting or
// deleting the entry of their own key, appending to a slice sorted next,
// sorted keys. A loop holding a step is Placement's.
func TestMapOrder(t *testing.T) {
	pipetest.Want(t, check.MapOrder, `package p

import (
	"context"
	"maps"
	"slices"
	"sort"
)

//resume:workflow
func W(ctx context.Context, m map[string]int) error {
	first := ""
	for k := range m { // want "range over a map in a workflow body iterates in random order"
		first = k
		break
	}
	for k := range maps.Keys(m) { // want "range over maps\\.Keys in a workflow body iterates in random order"
		first += k
	}
	n, sum := 0, 0
	seen := map[string]bool{}
	for k, v := range m {
		n++
		sum += v
		if v > 0 {
			seen[k] = true
		}
		delete(m, k)
	}
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var late []string
	for k := range m { // want "range over a map"
		late = append(late, k)
	}
	_ = len(late)
	slices.Sort(late)
	for _, k := range slices.Sorted(maps.Keys(m)) {
		first += k
	}
	var f float64
	for _, v := range m { // want "range over a map"
		f += float64(v)
	}
	for k := range m {
		if err := Step(ctx, k); err != nil {
			return err
		}
	}
	_, _, _, _ = first, n, sum, f
	return helper(m)
}

func helper(m map[string]int) error {
	for k, v := range m { // want "range over a map in helper, called from workflow W along W → helper → range over a map, iterates in random order"
		if v == 0 {
			return nil
		}
		_ = k
	}
	return nil
}

//resume:step
func Step(ctx context.Context, k string) error { return nil }
`)
}

// TestMapOrderAcrossPackages refuses a range over a map two packages down
// from the body, whose result depends on the order, with the whole path
// and the fix; one that only sums is accepted there too.
func TestMapOrderAcrossPackages(t *testing.T) {
	pipetest.WantModule(t, check.MapOrder, map[string]string{
		"p.go": `package p

import (
	"context"

	"example.com/p/util"
)

//resume:workflow
func Onboard(ctx context.Context, owners map[string]int) error {
	_ = util.First(owners)
	return nil
}
`,
		"util/util.go": `package util

import "example.com/p/util/deep"

// First is the first owner.
func First(m map[string]int) string { return deep.AnyKey(m) }
`,
		"util/deep/deep.go": `package deep

// AnyKey is some key of m, and their sum.
func AnyKey(m map[string]int) string {
	sum := 0
	for _, v := range m {
		sum += v
	}
	for k := range m { // want "^range over a map in deep\\.AnyKey, called from workflow Onboard along Onboard → util\\.First → deep\\.AnyKey → range over a map, iterates in random order, so code that depends on the order does something else when the run resumes: range over sorted keys \\(slices\\.Sorted\\(maps\\.Keys\\(m\\)\\)\\); a loop that only counts, sums integers, or sets or deletes the entry of its own key is fine$"
		return k
	}
	return ""
}
`,
	})
}
