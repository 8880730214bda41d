package resume

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// ErrShapeUnknown is returned by [CheckStepResult] when the manifest does
// not record what the step journals (it was stored by an older version of
// resumegen): the value cannot be checked.
var ErrShapeUnknown = errors.New("the manifest does not record what the step journals")

// CheckStepResult checks that result, JSON given by a person for the step
// named name (its StepDef.Name), has the shape of what that step journals,
// as manifest (a [WorkflowDef.Manifest], as stored in the journal) records
// it: the line "Name: journals T" and the step's shape lines. It refuses a
// value encoding/json would refuse, and also one it would silently bend: a
// key the type has no field for, a field the step always writes left out,
// null where the type cannot be nil, a number out of the type's range, an
// array of the wrong length. A type whose JSON its own methods decide is
// not looked into (time.Time must be an RFC 3339 string). It returns
// [ErrShapeUnknown] when the manifest does not say what the step journals.
func CheckStepResult(manifest, name string, result json.RawMessage) error {
	typ, named, ok := stepShape(manifest, name)
	if !ok {
		return fmt.Errorf("step %s: %w", name, ErrShapeUnknown)
	}
	dec := json.NewDecoder(bytes.NewReader(result))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return fmt.Errorf("the result is not valid JSON: %w", err)
	}
	if dec.More() {
		return errors.New("the result is more than one JSON value")
	}
	c := &shapeCheck{named: named}
	if err := c.check("result", typ, v, 0); err != nil {
		return fmt.Errorf("step %s journals %s: %w", name, typ, err)
	}
	return nil
}

// stepShape reads, from a manifest, the type step name journals and the
// shape lines of the named types it reaches: each named type's lines
// (struct fields, or "type U") by name.
func stepShape(manifest, name string) (typ string, named map[string][]string, ok bool) {
	named = map[string][]string{}
	prefix := name + ": "
	for _, l := range strings.Split(manifest, "\n") {
		l = strings.TrimSpace(l)
		rest, found := strings.CutPrefix(l, prefix)
		if !found {
			continue
		}
		if t, isType := strings.CutPrefix(rest, "journals "); isType {
			typ, ok = t, true
			continue
		}
		// "result Priced: Cents int", "out arg 3 Info: Email string"
		switch {
		case strings.HasPrefix(rest, "result "):
			rest = strings.TrimPrefix(rest, "result ")
		case strings.HasPrefix(rest, "out arg "):
			rest = strings.TrimPrefix(rest, "out arg ")
			if _, after, cut := strings.Cut(rest, " "); cut {
				rest = after
			}
		default:
			continue
		}
		owner, field, cut := strings.Cut(rest, ": ")
		if !cut {
			continue
		}
		named[owner] = append(named[owner], field)
	}
	return typ, named, ok
}

// shapeCheck checks JSON values against types written as shape lines
// write them.
type shapeCheck struct {
	named map[string][]string
}

const maxShapeDepth = 100

