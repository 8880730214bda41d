package jsontype

import (
	"fmt"
	"go/types"
	"reflect"
)

// Journalable returns nil when values of t survive a JSON round trip
// (encoding/json), and otherwise an error naming the offending part of t.
// Types implementing both json.Marshaler and json.Unmarshaler (the latter
// possibly on the pointer) are trusted, as are encoding.TextMarshaler and
// TextUnmarshaler pairs; time.Time is one of them.
func Journalable(t types.Type, q types.Qualifier) error {
	c := &jsonChecker{q: q, seen: map[types.Type]bool{}}
	return c.check(t)
}

// jsonChecker walks a type once, naming types in messages with q.
type jsonChecker struct {
	q    types.Qualifier
	seen map[types.Type]bool
}

func (c *jsonChecker) str(t types.Type) string { return types.TypeString(t, c.q) }

func (c *jsonChecker) check(t types.Type) error {
	seen := c.seen
	t = types.Unalias(t)
	if seen[t] {
		return nil // recursive type: checked further up
	}
	seen[t] = true
	if RoundTrips(t, "MarshalJSON", "UnmarshalJSON") || RoundTrips(t, "MarshalText", "UnmarshalText") {
		return nil
	}
	switch u := t.Underlying().(type) {
	case *types.Basic:
		switch {
		case u.Info()&types.IsComplex != 0:
			return fmt.Errorf("%s is a complex number, which JSON cannot encode", c.str(t))
		case u.Kind() == types.UnsafePointer:
			return fmt.Errorf("unsafe.Pointer cannot be encoded as JSON")
		}
		return nil
	case *types.Pointer:
		return c.check(u.Elem())
	case *types.Slice:
		return c.check(u.Elem())
	case *types.Array:
		return c.check(u.Elem())
	case *types.Map:
		if !MapKeyOK(u.Key()) {
			return fmt.Errorf("map key %s is not a string, an integer or an encoding.TextMarshaler", c.str(u.Key()))
		}
		return c.check(u.Elem())
	case *types.Chan:
		return fmt.Errorf("%s is a channel, which JSON cannot encode", c.str(t))
	case *types.Signature:
		return fmt.Errorf("%s is a function, which JSON cannot encode", c.str(t))
	case *types.Interface:
		return fmt.Errorf("%s is an interface: JSON cannot decode into it the value that was encoded; use a concrete type", c.str(t))
	case *types.Struct:
		return c.structFields(t, u)
	case *types.TypeParam:
		return fmt.Errorf("%s is a type parameter", c.str(t))
	}
	return fmt.Errorf("%s is not supported", c.str(t))
}

// structJournalable checks a struct's exported fields; a struct with fields
// but no exported one would round-trip as {} and lose its value.
func (c *jsonChecker) structFields(t types.Type, s *types.Struct) error {
	exported := 0
	for i := 0; i < s.NumFields(); i++ {
		f := s.Field(i)
		if reflect.StructTag(s.Tag(i)).Get("json") == "-" {
			continue
		}
		if !f.Exported() && !f.Embedded() {
			continue
		}
		if f.Embedded() && !f.Exported() {
			// An unexported embedded struct still promotes its exported
			// fields to JSON.
			if _, ok := Deref(f.Type()).Underlying().(*types.Struct); !ok {
				continue
			}
		}
		exported++
		if err := c.check(f.Type()); err != nil {
			return fmt.Errorf("field %s: %w", f.Name(), err)
		}
	}
	if s.NumFields() > 0 && exported == 0 {
		return fmt.Errorf("%s has no exported fields, so it would be journaled as {} and come back empty", c.str(t))
	}
	return nil
}

// MapKeyOK reports whether encoding/json accepts t as a map key.
func MapKeyOK(t types.Type) bool {
	if b, ok := t.Underlying().(*types.Basic); ok {
		return b.Info()&(types.IsString|types.IsInteger) != 0
	}
	return RoundTrips(t, "MarshalText", "UnmarshalText")
}

// RoundTrips reports whether t has the method marshal (on T or *T)
// returning ([]byte, error) and *T has unmarshal taking []byte and
// returning error.
func RoundTrips(t types.Type, marshal, unmarshal string) bool {
	if _, ok := t.Underlying().(*types.Interface); ok {
		return false
	}
	ms := types.NewMethodSet(types.NewPointer(t))
	m := methodSig(ms, marshal)
	u := methodSig(ms, unmarshal)
	if m == nil || u == nil {
		return false
	}
	return m.Params().Len() == 0 && m.Results().Len() == 2 && isBytes(m.Results().At(0).Type()) && isError(m.Results().At(1).Type()) &&
		u.Params().Len() == 1 && isBytes(u.Params().At(0).Type()) && u.Results().Len() == 1 && isError(u.Results().At(0).Type())
}

func methodSig(ms *types.MethodSet, name string) *types.Signature {
	for i := 0; i < ms.Len(); i++ {
		if f := ms.At(i).Obj(); f.Name() == name {
			return f.Type().(*types.Signature)
		}
	}
	return nil
}

func isBytes(t types.Type) bool {
	s, ok := t.Underlying().(*types.Slice)
	if !ok {
		return false
	}
	b, ok := s.Elem().Underlying().(*types.Basic)
	return ok && b.Kind() == types.Byte
}

func Deref(t types.Type) types.Type {
	if p, ok := t.Underlying().(*types.Pointer); ok {
		return p.Elem()
	}
	return t
}
