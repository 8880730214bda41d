package resume

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"
)

func TestEncodeResultRefusesWhatJSONCannotCarry(t *testing.T) {
	type inner struct {
		Name string
		skip string
	}
	type outer struct {
		In    []inner
		ByKey map[string]string
		Raw   []byte
		Note  string `json:"-"`
	}
	for _, tc := range []struct {
		name    string
		v       any
		wantErr string // "" when the value must be journaled as is
	}{
		{"NaN", math.NaN(), "NaN"},
		{"+Inf in a struct", struct{ F float64 }{math.Inf(1)}, "+Inf"},
		{"-Inf in a slice", []float64{1, math.Inf(-1)}, "-Inf"},
		{"invalid UTF-8", "caf\xe9", "result is not valid UTF-8"},
		{"invalid UTF-8 deep in a struct", outer{In: []inner{{Name: "ok"}, {Name: "\xff"}}}, "result.In[1].Name is not valid UTF-8"},
		{"invalid UTF-8 in a map key", map[string]int{"\xff": 1}, "a map key"},
		{"invalid UTF-8 behind a pointer", &inner{Name: "a\xc0b"}, "result.Name"},
		{"a valid U+FFFD", "\ufffd", ""},
		{"the text \\ufffd", `\ufffd`, ""},
		{"bytes are base64", outer{Raw: []byte{0xff}}, ""},
		{"an ignored field", outer{Note: "\xff"}, ""},
		{"an unexported field", inner{skip: "\xff"}, ""},
		{"a marshaler's own escape", json.RawMessage(`"\ufffd"`), ""},
	} {
		b, err := encodeResult(tc.v)
		if tc.wantErr == "" {
			if err != nil {
				t.Errorf("%s: %v, want it journaled", tc.name, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
			t.Errorf("%s: encoded %s, err %v; want an error naming %q", tc.name, b, err, tc.wantErr)
		}
	}
}

func TestHasReplacementEscape(t *testing.T) {
	for in, want := range map[string]bool{
		`"\ufffd"`:         true,
		`"a\\\ufffd"`:      true, // an escaped backslash, then the escape
		`"\\ufffd"`:        false,
		`"\\\\ufffd"`:      false,
		`"plain"`:          false,
		`["x","y\ufffd"]`:  true,
		"\"\xef\xbf\xbd\"": false, // U+FFFD written as UTF-8
	} {
		if got := hasReplacementEscape([]byte(in)); got != want {
			t.Errorf("hasReplacementEscape(%s) = %v, want %v", in, got, want)
		}
	}
}

type selfCoded struct{ set bool }

func (s selfCoded) MarshalJSON() ([]byte, error) { return []byte("null"), nil }
func (s *selfCoded) UnmarshalJSON([]byte) error  { return nil }

func TestDecodeResultRefusesNullWhereTheTypeNeedsAValue(t *testing.T) {
	null := json.RawMessage("null")
	var st struct{ A int }
	if err := decodeResult(null, &st); err == nil || !strings.Contains(err.Error(), "cannot be null") {
		t.Errorf("null into a struct: %v, want refused", err)
	}
	for name, check := range map[string]func() error{
		"int":    func() error { var v int; return decodeResult(null, &v) },
		"string": func() error { var v string; return decodeResult(null, &v) },
		"bool":   func() error { var v bool; return decodeResult(null, &v) },
		"array":  func() error { var v [2]int; return decodeResult(null, &v) },
		"empty":  func() error { var v float64; return decodeResult(nil, &v) },
	} {
		if err := check(); err == nil {
			t.Errorf("null into %s accepted", name)
		}
	}
	for name, check := range map[string]func() error{
		"pointer":   func() error { var v *int; return decodeResult(null, &v) },
		"slice":     func() error { var v []int; return decodeResult(null, &v) },
		"map":       func() error { var v map[string]int; return decodeResult(null, &v) },
		"interface": func() error { var v any; return decodeResult(null, &v) },
		"marshaler": func() error { var v selfCoded; return decodeResult(null, &v) },
		"time":      func() error { var v time.Time; return decodeResult(null, &v) },
	} {
		if err := check(); err != nil {
			t.Errorf("null into %s: %v, want accepted", name, err)
		}
	}
	var n int
	if err := decodeResult(json.RawMessage(`"x"`), &n); err == nil || !strings.Contains(err.Error(), "does not decode into int") {
		t.Errorf("a string into an int: %v", err)
	}
	if err := decodeResult(json.RawMessage(`7`), &n); err != nil || n != 7 {
		t.Errorf("7 into an int: %d, %v", n, err)
	}
}

func TestStepErrorCodecKeepsTextAndPermanentMark(t *testing.T) {
	def := &WorkflowDef{}
	for _, err := range []error{Permanent(errString("declined")), errString("flaky")} {
		got := decodeStepError(def, err.Error(), encodeStepError(def, err))
		if got.Error() != err.Error() || IsPermanent(got) != IsPermanent(err) {
			t.Errorf("%q (permanent %v) came back as %q (permanent %v)", err, IsPermanent(err), got, IsPermanent(got))
		}
	}
}

type errString string

func (e errString) Error() string { return string(e) }