// check checks v (decoded with UseNumber) against the type written typ,
// at path.
func (c *shapeCheck) check(path, typ string, v any, depth int) error {
	if depth > maxShapeDepth {
		return fmt.Errorf("%s: nested more than %d deep", path, maxShapeDepth)
	}
	typ = strings.TrimSpace(typ)
	if v == nil {
		if c.nullable(typ) {
			return nil
		}
		return fmt.Errorf("%s: null, but it is a %s, which cannot be null", path, typ)
	}
	switch {
	case typ == "null":
		return fmt.Errorf("%s: the step journals nothing but null (it returns only an error), have %s", path, kindOf(v))
	case strings.HasPrefix(typ, "*"):
		return c.check(path, typ[1:], v, depth+1)
	case typ == "[]byte" || typ == "[]uint8":
		s, ok := v.(string)
		if !ok {
			return want(path, "a base64 string ([]byte)", v)
		}
		if _, err := base64.StdEncoding.DecodeString(s); err != nil {
			return fmt.Errorf("%s: %q is not base64 ([]byte): %v", path, s, err)
		}
		return nil
	case strings.HasPrefix(typ, "[]"):
		arr, ok := v.([]any)
		if !ok {
			return want(path, "an array ("+typ+")", v)
		}
		for i, e := range arr {
			if err := c.check(fmt.Sprintf("%s[%d]", path, i), typ[2:], e, depth+1); err != nil {
				return err
			}
		}
		return nil
	case strings.HasPrefix(typ, "["):
		end := strings.IndexByte(typ, ']')
		n, err := strconv.Atoi(typ[1:max(end, 1)])
		if end < 0 || err != nil {
			return nil // not a type this notation writes: trust it
		}
		arr, ok := v.([]any)
		if !ok {
			return want(path, "an array ("+typ+")", v)
		}
		if len(arr) != n {
			return fmt.Errorf("%s: want %d elements (%s), have %d", path, n, typ, len(arr))
		}
		for i, e := range arr {
			if err := c.check(fmt.Sprintf("%s[%d]", path, i), typ[end+1:], e, depth+1); err != nil {
				return err
			}
		}
		return nil
	case strings.HasPrefix(typ, "map["):
		key, elem, ok := splitMap(typ)
		if !ok {
			return nil
		}
		obj, isObj := v.(map[string]any)
		if !isObj {
			return want(path, "an object ("+typ+")", v)
		}
		for _, k := range sortedKeys(obj) {
			if err := c.mapKey(path, key, k); err != nil {
				return err
			}
			if err := c.check(path+"["+strconv.Quote(k)+"]", elem, obj[k], depth+1); err != nil {
				return err
			}
		}
		return nil
	case strings.HasPrefix(typ, "struct{"):
		return c.object(path, typ, splitFields(strings.TrimSuffix(strings.TrimPrefix(typ, "struct{"), "}")), v, depth)
	case typ == "any" || strings.HasPrefix(typ, "interface"):
		return nil
	}
	if err, basic := checkBasic(path, typ, v); basic {
		return err
	}
	lines, known := c.named[typ]
	if !known {
		if typ == "time.Time" {
			s, ok := v.(string)
			if !ok {
				return want(path, "an RFC 3339 time string (time.Time)", v)
			}
			if _, err := time.Parse(time.RFC3339Nano, s); err != nil {
				return fmt.Errorf("%s: %q is not an RFC 3339 time (time.Time)", path, s)
			}
		}
		// A type whose JSON its own methods decide: not looked into.
		return nil
	}
	if len(lines) == 1 && strings.HasPrefix(lines[0], "type ") {
		return c.check(path, strings.TrimPrefix(lines[0], "type "), v, depth+1)
	}
	if len(lines) == 1 && lines[0] == "{}" {
		lines = nil
	}
	return c.object(path, typ, lines, v, depth)
}

