package resume

import (
	"reflect"
	"testing"
)

// shapedDef is a workflow whose manifest has shape lines for its input,
// a step's result and another step's pointee.
func shapedDef(priced, info []string) *WorkflowDef {
	return &WorkflowDef{
		Shape: []string{"input arg 2 Order: ID string"},
		Steps: []StepDef{
			{Name: "ValidateOrder", Callee: "example.com/shop.ValidateOrder", Signature: "func(context.Context, Order) (Priced, error)", Shape: priced},
			{Name: "Fetch", Callee: "example.com/shop.Fetch", Signature: "func(context.Context, string, *Info) error", Policy: PolicyOnce, Shape: info},
		},
	}
}

func TestManifestRendersShapes(t *testing.T) {
	got := shapedDef([]string{"result Priced: Total int"}, []string{"out arg 3 Info: Email string"}).Manifest()
	want := "input arg 2 Order: ID string\n" +
		"ValidateOrder example.com/shop.ValidateOrder func(context.Context, Order) (Priced, error) default\n" +
		"ValidateOrder: result Priced: Total int\n" +
		"Fetch example.com/shop.Fetch func(context.Context, string, *Info) error once\n" +
		"Fetch: out arg 3 Info: Email string\n"
	if got != want {
		t.Errorf("manifest:\n%s\nwant\n%s", got, want)
	}
}

// TestDiffManifestsFields proves that a diff names the field that changed,
// with its step and type, and leaves the steps themselves unchanged.
func TestDiffManifestsFields(t *testing.T) {
	old := shapedDef([]string{"result Priced: Total int"}, []string{"out arg 3 Info: Email string"}).Manifest()
	for _, tc := range []struct {
		name        string
		priced      []string
		info        []string
		wantChanged []string
	}{
		{"field added", []string{"result Priced: Cents int", "result Priced: Total int"}, []string{"out arg 3 Info: Email string"},
			[]string{"ValidateOrder: result Priced: + Cents int"}},
		{"field removed", nil, []string{"out arg 3 Info: Email string"},
			[]string{"ValidateOrder: result Priced: - Total int"}},
		{"field retyped", []string{"result Priced: Total int64"}, []string{"out arg 3 Info: Email string"},
			[]string{"ValidateOrder: result Priced: - Total int", "ValidateOrder: result Priced: + Total int64"}},
		{"pointee field renamed", []string{"result Priced: Total int"}, []string{"out arg 3 Info: Mail string"},
			[]string{"Fetch: out arg 3 Info: - Email string", "Fetch: out arg 3 Info: + Mail string"}},
		{"nothing", []string{"result Priced: Total int"}, []string{"out arg 3 Info: Email string"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var changed []string
			steps := 0
			for _, c := range DiffManifests(old, shapedDef(tc.priced, tc.info).Manifest()) {
				if c.Op != " " {
					changed = append(changed, c.String())
				} else if c.String() == "  "+c.Step {
					steps++ // an unchanged step line
				}
			}
			if !reflect.DeepEqual(changed, tc.wantChanged) {
				t.Errorf("changed lines %q, want %q", changed, tc.wantChanged)
			}
			if steps != 2 {
				t.Errorf("%d unchanged step lines, want both steps unchanged", steps)
			}
		})
	}
}

// TestDiffManifestsOldWithoutShapes diffs a manifest stored before shapes
// were recorded: the steps match, the shapes show as added.
func TestDiffManifestsOldWithoutShapes(t *testing.T) {
	old := shapedDef(nil, nil)
	old.Shape = nil
	var got []string
	for _, c := range DiffManifests(old.Manifest(), shapedDef([]string{"result Priced: Total int"}, nil).Manifest()) {
		got = append(got, c.String())
	}
	want := []string{
		"input arg 2 Order: + ID string",
		"  ValidateOrder example.com/shop.ValidateOrder func(context.Context, Order) (Priced, error) default",
		"ValidateOrder: result Priced: + Total int",
		"  Fetch example.com/shop.Fetch func(context.Context, string, *Info) error once",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("diff:\n%q\nwant\n%q", got, want)
	}
}
