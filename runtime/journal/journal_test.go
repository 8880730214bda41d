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