// object checks v against a struct's fields, each "key type [options]".
func (c *shapeCheck) object(path, typ string, fields []string, v any, depth int) error {
	type field struct {
		key, typ        string
		optional, asStr bool
	}
	var fs []field
	for _, l := range fields {
		key, rest, _ := strings.Cut(l, " ")
		t, opts := splitOptions(rest)
		if t == "" {
			// Not a field this notation writes (an embedded type whose
			// methods decide its JSON): trust the value.
			return nil
		}
		f := field{key: key, typ: t}
		for _, o := range strings.Split(opts, ",") {
			switch o {
			case "omitempty", "omitzero":
				f.optional = true
			case "string":
				f.asStr = true
			}
		}
		fs = append(fs, f)
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return want(path, "an object ("+typ+")", v)
	}
	seen := map[string]bool{}
	for _, k := range sortedKeys(obj) {
		// encoding/json matches a key to a field exactly, else ignoring case.
		match := -1
		for i, f := range fs {
			if f.key == k {
				match = i
				break
			}
			if match < 0 && strings.EqualFold(f.key, k) {
				match = i
			}
		}
		if match < 0 {
			names := make([]string, len(fs))
			for i, f := range fs {
				names[i] = f.key
			}
			return fmt.Errorf("%s: %s has no field %q (its fields: %s)", path, typ, k, strings.Join(names, ", "))
		}
		f := fs[match]
		seen[f.key] = true
		val := obj[k]
		if _, scalar := checkBasic("", strings.TrimPrefix(f.typ, "*"), nil); f.asStr && scalar && val != nil {
			// ",string": the value is JSON text inside a string.
			s, isStr := val.(string)
			if !isStr {
				return want(path+"."+f.key, "a string (the field is encoded as a string)", val)
			}
			d := json.NewDecoder(strings.NewReader(s))
			d.UseNumber()
			if err := d.Decode(&val); err != nil {
				return fmt.Errorf("%s.%s: %q does not hold a JSON value (the field is encoded as a string)", path, f.key, s)
			}
		}
		if err := c.check(path+"."+f.key, f.typ, val, depth+1); err != nil {
			return err
		}
	}
	var missing []string
	for _, f := range fs {
		if !f.optional && !seen[f.key] {
			missing = append(missing, f.key+" ("+f.typ+")")
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("%s: %s is missing %s, which the step always journals", path, typ, strings.Join(missing, ", "))
	}
	return nil
}

// nullable reports whether JSON null is a value of typ.
func (c *shapeCheck) nullable(typ string) bool {
	switch {
	case typ == "null", typ == "any", strings.HasPrefix(typ, "interface"),
		strings.HasPrefix(typ, "*"), strings.HasPrefix(typ, "[]"), strings.HasPrefix(typ, "map["):
		return true
	case strings.HasPrefix(typ, "[") || strings.HasPrefix(typ, "struct{"):
		return false
	}
	if _, basic := checkBasic("", typ, nil); basic {
		return false
	}
	lines, known := c.named[typ]
	if !known {
		return typ != "time.Time" // decided by its own methods
	}
	if len(lines) == 1 && strings.HasPrefix(lines[0], "type ") {
		return c.nullable(strings.TrimPrefix(lines[0], "type "))
	}
	return false
}

// mapKey checks a JSON object key against the map's key type.
func (c *shapeCheck) mapKey(path, key, k string) error {
	if lines, ok := c.named[key]; ok && len(lines) == 1 && strings.HasPrefix(lines[0], "type ") {
		key = strings.TrimPrefix(lines[0], "type ")
	}
	if bits, signed, isInt := intType(key); isInt {
		var err error
		if signed {
			_, err = strconv.ParseInt(k, 10, bits)
		} else {
			_, err = strconv.ParseUint(k, 10, bits)
		}
		if err != nil {
			return fmt.Errorf("%s: key %q is not an integer of type %s", path, k, key)
		}
	}
	return nil
}

// checkBasic checks v against a predeclared type; basic is false when typ
// is not one.
func checkBasic(path, typ string, v any) (err error, basic bool) {
	switch typ {
	case "string":
		if _, ok := v.(string); !ok && v != nil {
			return want(path, "a string", v), true
		}
		return nil, true
	case "bool":
		if _, ok := v.(bool); !ok && v != nil {
			return want(path, "true or false", v), true
		}
		return nil, true
	case "float32", "float64":
		n, ok := v.(json.Number)
		if v == nil {
			return nil, true
		}
		if !ok {
			return want(path, "a number ("+typ+")", v), true
		}
		f, ferr := strconv.ParseFloat(string(n), 64)
		if ferr != nil || typ == "float32" && math.Abs(f) > math.MaxFloat32 {
			return fmt.Errorf("%s: %s is out of range for %s", path, n, typ), true
		}
		return nil, true
	}
	bits, signed, isInt := intType(typ)
	if !isInt {
		return nil, false
	}
	if v == nil {
		return nil, true
	}
	n, ok := v.(json.Number)
	if !ok {
		return want(path, "an integer ("+typ+")", v), true
	}
	var perr error
	if signed {
		_, perr = strconv.ParseInt(string(n), 10, bits)
	} else {
		_, perr = strconv.ParseUint(string(n), 10, bits)
	}
	if perr != nil {
		return fmt.Errorf("%s: %s is not an integer of type %s", path, n, typ), true
	}
	return nil, true
}

// intType reports the size and signedness of a predeclared integer type.
func intType(typ string) (bits int, signed, ok bool) {
	switch typ {
	case "int", "int64":
		return 64, true, true
	case "int8":
		return 8, true, true
	case "int16":
		return 16, true, true
	case "int32", "rune":
		return 32, true, true
	case "uint", "uint64", "uintptr":
		return 64, false, true
	case "uint8", "byte":
		return 8, false, true
	case "uint16":
		return 16, false, true
	case "uint32":
		return 32, false, true
	}
	return 0, false, false
}

// splitMap splits "map[K]V" into K and V, brackets balanced.
func splitMap(typ string) (key, elem string, ok bool) {
	depth := 0
	for i := len("map"); i < len(typ); i++ {
		switch typ[i] {
		case '[', '{', '(':
			depth++
		case ']', '}', ')':
			depth--
			if depth == 0 && typ[i] == ']' {
				return typ[len("map["):i], typ[i+1:], true
			}
		}
	}
	return "", "", false
}

// splitFields splits the inside of "struct{a int; b []T}" at top-level
// semicolons.
func splitFields(s string) []string {
	var out []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '[', '{', '(':
			depth++
		case ']', '}', ')':
			depth--
		case ';':
			if depth == 0 {
				out = append(out, strings.TrimSpace(s[start:i]))
				start = i + 1
			}
		}
	}
	if rest := strings.TrimSpace(s[start:]); rest != "" {
		out = append(out, rest)
	}
	return out
}

