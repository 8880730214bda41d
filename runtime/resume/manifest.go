package resume

import "strings"

// ManifestChange is one line of a step-by-step diff between two versions'
// manifests: Op is " " (the line is in both), "-" (only in the old
// version) or "+" (only in the new one); Step is the manifest line: a
// step, or a field of the JSON shape of what a step or the run journals
// (see [WorkflowDef.Manifest]).
type ManifestChange struct {
	Op   string `json:"op"`
	Step string `json:"step"`
}

// String renders the change as a diff line. A step line gets its mark in
// front, "+ Charge example.com/shop.Charge func(...) error once"; a shape
// line gets it before the field, after what owns it, so that the diff
// names the field: "ValidateOrder: result Priced: + Cents int". An
// unchanged line is marked by a space.
func (c ManifestChange) String() string {
	if i := strings.LastIndex(c.Step, ": "); i >= 0 {
		return c.Step[:i+2] + c.Op + " " + c.Step[i+2:]
	}
	return c.Op + " " + c.Step
}

// DiffManifests diffs two manifests (one step a line, as
// [WorkflowDef.Manifest] renders them) in order, with a longest common
// subsequence, so an inserted, removed, changed or moved step shows where it
// is.
func DiffManifests(old, new string) []ManifestChange {
	a, b := manifestLines(old), manifestLines(new)
	// lcs[i][j] is the LCS length of a[i:] and b[j:].
	lcs := make([][]int, len(a)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	out := []ManifestChange{}
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case i < len(a) && j < len(b) && a[i] == b[j]:
			out = append(out, ManifestChange{" ", a[i]})
			i, j = i+1, j+1
		case i < len(a) && (j == len(b) || lcs[i+1][j] >= lcs[i][j+1]):
			out = append(out, ManifestChange{"-", a[i]})
			i++
		default:
			out = append(out, ManifestChange{"+", b[j]})
			j++
		}
	}
	return out
}

func manifestLines(m string) []string {
	var out []string
	for _, l := range strings.Split(m, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}
