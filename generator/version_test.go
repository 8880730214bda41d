package generator

import (
	"crypto/sha256"
	"encoding/hex"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// versionBase is the workflow the version variants edit.
const versionBase = `package p

import "context"

//resume:workflow
func W(ctx context.Context, in int) (int, error) {
	a, err := A(ctx, in)
	if err != nil {
		return 0, err
	}
	return a, B(ctx, a)
}

//resume:step
func A(ctx context.Context, n int) (int, error) { return n, nil }

//resume:step
func B(ctx context.Context, n int) error { return nil }

//resume:step
func C(ctx context.Context) error { return nil }
`

// TestVersion proves which edits move a workflow's version: changes to the
// step signature list do, everything else does not.
func TestVersion(t *testing.T) {
	checkVersions(t, "version", versionBase, []versionVariant{
		{"insert step", [][2]string{{"\treturn a, B(ctx, a)", "\tif err := C(ctx); err != nil {\n\t\treturn 0, err\n\t}\n\treturn a, B(ctx, a)"}}, true},
		{"reorder steps", [][2]string{{"\ta, err := A(ctx, in)\n", "\tif err := B(ctx, in); err != nil {\n\t\treturn 0, err\n\t}\n\ta, err := A(ctx, in)\n"}, {"return a, B(ctx, a)", "return a, nil"}}, true},
		{"parameter type", [][2]string{{"func B(ctx context.Context, n int) error", "func B(ctx context.Context, n int64) error"}, {"B(ctx, a)", "B(ctx, int64(a))"}}, true},
		{"result type", [][2]string{{"func A(ctx context.Context, n int) (int, error) { return n, nil }", "func A(ctx context.Context, n int) (int32, error) { return int32(n), nil }"}, {"return a, B(ctx, a)", "return int(a), B(ctx, int(a))"}}, true},
		{"policy", [][2]string{{"//resume:step\nfunc B", "//resume:step once\nfunc B"}}, true},
		{"step name", [][2]string{{"//resume:step\nfunc B", "//resume:step name=Bee\nfunc B"}}, true},
		{"rename local variable", [][2]string{{"a, err := A(ctx, in)", "score, err := A(ctx, in)"}, {"return a, B(ctx, a)", "return score, B(ctx, score)"}}, false},
		{"rename step parameter", [][2]string{{"func B(ctx context.Context, n int) error", "func B(ctx context.Context, count int) error"}}, false},
		{"edit comments", [][2]string{{"//resume:workflow\n", "// W does A then B.\n//\n//resume:workflow\n"}, {"\treturn a, B", "\t// B must see a.\n\treturn a, B"}}, false},
		{"code between steps", [][2]string{{"\treturn a, B(ctx, a)", "\ta = a*2 + 1\n\tfor i := 0; i < 3; i++ {\n\t\ta += i\n\t}\n\treturn a, B(ctx, a)"}}, false},
		{"retry tuning", [][2]string{{"//resume:step\nfunc B", "//resume:step retry=7 backoff=1s..1m timeout=5s\nfunc B"}}, false},
		{"workflow name=", [][2]string{{"//resume:workflow\n", "//resume:workflow name=billing.W\n"}}, false},
		{"workflow queue=", [][2]string{{"//resume:workflow\n", "//resume:workflow queue=emails\n"}}, false},
		{"renamed-from on the declaration", [][2]string{{"//resume:step\nfunc B", "//resume:step renamed-from=OldB\nfunc B"}}, false},
		{"renamed-from at the call site", [][2]string{{"a, err := A(ctx, in)", "a, err := A(ctx, in) //resume:step renamed-from=Score,Rate"}}, false},
	})
}

// versionVariant is an edit of a base workflow and whether it must move
// the version.
type versionVariant struct {
	name    string
	edit    [][2]string // replacements applied to the base source
	changes bool
}

// checkVersions generates the base and each variant, each its own package
// under dir, and compares each variant's version with the base's.
func checkVersions(t *testing.T, dir, base string, variants []versionVariant) {
	t.Helper()
	files := map[string]string{dir + "/base/p.go": base}
	for i, v := range variants {
		src := base
		for _, r := range v.edit {
			if !strings.Contains(src, r[0]) {
				t.Fatalf("%s: %q not in base", v.name, r[0])
			}
			src = strings.ReplaceAll(src, r[0], r[1])
		}
		files[dir+"/v"+string(rune('a'+i))+"/p.go"] = src
	}
	writeFiles(t, testModule, files)
	res, err := Generate(Config{Dir: testModule, Patterns: []string{"./" + dir + "/..."}, Env: testEnv})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range res.Diagnostics {
		t.Errorf("unexpected diagnostic: %s", d)
	}
	// Each variant is its own package, so its path is in every callee and
	// type: hash the canonical text with the path taken out, which is what
	// the version of the same package would be.
	versions := map[string]string{} // directory → version
	canons := map[string]string{}
	for _, w := range res.Workflows {
		canon := strings.ReplaceAll(w.Canonical, w.Package, "example.com/p")
		versions[filepath.Base(w.Package)] = hashText(canon)
		canons[filepath.Base(w.Package)] = canon
	}
	baseVersion := versions["base"]
	if len(baseVersion) != 16 {
		t.Fatalf("base version %q is not 16 hex digits", baseVersion)
	}
	for i, v := range variants {
		dir := "v" + string(rune('a'+i))
		got := versions[dir]
		if got == "" {
			t.Errorf("%s: no workflow generated", v.name)
			continue
		}
		if changed := got != baseVersion; changed != v.changes {
			t.Errorf("%s: version %s, base %s: changed = %v, want %v\ncanonical text:\n%s\nbase:\n%s", v.name, got, baseVersion, changed, v.changes, canons[dir], canons["base"])
		}
	}
}

func hashText(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])[:16]
}

