package deploy

import (
	"encoding/json"
	"maps"
	"strings"
	"testing"
)

func step(name string) Step {
	return Step{Name: name, Callee: "example.com/shop." + name, Signature: "func(context.Context, Order) (int, error)",
		Policy: "default", JSON: "int", Shape: []string{"result int"}}
}

func def(version string, steps ...Step) Definition {
	return Definition{Workflow: "shop.Checkout", Version: version,
		Shape: []string{"input arg 1 Order: ID string", "output Receipt: Total int"}, Steps: steps}
}

// edit returns d with step i changed by f, under version v.
func edit(d Definition, v string, i int, f func(*Step)) Definition {
	d.Version = v
	d.Steps = append([]Step(nil), d.Steps...)
	f(&d.Steps[i])
	return d
}

func TestDecide(t *testing.T) {
	v1 := def("V1", step("Validate"), step("Score"), step("Charge"))
	v2 := def("V2", step("Validate"), step("Score"), step("Charge"), step("Notify")) // appended
	keyed := edit(v1, "VK", 1, func(s *Step) { s.Key = "o.Owner" })

	for _, tc := range []struct {
		name     string
		from, to Definition
		keys     []string
		cont     bool
		why      string // a substring of Why
		renames  map[string]string
	}{
		{"empty journal", v1, v2, nil, true, "no step journaled", nil},
		{"empty journal, a changed middle step", v1, edit(v1, "V3", 1, func(s *Step) { s.Policy = "once" }), nil, true, "no step journaled", nil},
		{"appended step", v1, v2, []string{"Validate", "Score", "Charge"}, true, "steps Validate, Score, Charge journaled: an unchanged prefix of version V2", nil},
		{"one step journaled", v1, v2, []string{"Validate"}, true, "step Validate journaled: an unchanged prefix of version V2", nil},
		{"output changed", v1, func() Definition {
			d := v2
			d.Shape = []string{"input arg 1 Order: ID string", "output Receipt: Total int64"}
			return d
		}(),
			[]string{"Validate"}, true, "unchanged prefix", nil},
		{"input changed", v1, func() Definition {
			d := v2
			d.Shape = []string{"input arg 1 Order: ID int", "output Receipt: Total int"}
			return d
		}(),
			nil, false, "the run's input changed: - input arg 1 Order: ID string, + input arg 1 Order: ID int", nil},
		{"input field added", v1, func() Definition {
			d := v2
			d.Shape = append([]string{"input arg 1 Order: Coupon string"}, v1.Shape...)
			return d
		}(),
			[]string{"Validate"}, false, "+ input arg 1 Order: Coupon string", nil},

		// A middle step changed: the run stops only if it journaled it or
		// a step after it.
		{"middle step changed, journaled before it", v1, edit(v1, "V3", 1, func(s *Step) { s.Signature = "func(context.Context, Order) (string, error)" }),
			[]string{"Validate"}, true, "step Validate journaled", nil},
		{"middle step changed, journaled it", v1, edit(v1, "V3", 1, func(s *Step) { s.Signature = "func(context.Context, Order) (string, error)" }),
			[]string{"Validate", "Score"}, false, "step 2 Score: signature func(context.Context, Order) (int, error) -> func(context.Context, Order) (string, error)", nil},
		{"middle step changed, journaled past it", v1, edit(v1, "V3", 1, func(s *Step) { s.Signature = "func(context.Context, Order) (string, error)" }),
			[]string{"Charge"}, false, "step 2 Score: signature", nil},
		{"policy", v1, edit(v1, "V3", 0, func(s *Step) { s.Policy = "once" }), []string{"Validate"}, false, "step 1 Validate: policy default -> once", nil},
		{"callee", v1, edit(v1, "V3", 0, func(s *Step) { s.Callee = "example.com/other.Validate" }), []string{"Validate"}, false,
			"step 1 Validate: callee example.com/shop.Validate -> example.com/other.Validate", nil},
		{"key added", v1, keyed, []string{"Score#2"}, false, "step 2 Score: key none -> o.Owner", nil},
		{"key removed", keyed, v1, []string{"Score[alice]"}, false, "step 2 Score: key o.Owner -> none", nil},
		{"keyed rows continue", keyed, func() Definition { d := keyed; d.Version = "VK2"; d.Steps = append(d.Steps, step("Notify")); return d }(),
			[]string{"Validate", "Score[alice]", "Score[bob]"}, true, "steps Validate, Score journaled", nil},
		{"occurrence rows continue", v1, v2, []string{"Validate", "Score", "Score#2", "Score#3"}, true, "steps Validate, Score journaled", nil},
		{"journaled type", v1, edit(v1, "V3", 0, func(s *Step) { s.JSON = "int64" }), []string{"Validate"}, false, "step 1 Validate: journaled type int -> int64", nil},
		{"journaled shape", v1, edit(v1, "V3", 0, func(s *Step) { s.Shape = []string{"result int64"} }), []string{"Validate"}, false,
			"step 1 Validate: journaled shape - result int, + result int64", nil},
		{"child", v1, edit(v1, "V3", 0, func(s *Step) { s.Child = true }), []string{"Validate"}, false, "step 1 Validate: a step call -> a child workflow call", nil},
		{"inserted step", v1, def("V3", step("Validate"), step("Audit"), step("Score"), step("Charge")), []string{"Score"}, false,
			"step 2 Score: name Score -> Audit; callee example.com/shop.Score -> example.com/shop.Audit", nil},
		{"removed steps", v1, def("V3", step("Validate")), []string{"Charge"}, false, "step 2 Score: version V3 has 1 steps, and the run journaled up to step 3", nil},
		{"removed step after the journaled ones", v1, def("V3", step("Validate"), step("Score")), []string{"Score"}, true, "unchanged prefix of version V3", nil},
		{"unknown journaled name", v1, v2, []string{"Validate", "Refund#2"}, false, "step Refund journaled by the run is not a step of version V1", nil},
		{"renamed without renamed-from", v1, edit(v1, "V3", 1, func(s *Step) { s.Name, s.Callee = "Rate", "example.com/shop.Rate" }), []string{"Charge"}, false,
			"step 2 Score: name Score -> Rate; callee example.com/shop.Score -> example.com/shop.Rate; if Rate is Score renamed, add renamed-from=Score to it", nil},
		{"renamed at the declaration", v1, edit(v1, "V3", 1, func(s *Step) { s.Name, s.Callee, s.RenamedFrom = "Rate", "example.com/shop.Rate", []string{"Score"} }),
			[]string{"Validate", "Score", "Score#2", "Charge"}, true, "steps Validate, Rate, Charge journaled: an unchanged prefix of version V3 (renamed Score -> Rate)",
			map[string]string{"Score": "Rate"}},
		{"renamed at the call site", v1, edit(v1, "V3", 1, func(s *Step) { s.Name, s.RenamedFrom = "Rate", []string{"Score"} }),
			[]string{"Score[k]"}, true, "renamed Score -> Rate", map[string]string{"Score": "Rate"}},
		{"renamed, other callee", v1, edit(v1, "V3", 1, func(s *Step) { s.Name, s.Callee, s.RenamedFrom = "Rate", "example.com/shop.Other", []string{"Score"} }),
			[]string{"Score"}, false, "step 2 Score: callee example.com/shop.Score -> example.com/shop.Other", nil},
		{"renamed, not journaled", v1, edit(v1, "V3", 2, func(s *Step) { s.Name, s.Callee, s.RenamedFrom = "Pay", "example.com/shop.Pay", []string{"Charge"} }),
			[]string{"Validate"}, true, "step Validate journaled: an unchanged prefix of version V3 (renamed Charge -> Pay)", map[string]string{"Charge": "Pay"}},
		{"renamed, nothing journaled", v1, edit(v1, "V3", 2, func(s *Step) { s.Name, s.Callee, s.RenamedFrom = "Pay", "example.com/shop.Pay", []string{"Charge"} }),
			nil, true, "no step journaled (renamed Charge -> Pay)", map[string]string{"Charge": "Pay"}},
		{"renamed-from naming a name the version still has", v1, def("V3", step("Validate"), step("Score"), step("Charge"),
			Step{Name: "Bill", Callee: "example.com/shop.Bill", Signature: step("x").Signature, Policy: "default", JSON: "int", Shape: []string{"result int"}, RenamedFrom: []string{"Refund", "Charge"}}),
			[]string{"Validate"}, true, "step Validate journaled: an unchanged prefix of version V3", nil},
		{"rows of an earlier name of the run's own version", edit(v1, "V1b", 1, func(s *Step) { s.Name, s.Callee, s.RenamedFrom = "Rate", "example.com/shop.Rate", []string{"Score"} }),
			def("V4", step("Validate"), Step{Name: "Rate", Callee: "example.com/shop.Rate", Signature: step("x").Signature, Policy: "default", JSON: "int", Shape: []string{"result int"}}, step("Charge")),
			[]string{"Score"}, true, "renamed Score -> Rate", map[string]string{"Score": "Rate"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := Decide(tc.from, tc.to, Run{Keys: tc.keys, Entered: true})
			if d.Continues != tc.cont || !strings.Contains(d.Why, tc.why) {
				t.Errorf("Decide = %v, %q; want %v, containing %q", d.Continues, d.Why, tc.cont, tc.why)
			}
			if !maps.Equal(d.Renames, tc.renames) {
				t.Errorf("renames = %v, want %v", d.Renames, tc.renames)
			}
		})
	}
}

