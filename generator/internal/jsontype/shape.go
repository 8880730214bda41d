package jsontype

import (
	"go/types"
	"reflect"
	"sort"
	"strconv"
	"strings"
)

// Shape renders the JSON shape of values of t, as encoding/json
// encodes and decodes them, as manifest lines prefixed by role ("result",
// "out arg 3", "input arg 2", "output"): one line per JSON field of each
// named struct type reachable from t, and one line per named type of
// another kind, each named type visited once so that recursive types end:
//
//	result Priced: Cents int
//	result Priced: currency string omitempty
//	result Priced: items []Item
//	result Item: SKU string
//	result Cents: type int64
//
// A field is its JSON key, its type and the tag options that change its
// encoding. Fields JSON ignores (unexported, json:"-") are left out, and
// embedded structs are flattened as encoding/json flattens them. A type
// whose JSON is decided by its own methods (json.Marshaler,
// json.Unmarshaler, encoding.TextMarshaler, encoding.TextUnmarshaler) is
// opaque: it appears by its name and is not looked into. Lines never
// contain ": " after the owner's name, so a diff can put its mark there.
// A type with nothing to list (int, []string, time.Time) has no lines:
// the step's signature already says all of it.
func Shape(role string, t types.Type, q types.Qualifier) []string {
	r := NewRenderer(q)
	r.typ(t)
	var lines []string
	for i := 0; i < len(r.queue); i++ {
		n := r.queue[i]
		owner := role + " " + types.TypeString(n, q) + ": "
		if s, ok := n.Underlying().(*types.Struct); ok {
			fields := r.fields(s)
			if len(fields) == 0 {
				lines = append(lines, owner+"{}")
			}
			for _, f := range fields {
				lines = append(lines, owner+f)
			}
			continue
		}
		lines = append(lines, owner+"type "+r.typ(n.Underlying()))
	}
	return lines
}

// Renderer writes types as they appear in shape lines and queues the
// named types whose own lines follow.
type Renderer struct {
	q     types.Qualifier
	seen  map[string]bool // named types already queued, by TypeString
	queue []*types.Named
}

// typ renders t inline: a named type by its name (queued for its own
// lines unless opaque), anything else structurally.
func (r *Renderer) typ(t types.Type) string {
	t = types.Unalias(t)
	switch u := t.(type) {
	case *types.Named:
		name := types.TypeString(u, r.q)
		if !Opaque(u) && !r.seen[name] {
			r.seen[name] = true
			r.queue = append(r.queue, u)
		}
		return name
	case *types.Pointer:
		return "*" + r.typ(u.Elem())
	case *types.Slice:
		return "[]" + r.typ(u.Elem())
	case *types.Array:
		return "[" + strconv.FormatInt(u.Len(), 10) + "]" + r.typ(u.Elem())
	case *types.Map:
		return "map[" + r.typ(u.Key()) + "]" + r.typ(u.Elem())
	case *types.Struct:
		if Opaque(u) { // an embedded time.Time promotes its methods
			return types.TypeString(u, r.q)
		}
		return "struct{" + strings.Join(r.fields(u), "; ") + "}"
	}
	return types.TypeString(t, r.q)
}

// Field is one field encoding/json encodes for a struct.
type Field struct {
	key    string
	typ    types.Type
	opts   []string // omitempty, omitzero, string
	tagged bool     // the key comes from a json tag
	depth  int      // embedding depth: 0 for the struct's own fields
}

// fields renders the JSON fields of s, sorted by key: the order of
// fields in the struct does not change its JSON.
func (r *Renderer) fields(s *types.Struct) []string {
	var out []string
	for _, f := range Fields(s) {
		line := f.key + " " + r.typ(f.typ)
		if len(f.opts) > 0 {
			line += " " + strings.Join(f.opts, ",")
		}
		out = append(out, line)
	}
	return out
}

// Fields lists the fields encoding/json encodes for s, following its
// rules: unexported and json:"-" fields are skipped, an embedded struct
// without a json name has its fields promoted, and of several fields with
// one key the shallowest wins, a tagged one among equals, none if still
// tied. Sorted by key.
func Fields(s *types.Struct) []Field {
	var all []Field
	visited := map[*types.Struct]bool{}
	level := []*types.Struct{s}
	for depth := 0; len(level) > 0; depth++ {
		var next []*types.Struct
		for _, st := range level {
			if visited[st] {
				continue
			}
			visited[st] = true
			for i := 0; i < st.NumFields(); i++ {
				f := st.Field(i)
				tag := reflect.StructTag(st.Tag(i)).Get("json")
				if tag == "-" {
					continue
				}
				name, opts, _ := strings.Cut(tag, ",")
				if f.Embedded() {
					inner, isStruct := Deref(types.Unalias(f.Type())).Underlying().(*types.Struct)
					if !f.Exported() && !isStruct {
						continue
					}
					if name == "" && isStruct {
						next = append(next, inner)
						continue
					}
				} else if !f.Exported() {
					continue
				}
				jf := Field{key: name, typ: f.Type(), tagged: name != "", depth: depth}
				if name == "" {
					jf.key = f.Name()
				}
				for _, o := range strings.Split(opts, ",") {
					switch o {
					case "omitempty", "omitzero", "string":
						jf.opts = append(jf.opts, o)
					}
				}
				all = append(all, jf)
			}
		}
		level = next
	}
	sort.SliceStable(all, func(i, j int) bool {
		if all[i].key != all[j].key {
			return all[i].key < all[j].key
		}
		if all[i].depth != all[j].depth {
			return all[i].depth < all[j].depth
		}
		return all[i].tagged && !all[j].tagged
	})
	var out []Field
	for i := 0; i < len(all); {
		j := i + 1
		for j < len(all) && all[j].key == all[i].key {
			j++
		}
		// all[i] is the shallowest, tagged first: it wins unless another
		// field at its depth ties with it.
		if j == i+1 || all[i+1].depth > all[i].depth || all[i].tagged && !all[i+1].tagged {
			out = append(out, all[i])
		}
		i = j
	}
	return out
}

// Opaque reports whether the JSON of t is decided by its own methods
// (on T or *T): MarshalJSON, UnmarshalJSON, MarshalText or UnmarshalText.
func Opaque(t types.Type) bool {
	if _, ok := t.Underlying().(*types.Interface); ok {
		return false
	}
	ms := types.NewMethodSet(types.NewPointer(t))
	for _, m := range []string{"MarshalJSON", "UnmarshalJSON", "MarshalText", "UnmarshalText"} {
		if methodSig(ms, m) != nil {
			return true
		}
	}
	return false
}
