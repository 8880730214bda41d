package resume

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"
)

var (
	errDeclined = errors.New("card declined")
	errNoFunds  = errors.New("insufficient funds")
	errUnknown  = errors.New("not known to the definition")
	// errWrapping is a sentinel that itself wraps another.
	errWrapping = fmt.Errorf("bank unavailable: %w", errNoFunds)
)

// cardError is a pointer error type that wraps another error.
type cardError struct {
	Code string
	Err  error
}

func (e *cardError) Error() string {
	if e.Err == nil {
		return "card " + e.Code
	}
	return "card " + e.Code + ": " + e.Err.Error()
}
func (e *cardError) Unwrap() error { return e.Err }

// codeError is a value error type.
type codeError struct{ Code int }

func (e codeError) Error() string { return fmt.Sprintf("code %d", e.Code) }

// valueWrapError is a value type with an error field.
type valueWrapError struct {
	Op  string
	Err error
}

func (e valueWrapError) Error() string { return e.Op + ": " + e.Err.Error() }
func (e valueWrapError) Unwrap() error { return e.Err }

// floatError cannot be journaled when its value is NaN.
type floatError struct{ F float64 }

func (e *floatError) Error() string { return "float" }

// claimsDeclined says, through its Is method, that it is errDeclined.
type claimsDeclined struct{ Reason string }

func (e *claimsDeclined) Error() string        { return "declined: " + e.Reason }
func (e *claimsDeclined) Is(target error) bool { return target == errDeclined }

// uncomparable is an error whose dynamic type cannot be compared with ==.
type uncomparable []string

func (u uncomparable) Error() string { return strings.Join(u, ",") }

// bankDef knows the identities a bank workflow body tests.
var bankDef = &WorkflowDef{Package: "example.com/bank", Name: "Transfer", Errors: []ErrorDef{
	ErrorSentinel("example.com/bank.ErrDeclined", errDeclined),
	ErrorSentinel("example.com/bank.ErrNoFunds", errNoFunds),
	ErrorSentinel("example.com/bank.ErrWrapping", errWrapping),
	ErrorType[*cardError]("*example.com/bank.cardError"),
	ErrorType[codeError]("example.com/bank.codeError"),
	ErrorType[valueWrapError]("example.com/bank.valueWrapError"),
	ErrorType[*floatError]("*example.com/bank.floatError"),
}}

// roundTrip journals err as a journal would (text, and the detail as
// bytes) and decodes it.
func roundTrip(t *testing.T, def *WorkflowDef, err error) (error, json.RawMessage) {
	t.Helper()
	detail := encodeStepError(def, err)
	if detail != nil && !json.Valid(detail) {
		t.Fatalf("detail %s is not JSON", detail)
	}
	stored := json.RawMessage(append([]byte(nil), detail...))
	got := decodeStepError(def, err.Error(), stored)
	if errors.Is(got, errNotReplayable) {
		t.Fatalf("decode %v (detail %s): %v", err, detail, got)
	}
	return got, detail
}

// assertSameAnswers checks that got answers every test a body can make as
// orig does: text, ==, errors.Is, errors.As (and the value found), type
// of the top, IsPermanent.
func assertSameAnswers(t *testing.T, orig, got error) {
	t.Helper()
	if got.Error() != orig.Error() {
		t.Errorf("Error() = %q, want %q", got.Error(), orig.Error())
	}
	if IsPermanent(got) != IsPermanent(orig) {
		t.Errorf("IsPermanent = %v, want %v", IsPermanent(got), IsPermanent(orig))
	}
	for _, s := range []error{errDeclined, errNoFunds, errWrapping, context.Canceled, context.DeadlineExceeded, ErrRunFailed} {
		if (got == s) != (orig == s) {
			t.Errorf("err == %v: %v, want %v", s, got == s, orig == s)
		}
		if errors.Is(got, s) != errors.Is(orig, s) {
			t.Errorf("errors.Is(err, %v) = %v, want %v", s, errors.Is(got, s), errors.Is(orig, s))
		}
	}
	if reflect.TypeOf(got) != reflect.TypeOf(orig) {
		// A type switch or assertion on a known type must answer alike.
		for _, typ := range []any{(*cardError)(nil), codeError{}, valueWrapError{}, (*permanentError)(nil)} {
			tt := reflect.TypeOf(typ)
			if (reflect.TypeOf(got) == tt) != (reflect.TypeOf(orig) == tt) {
				t.Errorf("top type %T, original %T", got, orig)
			}
		}
	}
	var c1, c2 *cardError
	if a, b := errors.As(orig, &c1), errors.As(got, &c2); a != b {
		t.Errorf("errors.As(*cardError) = %v, want %v", b, a)
	} else if a && (c1.Code != c2.Code || c1.Error() != c2.Error()) {
		t.Errorf("errors.As found %#v, want %#v", c2, c1)
	}
	var v1, v2 codeError
	if a, b := errors.As(orig, &v1), errors.As(got, &v2); a != b || v1 != v2 {
		t.Errorf("errors.As(codeError) = %v %v, want %v %v", b, v2, a, v1)
	}
	var w1, w2 valueWrapError
	if a, b := errors.As(orig, &w1), errors.As(got, &w2); a != b {
		t.Errorf("errors.As(valueWrapError) = %v, want %v", b, a)
	} else if a && w1.Error() != w2.Error() {
		t.Errorf("errors.As(valueWrapError) found %v, want %v", w2, w1)
	}
}

func TestErrorCodecRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
	}{
		{"sentinel at top", errDeclined},
		{"wrapped with %w", fmt.Errorf("charge: %w", errDeclined)},
		{"wrapped twice", fmt.Errorf("transfer: %w", fmt.Errorf("charge: %w", errNoFunds))},
		{"joined", errors.Join(errDeclined, errors.New("other"), errNoFunds)},
		{"joined in a wrap", fmt.Errorf("x: %w", errors.Join(errors.New("a"), errNoFunds))},
		{"two %w", fmt.Errorf("%w and %w", errDeclined, errNoFunds)},
		{"sentinel wrapping a sentinel", errWrapping},
		{"sentinel wrapping a sentinel, wrapped", fmt.Errorf("x: %w", errWrapping)},
		{"pointer type at top", &cardError{Code: "51"}},
		{"pointer type wrapping a sentinel", &cardError{Code: "05", Err: errDeclined}},
		{"pointer type wrapping a wrapped sentinel", &cardError{Code: "05", Err: fmt.Errorf("issuer: %w", errNoFunds)}},
		{"pointer type wrapping a pointer type", &cardError{Code: "outer", Err: &cardError{Code: "inner", Err: errDeclined}}},
		{"pointer type wrapping an unknown error", &cardError{Code: "05", Err: errUnknown}},
		{"pointer type wrapped", fmt.Errorf("charge: %w", &cardError{Code: "05", Err: errDeclined})},
		{"value type at top", codeError{Code: 7}},
		{"value type wrapped", fmt.Errorf("x: %w", codeError{Code: 7})},
		{"value type wrapping a sentinel", valueWrapError{Op: "debit", Err: errNoFunds}},
		{"value type wrapping a pointer type", valueWrapError{Op: "debit", Err: &cardError{Code: "9", Err: errDeclined}}},
		{"first As match wins", fmt.Errorf("x: %w", errors.Join(&cardError{Code: "first"}, &cardError{Code: "second"}))},
		{"permanent sentinel", Permanent(errDeclined)},
		{"permanent typed", Permanent(&cardError{Code: "05", Err: errDeclined})},
		{"permanent unknown", Permanent(errors.New("gone"))},
		{"permanent below the top", fmt.Errorf("charge: %w", Permanent(errDeclined))},
		{"permanent in a join", errors.Join(errors.New("a"), Permanent(errors.New("b")))},
		{"permanent twice", Permanent(Permanent(errNoFunds))},
		{"context canceled", fmt.Errorf("call: %w", context.Canceled)},
		{"deadline at top", context.DeadlineExceeded},
		{"resume sentinel", fmt.Errorf("child: %w", ErrRunFailed)},
		{"unknown", errors.New("boom")},
		{"unknown wrapped", fmt.Errorf("x: %w", errUnknown)},
		{"uncomparable node", fmt.Errorf("x: %w", errors.Join(uncomparable{"a", "b"}, errDeclined))},
		{"uncomparable at top", uncomparable{"a"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, detail := roundTrip(t, bankDef, tc.err)
			assertSameAnswers(t, tc.err, got)
			if t.Failed() {
				t.Logf("detail: %s", detail)
			}
		})
	}
}