// TestCanonicalSteps pins the text the version hashes.
func TestCanonicalSteps(t *testing.T) {
	dir := filepath.Join(testModule, "canonical")
	writeFiles(t, dir, map[string]string{"p.go": versionBase})
	res := generateIn(t, dir)
	if len(res.Workflows) != 1 {
		t.Fatalf("got %d workflows, want 1", len(res.Workflows))
	}
	w := res.Workflows[0]
	if w.Version != hashText(w.Canonical) {
		t.Errorf("version %s is not the hash of the canonical step list", w.Version)
	}
	got := w.Canonical
	want := "workflow\tfunc(context.Context, int) (int, error)\n" +
		"A\texample.com/golden/canonical.A\tfunc(context.Context, int) (int, error)\tdefault\n" +
		"B\texample.com/golden/canonical.B\tfunc(context.Context, int) error\tdefault\n"
	if got != want {
		t.Errorf("canonical step list:\n%q\nwant\n%q", got, want)
	}
}

// shapeBase journals structs: the run's input Order, its output Receipt,
// the step result Priced (with a nested, recursive Line and an opaque
// Stamp) and the pointee of Fetch's *Info.
const shapeBase = `package p

import (
	"context"
	"strconv"
)

type Order struct {
	ID    string
	Lines []Line
}

type Receipt struct {
	Total int
}

type Priced struct {
	Amount int    ` + "`json:\"amount\"`" + `
	Note   string ` + "`json:\"note,omitempty\"`" + `
	Lines  []Line
	At     Stamp
	Meta
}

type Meta struct{ Source string }

type Line struct {
	SKU  string
	Qty  int
	Sub  *Line
}

// Stamp decides its own JSON.
type Stamp struct{ unix int64 }

func (s Stamp) MarshalJSON() ([]byte, error) { return []byte(strconv.FormatInt(s.unix, 10)), nil }
func (s *Stamp) UnmarshalJSON(b []byte) error {
	n, err := strconv.ParseInt(string(b), 10, 64)
	s.unix = n
	return err
}

type Info struct {
	Email string
}

//resume:workflow
func W(ctx context.Context, o Order) (Receipt, error) {
	p, err := Price(ctx, o)
	if err != nil {
		return Receipt{}, err
	}
	var info Info
	if err := Fetch(ctx, o.ID, &info); err != nil {
		return Receipt{}, err
	}
	return Receipt{Total: p.Amount}, nil
}

//resume:step
func Price(ctx context.Context, o Order) (Priced, error) { return Priced{}, nil }

//resume:step
func Fetch(ctx context.Context, id string, info *Info) error { return nil }
`

