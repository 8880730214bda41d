package journal

import "testing"

func TestStepNameAndRenameKey(t *testing.T) {
	renames := map[string]string{"Score": "Rate", "A": "B"}
	for _, c := range []struct{ key, name, renamed string }{
		{"Score", "Score", "Rate"},
		{"Score#3", "Score", "Rate#3"},
		{"Score[cust-1]", "Score", "Rate[cust-1]"},
		{"Score[a#2]", "Score", "Rate[a#2]"},   // '#' inside a key= value
		{"Score[x[1]]", "Score", "Rate[x[1]]"}, // brackets inside a key= value
		{"Scored", "Scored", "Scored"},         // a name that only starts like one renamed
		{"Scored#2", "Scored", "Scored#2"},
		{"AB[k]", "AB", "AB[k]"},
		{"A", "A", "B"},
		{"pkg.Step-1/x#12", "pkg.Step-1/x", "pkg.Step-1/x#12"},
		{"", "", ""},
	} {
		if got := StepName(c.key); got != c.name {
			t.Errorf("StepName(%q) = %q, want %q", c.key, got, c.name)
		}
		if got := RenameKey(c.key, renames); got != c.renamed {
			t.Errorf("RenameKey(%q) = %q, want %q", c.key, got, c.renamed)
		}
	}
	if got := RenameKey("Score#2", nil); got != "Score#2" {
		t.Errorf("RenameKey with no renames = %q", got)
	}
}

// OriginKey follows a key back through the renames of a run's moves: a
// renamed step keeps the key it had when the run could first execute it,
// through chains, swaps and relabelling moves; a step added under a name
// that a move renamed away gets an origin of its own, so no two steps of
// a run share one.
func TestOriginKey(t *testing.T) {
	mv := func(renames map[string]string) Move { return Move{Renames: renames} }
	chain := []Move{
		mv(map[string]string{"Charge": "Pay"}), // v1 -> v2: Charge renamed Pay
		mv(nil),                                // v2 -> v3: no rename
		mv(map[string]string{"Pay": "Bill"}),   // v3 -> v4: Pay renamed Bill
	}
	swap := []Move{mv(map[string]string{"A": "B", "B": "A"})}
	reused := []Move{
		mv(map[string]string{"Score": "Rate"}), // Score renamed Rate
		mv(nil),                                // a later version adds a new Score
	}
	merged := []Move{mv(map[string]string{"Tax": "Price", "Cost": "Price"})}
	for _, c := range []struct {
		moves     []Move
		key, want string
	}{
		{nil, "Charge#2", "Charge#2"},
		{chain, "Bill", "Charge"},
		{chain, "Bill#3", "Charge#3"},
		{chain, "Bill[inv-7#2]", "Charge[inv-7#2]"},
		{chain, "Pay", "Pay@3"},       // a new Pay, after the third move renamed Pay away
		{chain, "Charge", "Charge@1"}, // a new Charge, after the first
		{chain, "Ship#2", "Ship#2"},   // never renamed
		{swap, "A#2", "B#2"},
		{swap, "B", "A"},
		{reused, "Rate", "Score"},
		{reused, "Score", "Score@1"},
		{merged, "Price", "Cost"},
	} {
		if got := OriginKey(c.moves, c.key); got != c.want {
			t.Errorf("OriginKey(%v, %q) = %q, want %q", c.moves, c.key, got, c.want)
		}
	}
	// Within one version, distinct step names have distinct origins.
	seen := map[string]string{}
	for _, name := range []string{"Bill", "Pay", "Charge", "Ship"} {
		o := OriginKey(chain, name)
		if prev, ok := seen[o]; ok {
			t.Errorf("steps %s and %s share origin %s", prev, name, o)
		}
		seen[o] = name
	}
}
