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
