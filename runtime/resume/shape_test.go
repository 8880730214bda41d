package resume

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// shapeManifest is a manifest as the generator's code renders it, with
// steps journaling a string, a struct, a slice of structs, a named
// integer, a map, nothing, and a value with a pointer parameter.
var shapeManifest = (&WorkflowDef{Steps: []StepDef{
	{Name: "Label", Callee: "x.Label", Signature: "func(context.Context) (string, error)", JSON: "string"},
	{Name: "Price", Callee: "x.Price", Signature: "func(context.Context) (Priced, error)", JSON: "Priced", Shape: []string{
		"result Priced: Cents Cents",
		"result Priced: Items []Item",
		"result Priced: note string omitempty",
		"result Priced: When time.Time",
		"result Priced: ID int64 string",
		"result Item: SKU string",
		"result Item: Qty uint8",
		"result Cents: type int32",
	}},
	{Name: "Counts", Callee: "x.Counts", Signature: "func(context.Context) (map[int]float64, error)", JSON: "map[int]float64"},
	{Name: "Notify", Callee: "x.Notify", Signature: "func(context.Context) error", Policy: PolicyOnce, JSON: "null"},
	{Name: "Fetch", Callee: "x.Fetch", Signature: "func(context.Context, *Info) (int, error)", JSON: "struct{arg2 *Info; result int}",
		Shape: []string{"out arg 2 Info: Email string"}},
	{Name: "Pair", Callee: "x.Pair", Signature: "func(context.Context) ([2]bool, error)", JSON: "[2]bool"},
	{Name: "Old", Callee: "x.Old", Signature: "func(context.Context) (string, error)"},
	{Name: "Stamp", Callee: "x.Stamp", Signature: "func(context.Context) (struct{time.Time}, error)", JSON: "struct{time.Time}"},
	{Name: "Generic", Callee: "x.Generic", Signature: "func(context.Context) (Pair[int, string], error)", JSON: "Pair[int, string]", Shape: []string{
		"result Pair[int, string]: A int",
		"result Pair[int, string]: B map[Key]string omitempty",
		"result Key: type string",
	}},
}}).Manifest()

func TestCheckStepResult(t *testing.T) {
	for _, tc := range []struct {
		step, result string
		why          string // "" when the result fits
	}{
		{"Label", `"hello"`, ""},
		{"Label", `{"x":1}`, "result: want a string, have an object"},
		{"Label", `null`, "cannot be null"},
		{"Label", `"a" "b"`, "more than one JSON value"},
		{"Price", `{"Cents": 250, "Items": [{"SKU": "a", "Qty": 2}], "When": "2026-11-30T10:00:00Z", "ID": "42"}`, ""},
		{"Price", `{"cents": 250, "Items": null, "When": "2026-11-30T10:00:00Z", "ID": "42", "note": "n"}`, ""},
		{"Price", `{"x": 1}`, `Priced has no field "x"`},
		{"Price", `{"Cents": 250}`, "missing Items ([]Item), When (time.Time), ID (int64)"},
		{"Price", `{"Cents": 3000000000, "Items": [], "When": "2026-11-30T10:00:00Z", "ID": "1"}`, "result.Cents: 3000000000 is not an integer of type int32"},
		{"Price", `{"Cents": 1.5, "Items": [], "When": "2026-11-30T10:00:00Z", "ID": "1"}`, "1.5 is not an integer of type int32"},
		{"Price", `{"Cents": 1, "Items": [{"SKU": "a", "Qty": 300}], "When": "2026-11-30T10:00:00Z", "ID": "1"}`, "result.Items[0].Qty: 300 is not an integer of type uint8"},
		{"Price", `{"Cents": 1, "Items": [], "When": "yesterday", "ID": "1"}`, "not an RFC 3339 time"},
		{"Price", `{"Cents": 1, "Items": [], "When": "2026-11-30T10:00:00Z", "ID": 1}`, "result.ID: want a string (the field is encoded as a string)"},
		{"Price", `{"Cents": null, "Items": [], "When": "2026-11-30T10:00:00Z", "ID": "1"}`, "result.Cents: null, but it is a Cents"},
		{"Price", `[1]`, "want an object (Priced), have an array of 1"},
		{"Counts", `{"1": 2.5, "2": 3}`, ""},
		{"Counts", `{"one": 2.5}`, `key "one" is not an integer of type int`},
		{"Counts", `{"1": "x"}`, "want a number (float64)"},
		{"Notify", `null`, ""},
		{"Notify", `{"x":1}`, "journals nothing but null"},
		{"Fetch", `{"result": 7, "arg2": {"Email": "a@b"}}`, ""},
		{"Fetch", `{"result": 7, "arg2": null}`, ""},
		{"Fetch", `7`, "want an object"},
		{"Pair", `[true, false]`, ""},
		{"Pair", `[true]`, "want 2 elements"},
		{"Stamp", `"2026-11-30T10:00:00Z"`, ""},
		{"Generic", `{"A": 1, "B": {"k": "v"}}`, ""},
		{"Generic", `{"A": 1, "B": {"k": 2}}`, `result.B["k"]: want a string`},
		{"Generic", `{"B": {}}`, "missing A (int)"},
	} {
		err := CheckStepResult(shapeManifest, tc.step, json.RawMessage(tc.result))
		switch {
		case tc.why == "" && err != nil:
			t.Errorf("%s %s: %v, want it accepted", tc.step, tc.result, err)
		case tc.why != "" && (err == nil || !strings.Contains(err.Error(), tc.why)):
			t.Errorf("%s %s: %v, want refused with %q", tc.step, tc.result, err, tc.why)
		}
	}
	if err := CheckStepResult(shapeManifest, "Old", json.RawMessage(`1`)); !errors.Is(err, ErrShapeUnknown) {
		t.Errorf("a step whose manifest says nothing of its result: %v, want ErrShapeUnknown", err)
	}
}
