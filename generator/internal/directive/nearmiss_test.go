package directive

import (
	"strings"
	"testing"
)

// TestNearMiss tries comments that read as a directive and comments that
// only look close: each near miss names the directive to write, and prose
// or examples in doc comments are no error.
func TestNearMiss(t *testing.T) {
	for _, tc := range []struct {
		text, want string // want: a part of the message, "" for none
	}{
		{"// resume:step once", "write //resume:step once"},
		{"//\tresume:workflow", "write //resume:workflow"},
		{"//  resume:allow nondeterministic", "write //resume:allow nondeterministic"},
		{"/* resume:step */", "block comment"},
		{"/*resume:step tx*/", "write the line comment //resume:step tx"},
		{"// resume: step", "write //resume:step"},
		{"// resume:steps", "write //resume:step"},
		{"// resume:wf", ""}, // no verb it is close to: prose
		{"// resume:stepp", "write //resume:step"},
		{"// resume: the run continues where it stopped", ""},
		{"// resume: steps are journaled", ""},
		{"// resume:123", ""},
		{"// resume:", ""},
		{"//\t//resume:step once", ""}, // an example in a doc comment
		{"// Resume: step 3 fails", ""},
		{"// resumes: the step", ""},
		{"//go:generate go tool resumegen", ""},
		{"//resume:step", ""}, // a directive: parseDirective's business
		{"// resume:workflow name=billing.Onboard", "write //resume:workflow name=billing.Onboard"},
		{"// resume:workflow old-version-of=Onboard", "write //resume:workflow old-version-of=Onboard"},
		{"//\tresume:step renamed-from=Score", "write //resume:step renamed-from=Score"},
	} {
		got := NearMiss(tc.text)
		if tc.want == "" && got != "" || tc.want != "" && !strings.Contains(got, tc.want) {
			t.Errorf("NearMiss(%q) = %q, want containing %q", tc.text, got, tc.want)
		}
	}
}