// splitOptions splits "[]T omitempty,string" into the type and the
// options: the last top-level space-separated word, if it is made of
// option names.
func splitOptions(s string) (typ, opts string) {
	depth := 0
	last := -1
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '[', '{', '(':
			depth++
		case ']', '}', ')':
			depth--
		case ' ':
			if depth == 0 {
				last = i
			}
		}
	}
	if last < 0 {
		return s, ""
	}
	for _, o := range strings.Split(s[last+1:], ",") {
		if o != "omitempty" && o != "omitzero" && o != "string" {
			return s, ""
		}
	}
	return s[:last], s[last+1:]
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// want reports a value of the wrong JSON kind.
func want(path, what string, v any) error {
	return fmt.Errorf("%s: want %s, have %s", path, what, kindOf(v))
}

// kindOf describes a decoded JSON value for a person.
func kindOf(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		if len(x) > 40 {
			x = x[:40] + "..."
		}
		return "the string " + strconv.Quote(x)
	case json.Number:
		return "the number " + string(x)
	case bool:
		return "the boolean " + strconv.FormatBool(x)
	case []any:
		return fmt.Sprintf("an array of %d", len(x))
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

// StepSkeleton returns a JSON value of the shape of what the step named
// name journals, as manifest records it (see [CheckStepResult]): every
// field of every struct with a zero value ("" for a string, 0, false, []
// for a slice, {} for a map, null for a pointer or an interface, an RFC
// 3339 time for a time.Time), for a person to fill in (the web UI's
// signal and resolve forms). [CheckStepResult] accepts it. It returns
// [ErrShapeUnknown] when the manifest does not say what the step journals.
func StepSkeleton(manifest, name string) (json.RawMessage, error) {
	typ, named, ok := stepShape(manifest, name)
	if !ok {
		return nil, fmt.Errorf("step %s: %w", name, ErrShapeUnknown)
	}
	var b strings.Builder
	skeleton(&b, typ, named, 0)
	return json.RawMessage(b.String()), nil
}

// skeleton writes a zero value of the type written typ.
func skeleton(b *strings.Builder, typ string, named map[string][]string, depth int) {
	typ = strings.TrimSpace(typ)
	if depth > 20 {
		b.WriteString("null")
		return
	}
	switch {
	case typ == "null", typ == "any", strings.HasPrefix(typ, "interface"), strings.HasPrefix(typ, "*"):
		b.WriteString("null")
		return
	case typ == "[]byte" || typ == "[]uint8":
		b.WriteString(`""`)
		return
	case strings.HasPrefix(typ, "[]"):
		b.WriteString("[]")
		return
	case strings.HasPrefix(typ, "["):
		end := strings.IndexByte(typ, ']')
		n, err := strconv.Atoi(typ[1:max(end, 1)])
		if end < 0 || err != nil || n > 64 {
			b.WriteString("null")
			return
		}
		b.WriteString("[")
		for i := range n {
			if i > 0 {
				b.WriteString(",")
			}
			skeleton(b, typ[end+1:], named, depth+1)
		}
		b.WriteString("]")
		return
	case strings.HasPrefix(typ, "map["):
		b.WriteString("{}")
		return
	case strings.HasPrefix(typ, "struct{"):
		skeletonObject(b, splitFields(strings.TrimSuffix(strings.TrimPrefix(typ, "struct{"), "}")), named, depth)
		return
	case typ == "string":
		b.WriteString(`""`)
		return
	case typ == "bool":
		b.WriteString("false")
		return
	case typ == "time.Time":
		b.WriteString(`"2006-01-02T15:04:05Z"`)
		return
	}
	if _, basic := checkBasic("", typ, json.Number("0")); basic {
		b.WriteString("0")
		return
	}
	lines, known := named[typ]
	switch {
	case !known:
		b.WriteString("null") // a type whose JSON its own methods decide
	case len(lines) == 1 && strings.HasPrefix(lines[0], "type "):
		skeleton(b, strings.TrimPrefix(lines[0], "type "), named, depth+1)
	case len(lines) == 1 && lines[0] == "{}":
		b.WriteString("{}")
	default:
		skeletonObject(b, lines, named, depth)
	}
}

// skeletonObject writes a struct's fields, each "key type [options]", in
// their order.
func skeletonObject(b *strings.Builder, fields []string, named map[string][]string, depth int) {
	b.WriteString("{")
	n := 0
	for _, l := range fields {
		key, rest, _ := strings.Cut(l, " ")
		t, opts := splitOptions(rest)
		if t == "" {
			continue
		}
		if n > 0 {
			b.WriteString(",")
		}
		n++
		k, _ := json.Marshal(key)
		b.Write(k)
		b.WriteString(":")
		if slices.Contains(strings.Split(opts, ","), "string") {
			var inner strings.Builder
			skeleton(&inner, t, named, depth+1)
			q, _ := json.Marshal(inner.String())
			b.Write(q)
			continue
		}
		skeleton(b, t, named, depth+1)
	}
	b.WriteString("}")
}
