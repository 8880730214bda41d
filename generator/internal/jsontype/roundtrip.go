package jsontype

import (
	"fmt"
	"go/types"
	"reflect"
	"strings"
)

// RoundTrip returns nil when encoding/json carries every value of t
// whole: what it encodes decodes back to the value that was encoded, so
// what a step hands the body on its first execution is what a resumed run
// decodes from the journal. Otherwise the error names the part of t that
// would change, and the fix. It is Journalable (what JSON can encode and
// decode at all) followed by Lossless (what it would drop or change).
// Values that cannot round-trip only at run time (NaN, invalid UTF-8)
// are the runtime's to refuse.
func RoundTrip(t types.Type, q types.Qualifier) error {
	if err := Journalable(t, q); err != nil {
		return err
	}
	return Lossless(t, q)
}

// Lossless returns nil when JSON carries all of a value of t that it can
// encode, and otherwise an error naming what it would drop or change:
//
//   - a field it leaves out: unexported (an embedded unexported struct
//     promotes its exported fields, and is followed), or tagged json:"-";
//   - a field that loses to another of the same JSON name (encoding/json
//     keeps the shallowest, a tagged one among equals, and drops both
//     when still tied);
//   - a one-way marshaller: MarshalJSON without UnmarshalJSON or the
//     reverse, the same for MarshalText and UnmarshalText;
//   - a marshaller promoted from an embedded field into a struct with
//     other fields, which JSON would then encode as the embedded value
//     alone (type Event struct{ time.Time; Name string });
//   - a MarshalJSON or MarshalText with a pointer receiver on a value
//     encoding/json meets unaddressable (a map value): it encodes the
//     value field by field but decodes it with the Unmarshal method;
//   - an embedded pointer to an unexported struct, which encoding/json
//     cannot allocate when decoding;
//   - a map key whose text encoding/json writes one way and reads another
//     (a string-kinded key with an UnmarshalText method).
//
// A type whose JSON its own methods decide, both ways, is trusted for its
// contents (time.Time).
func Lossless(t types.Type, q types.Qualifier) error {
	c := &lossless{q: q, seen: map[losslessKey]bool{}}
	// The runtime encodes a journaled value through a pointer to it, as it
	// decodes it, so the value itself is addressable.
	return c.check(t, true)
}

type losslessKey struct {
	t           types.Type
	addressable bool
}

type lossless struct {
	q    types.Qualifier
	seen map[losslessKey]bool
}

func (c *lossless) str(t types.Type) string { return types.TypeString(t, c.q) }

func (c *lossless) check(t types.Type, addressable bool) error {
	t = types.Unalias(t)
	k := losslessKey{t, addressable}
	if c.seen[k] {
		return nil // recursive type: checked further up
	}
	c.seen[k] = true
	if err := c.marshallers(t, addressable); err != nil {
		return err
	}
	if Opaque(t) {
		return nil // its methods decide, both ways
	}
	switch u := t.Underlying().(type) {
	case *types.Pointer:
		return c.check(u.Elem(), true)
	case *types.Slice:
		return c.check(u.Elem(), true)
	case *types.Array:
		return c.check(u.Elem(), addressable)
	case *types.Map:
		if err := c.mapKey(u.Key()); err != nil {
			return err
		}
		return c.check(u.Elem(), false)
	case *types.Struct:
		return c.structFields(t, u, addressable)
	}
	return nil
}

// marshallers refuses a one-way marshaller of t, a marshaller promoted
// into a struct with other fields, and a pointer-receiver marshaller on an
// unaddressable value.
func (c *lossless) marshallers(t types.Type, addressable bool) error {
	if _, ok := t.Underlying().(*types.Interface); ok {
		return nil
	}
	ptr := types.NewMethodSet(types.NewPointer(t))
	val := types.NewMethodSet(t)
	for _, pair := range [][2]string{{"MarshalJSON", "UnmarshalJSON"}, {"MarshalText", "UnmarshalText"}} {
		if pair[0] == "MarshalText" && ptr.Lookup(nil, "MarshalJSON") != nil && ptr.Lookup(nil, "UnmarshalJSON") != nil {
			break // the JSON pair decides; the text pair is not used
		}
		m, u := ptr.Lookup(nil, pair[0]), ptr.Lookup(nil, pair[1])
		switch {
		case m == nil && u == nil:
			continue
		case m == nil:
			return fmt.Errorf("%s has %s but no %s, so JSON encodes it one way and decodes it another: add %s, or drop %s", c.str(t), pair[1], pair[0], pair[0], pair[1])
		case u == nil:
			return fmt.Errorf("%s has %s but no %s, so JSON encodes it one way and decodes it another: add %s (on *%s), or drop %s", c.str(t), pair[0], pair[1], pair[1], c.str(t), pair[0])
		}
		if st, ok := t.Underlying().(*types.Struct); ok && len(m.Index()) > 1 {
			if other := otherFields(st, m.Index()[0]); other != "" {
				return fmt.Errorf("%s embeds %s, whose %s it promotes, so JSON encodes only that field and drops %s: name the embedded field (give it a field name)", c.str(t), c.str(st.Field(m.Index()[0]).Type()), pair[0], other)
			}
		}
		if !addressable && val.Lookup(nil, pair[0]) == nil {
			return fmt.Errorf("%s of %s has a pointer receiver, and encoding/json meets this %s unaddressable (a map value), so it encodes it field by field but decodes it with %s: declare %s on %s itself, or store a *%s", pair[0], c.str(t), c.str(t), pair[1], pair[0], c.str(t), c.str(t))
		}
		return nil
	}
	return nil
}