// A plain rename (no renamed-from=) of a step the run has not journaled is
// a likely rename when it keeps the callee (or renames it with the step)
// and the signature at the same place: a run a process entered before
// may have executed its effect without a row, so it stops, naming the
// fix; a run never entered executed nothing and continues. What is not a
// likely rename continues either way.
func TestDecideLikelyRename(t *testing.T) {
	v1 := def("V1", step("Validate"), step("Score"), step("Charge"))
	renamedFn := edit(v1, "V2", 2, func(s *Step) { s.Name, s.Callee = "Pay", "example.com/shop.Pay" })                    // the function renamed
	renamedSite := edit(v1, "V2", 2, func(s *Step) { s.Name = "Pay" })                                                    // name= at the call site
	declared := edit(renamedFn, "V2d", 2, func(s *Step) { s.RenamedFrom = []string{"Charge"} })                           // renamed-from=
	otherSig := edit(renamedFn, "V2s", 2, func(s *Step) { s.Signature = "func(context.Context, Order) (string, error)" }) // another step
	otherCallee := edit(v1, "V2c", 2, func(s *Step) { s.Name, s.Callee = "Pay", "example.com/billing.Pay" })
	moved := def("V2m", step("Validate"), step("Charge"), step("Score")) // reordered: both names kept
	child := edit(renamedSite, "V2k", 2, func(s *Step) { s.Child = true })
	const fix = "if Pay is Charge renamed, add renamed-from=Charge to it, so that runs keep Charge's rows and idempotency key (a run parked already continues with the rename once accepted: resumectl runs accept-version); if it is a new step, confirm it with resumectl runs accept-version"
	for _, tc := range []struct {
		name    string
		to      Definition
		keys    []string
		entered bool
		cont    bool
		why     string
	}{
		{"function renamed, entered", renamedFn, []string{"Validate", "Score"}, true, false,
			"step 3 Charge: looks like step Charge renamed Pay (the same callee and signature at the same place, without renamed-from=), and the run may have executed Charge before its row was written (a process entered it before): " + fix},
		{"call site renamed, entered", renamedSite, []string{"Validate"}, true, false, "step 3 Charge: looks like step Charge renamed Pay"},
		{"nothing journaled, entered", renamedFn, nil, true, false, "step 3 Charge: looks like step Charge renamed Pay"},
		{"nothing journaled, never entered", renamedFn, nil, false, true, "no step journaled"},
		{"journaled before it, never entered", renamedFn, []string{"Validate"}, false, true, "step Validate journaled"},
		{"declared with renamed-from", declared, []string{"Validate"}, true, true, "(renamed Charge -> Pay)"},
		{"another signature", otherSig, []string{"Validate"}, true, true, "step Validate journaled"},
		{"another package's callee", otherCallee, []string{"Validate"}, true, true, "step Validate journaled"},
		{"reordered, not renamed", moved, []string{"Validate"}, true, true, "step Validate journaled"},
		{"a child call replacing a step", child, []string{"Validate"}, true, true, "step Validate journaled"},
		{"journaled, entered", renamedSite, []string{"Charge"}, true, false, "step 3 Charge: name Charge -> Pay; " + fix},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := Decide(v1, tc.to, Run{Keys: tc.keys, Entered: tc.entered})
			if d.Continues != tc.cont || !strings.Contains(d.Why, tc.why) {
				t.Errorf("Decide = %v, %q; want %v, containing %q", d.Continues, d.Why, tc.cont, tc.why)
			}
			if !d.Continues && d.Renames != nil {
				t.Errorf("a stop carries renames %v", d.Renames)
			}
		})
	}
	got := LikelyRenames(v1, renamedFn)
	if len(got) != 1 || got[0] != (LikelyRename{Index: 2, From: "Charge", To: "Pay"}) {
		t.Errorf("LikelyRenames = %+v", got)
	}
	if got := LikelyRenames(v1, declared); len(got) != 0 {
		t.Errorf("a declared rename is listed as likely: %+v", got)
	}
}