func TestErrorCodecTopIdentity(t *testing.T) {
	got, _ := roundTrip(t, bankDef, errDeclined)
	switch got {
	case errDeclined:
	default:
		t.Errorf("switch on a replayed sentinel missed its case: %#v", got)
	}

	got, _ = roundTrip(t, bankDef, &cardError{Code: "05", Err: fmt.Errorf("issuer: %w", errDeclined)})
	ce, ok := got.(*cardError)
	if !ok {
		t.Fatalf("replayed %T, want *cardError", got)
	}
	if ce.Code != "05" || ce.Err == nil || ce.Err.Error() != "issuer: card declined" || !errors.Is(ce.Err, errDeclined) {
		t.Errorf("replayed %#v: the wrapped error was not restored", ce)
	}

	got, _ = roundTrip(t, bankDef, valueWrapError{Op: "debit", Err: errNoFunds})
	vw, ok := got.(valueWrapError)
	if !ok || vw.Op != "debit" || vw.Err != errNoFunds {
		t.Errorf("replayed %#v, want valueWrapError{debit, errNoFunds}", got)
	}

	got, _ = roundTrip(t, bankDef, Permanent(errDeclined))
	if p, ok := got.(*permanentError); !ok || p.err != errDeclined {
		t.Errorf("replayed %#v, want Permanent(errDeclined)", got)
	}
}

// A type whose Is method claims a sentinel keeps the claim: the sentinel
// is journaled though the node is not it.
func TestErrorCodecIsMethod(t *testing.T) {
	orig := fmt.Errorf("x: %w", &claimsDeclined{Reason: "fraud"})
	if !errors.Is(orig, errDeclined) {
		t.Fatal("test setup: claimsDeclined does not claim errDeclined")
	}
	got, _ := roundTrip(t, bankDef, orig)
	assertSameAnswers(t, orig, got)
}

func TestErrorCodecNilDefKnowsBuiltins(t *testing.T) {
	orig := fmt.Errorf("step: %w", context.Canceled)
	got, _ := roundTrip(t, nil, orig)
	if !errors.Is(got, context.Canceled) || got.Error() != orig.Error() {
		t.Errorf("replayed %v without context.Canceled", got)
	}
	got, _ = roundTrip(t, nil, errDeclined)
	if errors.Is(got, errDeclined) || got.Error() != "card declined" {
		t.Errorf("with no definition, replayed %#v, want text only", got)
	}
}

func TestErrorCodecCheap(t *testing.T) {
	if d := encodeStepError(bankDef, nil); d != nil {
		t.Errorf("nil error: detail %s, want none", d)
	}
	if d := encodeStepError(bankDef, fmt.Errorf("x: %w", errors.New("y"))); d != nil {
		t.Errorf("unknown error: detail %s, want none", d)
	}
	if d := encodeStepError(bankDef, fmt.Errorf("x: %w", errDeclined)); len(d) > 60 {
		t.Errorf("wrapped sentinel: detail %s is %d bytes", d, len(d))
	}
	got := decodeStepError(bankDef, "boom", nil)
	if got.Error() != "boom" || IsPermanent(got) || errors.Unwrap(got) != nil {
		t.Errorf("text-only decode = %#v", got)
	}
}

// An identity the definition no longer lists (the body stopped testing
// it) replays as text only.
func TestErrorCodecForgottenIdentity(t *testing.T) {
	detail := encodeStepError(bankDef, fmt.Errorf("x: %w", errDeclined))
	got := decodeStepError(&WorkflowDef{}, "x: card declined", detail)
	if errors.Is(got, errNotReplayable) || got.Error() != "x: card declined" {
		t.Errorf("decode = %v", got)
	}
}

