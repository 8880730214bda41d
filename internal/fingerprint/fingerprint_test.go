package fingerprint

import (
	"strings"
	"testing"
)

const base = `package p

// Onboard is a workflow.
//
//resume:workflow
func Onboard(ctx context.Context, in Input) (int, error) {
	n, err := Score(ctx, in) //resume:step retry=3
	if err != nil {
		return 0, err
	}
	return helper(n, []int{1, 2}), nil
}

func (s *Svc) notify(ctx context.Context) error { return s.c.Send(ctx) }

func helper(n int, xs []int) int { return n + len(xs) }
`

func fp(t *testing.T, src string, names ...string) (string, error) {
	t.Helper()
	var decls []Decl
	for _, n := range names {
		decls = append(decls, Decl{File: "p.go", Name: n})
	}
	return Of(func(string) ([]byte, error) { return []byte(src), nil }, decls)
}

// TestFingerprint edits a file as a user would: what gofmt or a comment
// changes keeps the fingerprint, what changes the code or a directive
// changes it.
func TestFingerprint(t *testing.T) {
	want, err := fp(t, base, "Onboard", "Svc.notify")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, old, new string
		same           bool
	}{
		{"comment", "// Onboard is a workflow.", "// Onboard is the onboarding workflow.", true},
		{"comment in body", "\tif err != nil {", "\t// fail fast\n\tif err != nil {", true},
		{"layout", "return helper(n, []int{1, 2}), nil", "return helper(n, []int{\n\t\t1,\n\t\t2,\n\t}), nil", true},
		{"explicit semicolon", "\tif err != nil {\n\t\treturn 0, err\n\t}", "\tif err != nil { return 0, err }", true},
		{"another function", "return n + len(xs)", "return n - len(xs)", true},
		{"a new print", "\treturn helper(", "\tprintln(n)\n\treturn helper(", false},
		{"a new step call", "\treturn helper(", "\tScore(ctx, in)\n\treturn helper(", false},
		{"call-site directive", "//resume:step retry=3", "//resume:step retry=3 once", false},
		{"workflow directive", "//resume:workflow\n", "//resume:workflow name=billing.Onboard\n", false},
		{"a literal", "[]int{1, 2}", "[]int{1, 3}", false},
		{"method body", "return s.c.Send(ctx)", "return s.c.Close(ctx)", false},
	} {
		src := strings.Replace(base, tc.old, tc.new, 1)
		if src == base {
			t.Fatalf("%s: the edit changes nothing", tc.name)
		}
		got, err := fp(t, src, "Onboard", "Svc.notify")
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if (got == want) != tc.same {
			t.Errorf("%s: fingerprint %s, before %s: same = %v, want %v", tc.name, got, want, got == want, tc.same)
		}
	}
}

// TestFingerprintMissing fails when a declaration is gone or renamed, or
// the file does not scan: the source is not what the code was made from.
func TestFingerprintMissing(t *testing.T) {
	if _, err := fp(t, base, "Offboard"); err == nil || !strings.Contains(err.Error(), "declares no function Offboard") {
		t.Errorf("missing declaration: %v", err)
	}
	if _, err := fp(t, base, "notify"); err == nil {
		t.Error("a method found by its name without its receiver's type")
	}
	if _, err := fp(t, base+"\n\"unterminated", "Onboard"); err == nil {
		t.Error("a file that does not scan was fingerprinted")
	}
	if got, err := fp(t, base, "helper"); err != nil || len(got) != 16 {
		t.Errorf("helper: %q, %v", got, err)
	}
}

// TestLines finds each declaration's func line, methods by Type.M.
func TestLines(t *testing.T) {
	lines, err := Lines("p.go", []byte(base))
	if err != nil {
		t.Fatal(err)
	}
	if lines["Onboard"] != 6 || lines["Svc.notify"] != 14 || lines["helper"] != 16 {
		t.Errorf("lines = %v, want Onboard 6, Svc.notify 14, helper 16", lines)
	}
}