// A step called at two call sites is listed twice, and its rows do not
// say which call site journaled them: the rule takes the step's last
// position, the one that checks more.
func TestDecideTakesTheLastPositionOfAStep(t *testing.T) {
	from := def("V1", step("Fetch"), step("Score"), step("Fetch"))
	to := def("V2", step("Fetch"), step("Score"), edit(def("", step("Fetch")), "", 0, func(s *Step) { s.Policy = "once" }).Steps[0])
	if d := Decide(from, to, Run{Keys: []string{"Fetch"}}); d.Continues || !strings.Contains(d.Why, "step 3 Fetch: policy default -> once") {
		t.Errorf("Decide = %v, %q; want a stop at step 3", d.Continues, d.Why)
	}
}

func TestUnknown(t *testing.T) {
	d := Unknown("V0")
	if d.Continues || d.Why != "the journal has no step list for version V0: saved by an older resumegen" {
		t.Errorf("Unknown = %+v", d)
	}
}

func TestDefinitionJSON(t *testing.T) {
	d := def("V1", Step{Name: "A", Callee: "p.A", Signature: "func()", Policy: "tx", Key: "k", JSON: "int", Shape: []string{"result int"}, RenamedFrom: []string{"Z"}, Child: true})
	b, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"workflow":"shop.Checkout","version":"V1","shape":["input arg 1 Order: ID string","output Receipt: Total int"],` +
		`"steps":[{"name":"A","callee":"p.A","signature":"func()","policy":"tx","key":"k","json":"int","shape":["result int"],"renamed_from":["Z"],"child":true}]}`
	if string(b) != want {
		t.Errorf("JSON = %s\nwant %s", b, want)
	}
	var back Definition
	if err := json.Unmarshal(b, &back); err != nil || Decide(d, back, Run{Keys: []string{"A"}}).Continues != true {
		t.Errorf("round trip: %v, %+v", err, back)
	}
}

// A workflow whose package moved, its identity kept by name=, has the same
// steps under callees of the new path; one of another package is still
// another callee, and a definition that does not say its package cannot
// tell a move from a change.
func TestDecideMovedPackage(t *testing.T) {
	from := def("V1", step("Validate"), step("Score"), Step{Name: "Now", Callee: "time.Now", Signature: "func() time.Time", Policy: "default", JSON: "time.Time"})
	from.Package = "example.com/shop"
	to := Definition{Workflow: from.Workflow, Package: "example.com/billing/shop", Version: "V2", Shape: from.Shape}
	for _, s := range from.Steps {
		s.Callee = strings.Replace(s.Callee, "example.com/shop.", "example.com/billing/shop.", 1)
		to.Steps = append(to.Steps, s)
	}
	d := Decide(from, to, Run{Keys: []string{"Validate", "Score", "Now"}})
	if !d.Continues || !strings.Contains(d.Why, "package example.com/shop moved to example.com/billing/shop") {
		t.Fatalf("moved package: %+v, want it to continue and say the package moved", d)
	}
	other := edit(to, "V3", 2, func(s *Step) { s.Callee = "example.com/shop.Now" })
	if d := Decide(from, other, Run{Keys: []string{"Now"}}); d.Continues || !strings.Contains(d.Why, "callee time.Now -> example.com/shop.Now") {
		t.Fatalf("a callee of another package: %+v, want it to stop on the callee", d)
	}
	old := from
	old.Package = ""
	if d := Decide(old, to, Run{Keys: []string{"Validate"}}); d.Continues || !strings.Contains(d.Why, "callee") {
		t.Fatalf("no package recorded: %+v, want it to stop on the callee", d)
	}
	if d := Decide(from, to, Run{Entered: true}); !d.Continues {
		t.Fatalf("moved package, nothing journaled: %+v", d)
	}
}

// TestDecideIgnoresPosAndGraph: a step that moved in its file, or a graph
// drawn otherwise, is the same version's step list for the rule.
func TestDecideIgnoresPosAndGraph(t *testing.T) {
	v1 := def("V1", step("Validate"), step("Score"))
	v1.Steps[0].Pos, v1.Steps[1].Pos = "shop/checkout.go:10", "shop/checkout.go:14"
	v1.Graph = "flowchart TD\n  n1[\"Validate\"] --> n2[\"Score\"]\n"
	v2 := def("V2", step("Validate"), step("Score"), step("Charge"))
	v2.Steps[0].Pos, v2.Steps[1].Pos = "shop/other.go:99", ""
	v2.Graph = ""
	d := Decide(v1, v2, Run{Keys: []string{"Validate", "Score"}})
	if !d.Continues {
		t.Fatalf("a moved call site stops the run: %s", d.Why)
	}
	b, err := json.Marshal(v1)
	if err != nil {
		t.Fatal(err)
	}
	var back Definition
	if err := json.Unmarshal(b, &back); err != nil || back.Steps[0].Pos != "shop/checkout.go:10" || back.Graph != v1.Graph {
		t.Fatalf("Pos and Graph do not round-trip through the stored JSON: %s (%v)", b, err)
	}
}
