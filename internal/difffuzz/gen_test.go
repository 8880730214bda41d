package difffuzz

import (
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestGenerateIsDeterministic(t *testing.T) {
	k := DefaultKnobs().With(Holes...)
	for seed := uint64(1); seed <= 50; seed++ {
		a, b := Generate(seed, k), Generate(seed, k)
		if a.Source != b.Source || !reflect.DeepEqual(a.Intent, b.Intent) || !reflect.DeepEqual(a.Lines, b.Lines) {
			t.Fatalf("seed %d: two programs", seed)
		}
	}
}

// TestKnobsGovernConstructs: over a few hundred seeds every construct
// appears, and a construct turned off never does.
func TestKnobsGovernConstructs(t *testing.T) {
	all := DefaultKnobs().With(Holes...)
	seen := map[Construct]bool{}
	for seed := uint64(1); seed <= 200; seed++ {
		for _, c := range Generate(seed, all).Used {
			seen[c] = true
		}
	}
	for _, c := range append(slices.Clone(Supported), Holes...) {
		if !seen[c] {
			t.Errorf("no program of seeds 1-200 uses %s", c)
		}
	}
	for _, c := range append(slices.Clone(Supported), Holes...) {
		k := all.Without(c)
		for seed := uint64(1); seed <= 20; seed++ {
			if p := Generate(seed, k); slices.Contains(p.Used, c) {
				t.Errorf("seed %d uses %s, which its knobs turn off", seed, c)
				break
			}
		}
	}
}

// TestKnobOffChangesOnlyItsStatements: a program without a construct
// keeps the statements that do not use it (each statement draws from its
// own random stream), so that shrinking keeps a failure's context.
func TestKnobOffChangesOnlyItsStatements(t *testing.T) {
	k := DefaultKnobs()
	for seed := uint64(1); seed <= 40; seed++ {
		full := Generate(seed, k)
		if !slices.Contains(full.Used, Sleep) {
			continue
		}
		less := Generate(seed, k.Without(Sleep))
		kept := 0
		for _, line := range strings.Split(less.Source, "\n") {
			if strings.Contains(line, ":= S") && strings.Contains(full.Source, line) {
				kept++
			}
		}
		if kept == 0 {
			t.Errorf("seed %d: turning sleeps off changed every step call", seed)
		}
	}
}

func TestShrinksAreSmaller(t *testing.T) {
	k := DefaultKnobs()
	for _, s := range k.Shrinks() {
		if len(s.Use) > len(k.Use) || s.Size > k.Size || s.Depth > k.Depth || reflect.DeepEqual(s, k) {
			t.Errorf("shrink %s of %s is not smaller", s, k)
		}
	}
}