// TestVersionShape proves that the JSON shape of what is journaled (the
// run's input and output, step results, pointees) is in the version: a
// field added, removed, renamed, retagged or retyped at any depth moves
// it; an edit JSON does not see keeps it. (A field JSON would drop, an
// unexported or json:"-" one, is refused: see testdata/golden/err_lossless.)
func TestVersionShape(t *testing.T) {
	const amount = "\tAmount int    `json:\"amount\"`\n"
	checkVersions(t, "shape", shapeBase, []versionVariant{
		{"result: add field", [][2]string{{amount, amount + "\tCents int\n"}}, true},
		{"result: remove field", [][2]string{{"\tNote   string `json:\"note,omitempty\"`\n", ""}}, true},
		{"result: rename untagged field", [][2]string{{"\tLines  []Line\n", "\tItems  []Line\n"}}, true},
		{"result: retag field", [][2]string{{"`json:\"amount\"`", "`json:\"total\"`"}}, true},
		{"result: add omitempty", [][2]string{{"`json:\"amount\"`", "`json:\"amount,omitempty\"`"}}, true},
		{"result: add string option", [][2]string{{"`json:\"amount\"`", "`json:\"amount,string\"`"}}, true},
		{"result: retype field", [][2]string{{"\tAmount int ", "\tAmount int64 "}, {"p.Amount}", "int(p.Amount)}"}}, true},
		{"result: nested type field added", [][2]string{{"\tQty  int\n", "\tQty  int\n\tUnit string\n"}}, true},
		{"result: nested type field retyped", [][2]string{{"\tQty  int\n", "\tQty  float64\n"}}, true},
		{"result: embedded struct field added", [][2]string{{"type Meta struct{ Source string }", "type Meta struct{ Source, Region string }"}}, true},
		{"result: embedded struct tagged", [][2]string{{"\tMeta\n", "\tMeta `json:\"meta\"`\n"}}, true},
		{"input: add field", [][2]string{{"\tID    string\n", "\tID    string\n\tCoupon string\n"}}, true},
		{"output: add field", [][2]string{{"\tTotal int\n", "\tTotal int\n\tTax int\n"}}, true},
		{"output: retype field", [][2]string{{"\tTotal int\n", "\tTotal int64\n"}, {"Receipt{Total: p.Amount}", "Receipt{Total: int64(p.Amount)}"}}, true},
		{"pointee: add field", [][2]string{{"\tEmail string\n", "\tEmail string\n\tPhone string\n"}}, true},
		{"pointee: rename field", [][2]string{{"\tEmail string\n", "\tMail string\n"}}, true},

		{"result: reorder fields", [][2]string{{amount, ""}, {"\tLines  []Line\n", "\tLines  []Line\n" + amount}}, false},
		{"result: rename tagged Go field", [][2]string{{"\tAmount int ", "\tSum int "}, {"p.Amount}", "p.Sum}"}}, false},
		{"result: add method", [][2]string{{"type Meta struct{ Source string }", "type Meta struct{ Source string }\n\nfunc (m Meta) String() string { return m.Source }"}}, false},
		{"result: field comment", [][2]string{{"\tQty  int\n", "\tQty  int // how many\n"}}, false},
		{"opaque: change its fields", [][2]string{{"type Stamp struct{ unix int64 }", "type Stamp struct {\n\tunix int64\n\tZone string\n}"}}, false},
		{"pointee: rename parameter", [][2]string{{"id string, info *Info) error", "id string, dst *Info) error"}}, false},
	})
}

// TestJSONShape pins the lines of a shape: keys, options, promotion of
// embedded fields and their dominance, opaque and recursive types.
func TestJSONShape(t *testing.T) {
	dir := filepath.Join(testModule, "jsonshape")
	writeFiles(t, dir, map[string]string{"p.go": shapeBase + `
type Dup struct {
	A
	B
	X string ` + "`json:\"x\"`" + `
}

type A struct{ Y, Z, W string }
type B struct {
	Y string
	Z string ` + "`json:\"Z\"`" + `
	W string ` + "`json:\"W\"`" + `
}

type Tagged struct{ W string }

//resume:workflow
func V(ctx context.Context, d Dup) error { return nil }
`})
	res := generateIn(t, dir)
	got := map[string][]string{}
	for _, w := range res.Workflows {
		got[w.Name] = w.Shape
		for _, s := range w.Steps {
			got[w.Name+"."+s.Name] = s.Shape
		}
	}
	want := map[string][]string{
		"W": {
			"input arg 2 Order: ID string",
			"input arg 2 Order: Lines []Line",
			"input arg 2 Line: Qty int",
			"input arg 2 Line: SKU string",
			"input arg 2 Line: Sub *Line",
			"output Receipt: Total int",
		},
		"W.Price": {
			"result Priced: At Stamp",
			"result Priced: Lines []Line",
			"result Priced: Source string",
			"result Priced: amount int",
			"result Priced: note string omitempty",
			"result Line: Qty int",
			"result Line: SKU string",
			"result Line: Sub *Line",
		},
		"W.Fetch": {"out arg 3 Info: Email string"},
		// Y ties at depth 1 and is dropped; Z and W: the tagged one wins.
		"V": {
			"input arg 2 Dup: W string",
			"input arg 2 Dup: Z string",
			"input arg 2 Dup: x string",
		},
	}
	for k, w := range want {
		if !reflect.DeepEqual(got[k], w) {
			t.Errorf("%s shape:\n%s\nwant\n%s", k, strings.Join(got[k], "\n"), strings.Join(w, "\n"))
		}
	}
}