func TestErrorCodecCorrupt(t *testing.T) {
	for _, tc := range []struct{ name, detail string }{
		{"not JSON", `{"chain":`},
		{"wrong shape", `[1,2]`},
		{"value of the wrong type", `{"chain":[{"id":"*example.com/bank.cardError","value":"05"}]}`},
		{"typed without value", `{"chain":[{"id":"*example.com/bank.cardError"}]}`},
		{"unknown field", `{"chain":[{"id":"*example.com/bank.cardError","value":{},"fields":{"Nope":{"text":"x"}}}]}`},
		{"field of another type", `{"chain":[{"id":"*example.com/bank.cardError","value":{},"fields":{"Code":{"text":"x"}}}]}`},
		{"fields on a non-struct", `{"chain":[{"id":"example.com/bank.codeError","value":{},"fields":{"Code":{"text":"x"}}}]}`},
		{"corrupt nested field", `{"chain":[{"id":"*example.com/bank.cardError","value":{},"fields":{"Err":{"text":"x","detail":"?"}}}]}`},
		{"lost value", `{"chain":[{"id":"?","lost":"json: unsupported value: NaN"}]}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := decodeStepError(bankDef, "text", json.RawMessage(tc.detail))
			if !errors.Is(got, errNotReplayable) {
				t.Errorf("decode = %#v, want errNotReplayable", got)
			}
		})
	}
}

// A typed value JSON cannot carry is journaled as lost: its replay fails
// loudly instead of handing the body a value that answers wrongly.
func TestErrorCodecUnjournalableValue(t *testing.T) {
	orig := fmt.Errorf("x: %w", &floatError{F: math.NaN()})
	detail := encodeStepError(bankDef, orig)
	got := decodeStepError(bankDef, orig.Error(), detail)
	if !errors.Is(got, errNotReplayable) || !strings.Contains(got.Error(), "NaN") {
		t.Errorf("decode = %v, want errNotReplayable naming NaN", got)
	}
}

// A cyclic value (its error field leads back to itself) stops at the
// depth limit and fails loudly on replay.
func TestErrorCodecCycle(t *testing.T) {
	outer := &loopError{Code: "outer"}
	outer.Err = &loopError{Code: "inner", Err: outer}
	def := &WorkflowDef{Errors: []ErrorDef{ErrorType[*loopError]("*loopError")}}
	detail := encodeStepError(def, outer) // must terminate
	if got := decodeStepError(def, "outer", detail); !errors.Is(got, errNotReplayable) {
		t.Errorf("decode of a cyclic value = %v, want errNotReplayable", got)
	}
}

// loopError's text does not follow its field, so a cycle through it can
// be printed.
type loopError struct {
	Code string
	Err  error
}

func (e *loopError) Error() string { return e.Code }

// A chain too long to walk is journaled as lost rather than cut short.
func TestErrorCodecLongChain(t *testing.T) {
	err := error(errDeclined)
	for i := 0; i < maxErrorNodes; i++ {
		err = fmt.Errorf("%d: %w", i, err)
	}
	got := decodeStepError(bankDef, err.Error(), encodeStepError(bankDef, err))
	if !errors.Is(got, errNotReplayable) {
		t.Errorf("decode of a %d-long chain = %.80v, want errNotReplayable", maxErrorNodes+1, got)
	}
}

// A typed top whose decoded value no longer reaches an identity the
// original reached (here: the value marshals itself and drops its wrapped
// error) replays as a wrapper: errors.Is keeps matching.
func TestErrorCodecTypedTopLosesWrapped(t *testing.T) {
	def := &WorkflowDef{Errors: []ErrorDef{
		ErrorSentinel("d", errDeclined),
		ErrorType[*selfMarshaling]("*selfMarshaling"),
	}}
	orig := &selfMarshaling{Code: "x", err: errDeclined}
	got, _ := roundTrip(t, def, orig)
	if !errors.Is(got, errDeclined) {
		t.Errorf("replayed %#v lost errDeclined", got)
	}
	var sm *selfMarshaling
	if !errors.As(got, &sm) || sm.Code != "x" {
		t.Errorf("replayed %#v lost the typed value", got)
	}
	if got.Error() != orig.Error() {
		t.Errorf("Error() = %q, want %q", got.Error(), orig.Error())
	}
}

type selfMarshaling struct {
	Code string
	err  error
}

func (e *selfMarshaling) Error() string { return "sm " + e.Code }
func (e *selfMarshaling) Unwrap() error { return e.err }
func (e *selfMarshaling) MarshalJSON() ([]byte, error) {
	return json.Marshal(map[string]string{"code": e.Code})
}
func (e *selfMarshaling) UnmarshalJSON(b []byte) error {
	var m map[string]string
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	e.Code = m["code"]
	return nil
}

// Whatever the journal holds, decoding never panics.
func FuzzDecodeStepError(f *testing.F) {
	for _, err := range []error{errDeclined, Permanent(fmt.Errorf("x: %w", errNoFunds)),
		&cardError{Code: "05", Err: fmt.Errorf("issuer: %w", errDeclined)}, valueWrapError{Op: "o", Err: codeError{3}}} {
		f.Add(string(encodeStepError(bankDef, err)))
	}
	f.Fuzz(func(t *testing.T, detail string) {
		decodeStepError(bankDef, "text", json.RawMessage(detail))
	})
}

func BenchmarkEncodeStepErrorUnknown(b *testing.B) {
	err := fmt.Errorf("x: %w", errors.New("y"))
	for b.Loop() {
		encodeStepError(bankDef, err)
	}
}
