package resume

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"unicode/utf8"

	"github.com/resumegen/resumegen/runtime/journal"
)

func call[T any](ctx context.Context, def *StepDef, key stepKey, fn func(context.Context) (T, error)) (T, error) {
	st := stateFrom(ctx)
	if st == nil {
		return fn(ctx)
	}
	var out T
	err := st.step(ctx, def, key, func(ctx context.Context) (json.RawMessage, error) {
		v, err := fn(ctx)
		b, encErr := journaledValue(&v)
		if encErr != nil {
			// The body gets the zero value with the error, as a replay will.
			var zero T
			out = zero
			return nil, &resultError{err: encErr, stepErr: err}
		}
		out = v
		return b, err
	}, func(raw json.RawMessage) error {
		return decodeResult(raw, &out)
	})
	return out, err
}

func call0(ctx context.Context, def *StepDef, key stepKey, fn func(context.Context) error) error {
	st := stateFrom(ctx)
	if st == nil {
		return fn(ctx)
	}
	return st.step(ctx, def, key, func(ctx context.Context) (json.RawMessage, error) {
		if err := fn(ctx); err != nil {
			return nil, err
		}
		return nullResult, nil
	}, nil)
}

var nullResult = json.RawMessage("null")

// stepKey is a call site's key= value, if it has key=.
type stepKey struct {
	value string
	set   bool
}

// resultError is a step result that JSON cannot carry faithfully: the
// attempt fails (a once step parks instead: its effect happened).
type resultError struct {
	err     error // why it cannot be journaled
	stepErr error // the error the step returned beside it, if any
}

func (e *resultError) Error() string {
	msg := "its result cannot be journaled faithfully: " + e.err.Error()
	if e.stepErr != nil {
		msg += " (the step also returned the error: " + e.stepErr.Error() + ")"
	}
	return msg
}

func (e *resultError) Unwrap() error { return e.err }

// journaledValue encodes the step's value *v for the journal and replaces
// it with what the journal decodes, so that the body sees on the first
// execution exactly what a resumed run will: the same value for every
// type the generator accepts (it refuses those JSON would change), but
// for what JSON cannot carry at all, the monotonic clock reading of a
// time.Time and its Location beyond its UTC offset. A value that does
// not decode back fails the attempt before it is journaled. The value is
// encoded through its pointer, as it is decoded, so a MarshalJSON with a
// pointer receiver is called both ways.
func journaledValue[T any](v *T) (json.RawMessage, error) {
	b, err := encodeResult(v)
	if err != nil {
		return nil, err
	}
	var back T
	if err := decodeResult(b, &back); err != nil {
		return nil, fmt.Errorf("it does not decode back as the journal will replay it: %w", err)
	}
	*v = back
	return b, nil
}

// encodeResult journals a step's value: json.Marshal, refusing what would
// not decode back to the same value. NaN and ±Inf make Marshal fail; a
// string that is not valid UTF-8 Marshal writes as \ufffd, so only an
// encoding holding that escape is walked to find such a string.
func encodeResult(v any) (json.RawMessage, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	if len(b) > journal.MaxValueBytes {
		return nil, journal.CheckValue("the result", b)
	}
	if hasReplacementEscape(b) {
		if path := invalidUTF8(reflect.ValueOf(v), "result", 0); path != "" {
			return nil, fmt.Errorf("%s is not valid UTF-8 (JSON would journal it as U+FFFD)", path)
		}
	}
	return b, nil
}

// hasReplacementEscape reports whether JSON text b holds the escape \ufffd
// (not an escaped backslash followed by "ufffd").
func hasReplacementEscape(b []byte) bool {
	const esc = `\ufffd`
	for off := 0; ; {
		i := bytes.Index(b[off:], []byte(esc))
		if i < 0 {
			return false
		}
		i += off
		n := 0
		for j := i - 1; j >= 0 && b[j] == '\\'; j-- {
			n++
		}
		if n%2 == 0 {
			return true
		}
		off = i + len(esc)
	}
}

// invalidUTF8 returns the path, from name, of a string in v that
// json.Marshal encodes and that is not valid UTF-8, or "".
func invalidUTF8(v reflect.Value, name string, depth int) string {
	if !v.IsValid() || depth > 100 {
		return ""
	}
	switch v.Kind() {
	case reflect.String:
		if !utf8.ValidString(v.String()) {
			return name
		}
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			return invalidUTF8(v.Elem(), name, depth+1)
		}
	case reflect.Struct:
		t := v.Type()
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			if (!f.IsExported() && !f.Anonymous) || f.Tag.Get("json") == "-" {
				continue
			}
			if p := invalidUTF8(v.Field(i), name+"."+f.Name, depth+1); p != "" {
				return p
			}
		}
	case reflect.Slice, reflect.Array:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return "" // base64
		}
		for i := 0; i < v.Len(); i++ {
			if p := invalidUTF8(v.Index(i), name+"["+strconv.Itoa(i)+"]", depth+1); p != "" {
				return p
			}
		}
	case reflect.Map:
		it := v.MapRange()
		for it.Next() {
			k := it.Key()
			if k.Kind() == reflect.String && !utf8.ValidString(k.String()) {
				return name + " (a map key)"
			}
			if p := invalidUTF8(it.Value(), fmt.Sprintf("%s[%v]", name, k), depth+1); p != "" {
				return p
			}
		}
	}
	return ""
}

// decodeResult decodes a journaled value into out. A null (or missing)
// value where T cannot be nil is refused: it would replay as a zero value
// the step never returned.
func decodeResult[T any](raw json.RawMessage, out *T) error {
	if len(bytes.TrimSpace(raw)) == 0 || bytes.Equal(bytes.TrimSpace(raw), nullResult) {
		if !nullable(reflect.TypeFor[T]()) {
			return fmt.Errorf("result is null, but the step returns a %s, which cannot be null", reflect.TypeFor[T]())
		}
		var zero T
		*out = zero
		return nil
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("result does not decode into %s: %w", reflect.TypeFor[T](), err)
	}
	return nil
}

var (
	marshalerType   = reflect.TypeFor[json.Marshaler]()
	unmarshalerType = reflect.TypeFor[json.Unmarshaler]()
)

// nullable reports whether JSON null is a value of t: t can be nil, or
// encodes itself (and may write null).
func nullable(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Pointer, reflect.Interface, reflect.Map, reflect.Slice, reflect.Func, reflect.Chan, reflect.UnsafePointer:
		return true
	}
	pt := reflect.PointerTo(t)
	return t.Implements(marshalerType) || pt.Implements(marshalerType) ||
		t.Implements(unmarshalerType) || pt.Implements(unmarshalerType)
}

// unwinding is the panic value of [Unwind].
type unwinding struct{ err error }
