package resume

import "testing"

// TestNextRunID pins the ids of a chain: ~2 after the first, then one
// more each time; a ~ that is not a chain's number is part of the base.
func TestNextRunID(t *testing.T) {
	for in, want := range map[string]string{
		"poll":     "poll~2",
		"poll~2":   "poll~3",
		"poll~9":   "poll~10",
		"poll~1":   "poll~1~2",
		"poll~x":   "poll~x~2",
		"poll~02":  "poll~02~2",
		"a~3~7":    "a~3~8",
		"~":        "~~2",
		"poll~-3":  "poll~-3~2",
		"poll~+3":  "poll~+3~2",
		"poll~999": "poll~1000",
	} {
		if got := NextRunID(in); got != want {
			t.Errorf("NextRunID(%q) = %q, want %q", in, got, want)
		}
	}
}