// otherFields names the fields of s but the embedded one at index that
// JSON would encode on their own, or "".
func otherFields(s *types.Struct, index int) string {
	var names []string
	for i := 0; i < s.NumFields(); i++ {
		f := s.Field(i)
		if i == index || reflect.StructTag(s.Tag(i)).Get("json") == "-" || !f.Exported() && !f.Embedded() {
			continue
		}
		names = append(names, f.Name())
	}
	return strings.Join(names, ", ")
}

// mapKey refuses a map key whose text encoding/json writes with one rule
// and reads with another: a string-kinded key it writes as the string and
// reads with UnmarshalText.
func (c *lossless) mapKey(k types.Type) error {
	b, ok := k.Underlying().(*types.Basic)
	if !ok || b.Info()&types.IsString == 0 {
		return nil
	}
	if types.NewMethodSet(types.NewPointer(k)).Lookup(nil, "UnmarshalText") != nil {
		return fmt.Errorf("map key %s is a string with an UnmarshalText method: encoding/json writes such a key as the string itself but reads it with UnmarshalText; use a key type without UnmarshalText, or a non-string one with both MarshalText and UnmarshalText", c.str(k))
	}
	return nil
}

// structFields refuses the fields JSON would drop and follows the rest.
func (c *lossless) structFields(t types.Type, u *types.Struct, addressable bool) error {
	for i := 0; i < u.NumFields(); i++ {
		f := u.Field(i)
		inner, embeddedStruct := Deref(types.Unalias(f.Type())).Underlying().(*types.Struct)
		_, ptr := types.Unalias(f.Type()).Underlying().(*types.Pointer)
		switch {
		case !f.Exported() && !(f.Embedded() && embeddedStruct):
			return fmt.Errorf("field %s of %s is unexported, so JSON does not carry it: export it", f.Name(), c.str(t))
		case reflect.StructTag(u.Tag(i)).Get("json") == "-":
			return fmt.Errorf("field %s of %s is tagged json:\"-\", so JSON does not carry it: drop the tag", f.Name(), c.str(t))
		case f.Embedded() && !f.Exported() && ptr && inner != nil && reflect.StructTag(u.Tag(i)).Get("json") == "":
			return fmt.Errorf("field %s of %s embeds a pointer to an unexported struct, which encoding/json cannot allocate when it decodes: embed the struct itself, or name the field", f.Name(), c.str(t))
		}
	}
	if err := c.duplicates(t, u); err != nil {
		return err
	}
	for i := 0; i < u.NumFields(); i++ {
		if err := c.check(u.Field(i).Type(), addressable); err != nil {
			return err
		}
	}
	return nil
}

// duplicates refuses fields of t that lose to another of their JSON name.
func (c *lossless) duplicates(t types.Type, s *types.Struct) error {
	kept := map[string]types.Type{}
	for _, f := range Fields(s) {
		kept[f.key] = f.typ
	}
	byKey := map[string][]string{}
	for _, f := range allFields(s) {
		byKey[f.key] = append(byKey[f.key], f.name)
	}
	for _, f := range allFields(s) {
		names := byKey[f.key]
		if len(names) < 2 {
			continue
		}
		if _, ok := kept[f.key]; ok {
			return fmt.Errorf("fields %s of %s have the JSON name %q, so JSON keeps one and drops the others: give each its own name (a json tag)", strings.Join(names, " and "), c.str(t), f.key)
		}
		return fmt.Errorf("fields %s of %s have the JSON name %q, so JSON drops all of them: give each its own name (a json tag)", strings.Join(names, " and "), c.str(t), f.key)
	}
	return nil
}

// namedField is a field encoding/json considers, with its Go name.
type namedField struct {
	key, name string
}

// allFields lists, by JSON name, every field encoding/json considers for
// s before it resolves conflicts: the fields Fields keeps and those it
// drops, promoted ones included.
func allFields(s *types.Struct) []namedField {
	var out []namedField
	visited := map[*types.Struct]bool{}
	var walk func(st *types.Struct, prefix string)
	walk = func(st *types.Struct, prefix string) {
		if visited[st] {
			return
		}
		visited[st] = true
		for i := 0; i < st.NumFields(); i++ {
			f := st.Field(i)
			tag := reflect.StructTag(st.Tag(i)).Get("json")
			if tag == "-" {
				continue
			}
			name, _, _ := strings.Cut(tag, ",")
			if f.Embedded() {
				inner, isStruct := Deref(types.Unalias(f.Type())).Underlying().(*types.Struct)
				if !f.Exported() && !isStruct {
					continue
				}
				if name == "" && isStruct {
					walk(inner, prefix+f.Name()+".")
					continue
				}
			} else if !f.Exported() {
				continue
			}
			if name == "" {
				name = f.Name()
			}
			out = append(out, namedField{key: name, name: prefix + f.Name()})
		}
	}
	walk(s, "")
	return out
}
