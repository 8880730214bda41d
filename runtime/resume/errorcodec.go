package resume

import (
	"context"
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"

	"github.com/resumegen/resumegen/runtime/journal"
)

// An error a step returned is journaled as its text (the error column) and
// a detail (JSON) holding the identities a workflow body can test: the
// sentinels and the types the generator saw the body compare with, as
// listed in WorkflowDef.Errors, plus the built-in ones (context.Canceled,
// context.DeadlineExceeded, this package's exported sentinels). On replay
// decodeStepError rebuilds an error that answers those tests as the
// original did:
//
//   - Error() is the journaled text.
//   - When the original was a known sentinel, the replayed error is that
//     sentinel, so == and switch cases match.
//   - When the original was a value of a known type, the replayed error is
//     a value of that type decoded from its JSON, so type assertions and
//     type switches match. Its exported fields of type error (the error it
//     wraps, typically) are journaled as errors of their own and restored,
//     so its Unwrap still reaches what it wrapped: errors.Is and errors.As
//     match what they matched before. Should the decoded value reach fewer
//     identities than the original did (a custom MarshalJSON that drops its
//     wrapped error), errors.Is matching wins: the replayed error is then a
//     wrapper whose Unwrap lists the decoded value first and the
//     identities it no longer reaches after it; a type assertion on it
//     fails, errors.As still finds the value.
//   - Otherwise the replayed error's Unwrap() []error lists the decoded
//     identities in the order errors.Is and errors.As visit them (depth
//     first), so wrapping with fmt.Errorf("...: %w") and errors.Join keeps
//     matching, and errors.As finds the same node first.
//   - IsPermanent of the replayed error equals IsPermanent of the original;
//     an error that was itself Permanent(x) replays as Permanent(x').
//
// Identities the definition does not know (the body does not test them)
// replay as text only.

// ErrorDef makes one error identity survive the journal: a sentinel the
// workflow body compares with, or a type it tests for. For generated code
// only.
type ErrorDef struct {
	id string
	// sentinel is the sentinel's value, for ErrorSentinel.
	sentinel error
	// match, for ErrorType, returns the node as a value of the type: direct
	// is true when the node is of the type itself, false when it only
	// answered an As method.
	match func(node error) (v error, direct bool)
	// decode, for ErrorType, decodes a value of the type from its JSON and
	// hands fields, when not nil, the struct it points to or is, to set.
	decode func(value json.RawMessage, fields func(reflect.Value) error) (error, error)
}

// builtinErrors are the identities every workflow's errors keep.
var builtinErrors = []ErrorDef{
	ErrorSentinel("context.Canceled", context.Canceled),
	ErrorSentinel("context.DeadlineExceeded", context.DeadlineExceeded),
	ErrorSentinel(resumePkg+".ErrRunNotFound", ErrRunNotFound),
	ErrorSentinel(resumePkg+".ErrStepNotFound", ErrStepNotFound),
	ErrorSentinel(resumePkg+".ErrNotInFlight", ErrNotInFlight),
	ErrorSentinel(resumePkg+".ErrRunBusy", ErrRunBusy),
	ErrorSentinel(resumePkg+".ErrLeaseLost", ErrLeaseLost),
	ErrorSentinel(resumePkg+".ErrRunConflict", ErrRunConflict),
	ErrorSentinel(resumePkg+".ErrNoRunReady", journal.ErrNoRunReady),
	ErrorSentinel(resumePkg+".ErrNotFailed", ErrNotFailed),
	ErrorSentinel(resumePkg+".ErrNotVersionStop", ErrNotVersionStop),
	ErrorSentinel(resumePkg+".ErrRunFailed", ErrRunFailed),
	ErrorSentinel(resumePkg+".ErrNeedsAttention", ErrNeedsAttention),
	ErrorSentinel(resumePkg+".ErrRunCancelled", ErrRunCancelled),
	ErrorSentinel(resumePkg+".ErrTimeout", ErrTimeout),
	ErrorSentinel(resumePkg+".ErrRunWaiting", ErrRunWaiting),
	ErrorSentinel(resumePkg+".ErrRunFinished", ErrRunFinished),
	ErrorSentinel(resumePkg+".ErrDeadline", ErrDeadline),
	ErrorType[*StopError]("*" + resumePkg + ".StopError"),
}

const resumePkg = "github.com/resumegen/resumegen/runtime/resume"

// Limits that keep a cyclic or pathological chain from looping.
const (
	maxErrorNodes = 256 // chain nodes visited per error
	maxErrorDepth = 8   // errors nested in typed values' fields
)

// errorDetail is the journaled detail of a step error.
type errorDetail struct {
	// PermanentTop: the error was Permanent(x); the rest describes x.
	PermanentTop bool `json:"permanentTop,omitempty"`
	// Permanent: a Permanent mark sits below the top of the chain.
	Permanent bool `json:"permanent,omitempty"`
	// Chain lists the known identities in the order errors.Is visits the
	// nodes that have them.
	Chain []errorNode `json:"chain,omitempty"`
}

// errorNode is one known identity found in a chain.
type errorNode struct {
	ID string `json:"id"`
	// Top: the identity is the top of the chain itself (the sentinel, or
	// a value of the type), not a node below it or an Is/As answer.
	Top bool `json:"top,omitempty"`
	// Value is a typed identity's JSON.
	Value json.RawMessage `json:"value,omitempty"`
	// Fields are a typed identity's exported fields of type error, by Go
	// field name, journaled as errors of their own.
	Fields map[string]journaledErr `json:"fields,omitempty"`
	// Lost says why a typed identity's value could not be journaled; its
	// replay then fails loudly instead of answering wrongly.
	Lost string `json:"lost,omitempty"`
}

// journaledErr is an error nested in a typed identity's field.
type journaledErr struct {
	Text   string          `json:"text"`
	Detail json.RawMessage `json:"detail,omitempty"`
}

// encodeStepError returns the JSON detail to journal beside err's text for
// err, which the body of a run of def received from a step. It is nil when
// err is nil or has neither a known identity nor a Permanent mark. def may
// be nil: then only the built-in identities are known.
func encodeStepError(def *WorkflowDef, err error) json.RawMessage {
	return encodeErrorDepth(def, err, 0)
}

func encodeErrorDepth(def *WorkflowDef, err error, depth int) json.RawMessage {
	if err == nil {
		return nil
	}
	var d errorDetail
	if p, ok := err.(*permanentError); ok {
		d.PermanentTop = true
		err = p.err
		for {
			p, ok := err.(*permanentError)
			if !ok {
				break
			}
			err = p.err
		}
	}
	enc := &errorEncoder{defs: errorDefs(def), def: def, depth: depth}
	enc.walk(err, true)
	d.Chain, d.Permanent = enc.chain, enc.permanent
	if !d.PermanentTop && !d.Permanent && len(d.Chain) == 0 {
		return nil
	}
	b, jerr := json.Marshal(d)
	if jerr != nil {
		// Every part was marshaled alone before, so this should not
		// happen; if it does, the replay fails loudly rather than wrongly.
		b, _ = json.Marshal(errorDetail{Chain: []errorNode{{ID: "?", Lost: jerr.Error()}}})
	}
	return b
}

// errorDefs is def's identities, then the built-in ones.
func errorDefs(def *WorkflowDef) [][]ErrorDef {
	if def == nil || len(def.Errors) == 0 {
		return [][]ErrorDef{builtinErrors}
	}
	return [][]ErrorDef{def.Errors, builtinErrors}
}

// errorEncoder walks one chain.
type errorEncoder struct {
	defs      [][]ErrorDef
	def       *WorkflowDef
	depth     int
	visited   int
	seen      map[string]bool // sentinel ids recorded: one node each is enough
	chain     []errorNode
	permanent bool
	truncated bool // the chain was cut at maxErrorNodes: replay fails loudly
}

// walk visits err and what it wraps the way errors.Is does: the node, then
// Unwrap() error, or each of Unwrap() []error, depth first.
func (enc *errorEncoder) walk(err error, top bool) {
	for err != nil {
		if enc.visited++; enc.visited > maxErrorNodes {
			if !enc.truncated {
				enc.truncated = true
				enc.chain = append(enc.chain, errorNode{ID: "?", Lost: fmt.Sprintf("its chain has more than %d errors", maxErrorNodes)})
			}
			return
		}
		if _, ok := err.(*permanentError); ok && !top {
			enc.permanent = true
		} else {
			enc.record(err, top)
		}
		top = false
		switch u := err.(type) {
		case interface{ Unwrap() error }:
			err = u.Unwrap()
		case interface{ Unwrap() []error }:
			for _, e := range u.Unwrap() {
				enc.walk(e, false)
			}
			return
		default:
			return
		}
	}
}

// record appends the identities err has as a node: a sentinel it equals
// or whose Is method claims it, a type it is or whose As method yields.
func (enc *errorEncoder) record(err error, top bool) {
	for _, defs := range enc.defs {
		for i := range defs {
			d := &defs[i]
			if d.sentinel != nil {
				eq := sameError(err, d.sentinel)
				if enc.seen[d.id] || !eq && !isClaims(err, d.sentinel) {
					continue
				}
				if enc.seen == nil {
					enc.seen = map[string]bool{}
				}
				enc.seen[d.id] = true
				enc.chain = append(enc.chain, errorNode{ID: d.id, Top: top && eq})
				continue
			}
			if d.match == nil {
				continue
			}
			if v, direct := d.match(err); v != nil {
				enc.chain = append(enc.chain, enc.typedNode(d.id, v, top && direct))
			}
		}
	}
}

// typedNode journals a value of a known type: its JSON with its exported
// error fields cleared, and those fields as errors of their own.
func (enc *errorEncoder) typedNode(id string, v error, top bool) errorNode {
	n := errorNode{ID: id, Top: top}
	val, fields := clearErrorFields(v)
	b, err := json.Marshal(val)
	if err != nil {
		n.Lost = err.Error()
		return n
	}
	n.Value = b
	for name, fe := range fields {
		if n.Fields == nil {
			n.Fields = map[string]journaledErr{}
		}
		if enc.depth >= maxErrorDepth {
			n.Lost = fmt.Sprintf("errors nested more than %d deep in typed values' fields", maxErrorDepth)
			return n
		}
		n.Fields[name] = journaledErr{Text: fe.Error(), Detail: encodeErrorDepth(enc.def, fe, enc.depth+1)}
	}
	return n
}

var errorType = reflect.TypeFor[error]()

// clearErrorFields returns v, or a copy of it whose exported non-nil
// fields of type error are nil, and those fields' values by name. Values
// that marshal themselves are returned as they are.
func clearErrorFields(v error) (any, map[string]error) {
	switch v.(type) {
	case json.Marshaler, encoding.TextMarshaler:
		return v, nil
	}
	rv := reflect.ValueOf(v)
	ptr := rv.Kind() == reflect.Pointer
	if ptr {
		if rv.IsNil() {
			return v, nil
		}
		rv = rv.Elem()
	}
	if rv.Kind() != reflect.Struct {
		return v, nil
	}
	var fields map[string]error
	var cp reflect.Value
	t := rv.Type()
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() || f.Type != errorType || rv.Field(i).IsNil() {
			continue
		}
		if fields == nil {
			fields = map[string]error{}
			cp = reflect.New(t).Elem()
			cp.Set(rv)
		}
		fields[f.Name] = rv.Field(i).Interface().(error)
		cp.Field(i).SetZero()
	}
	if fields == nil {
		return v, nil
	}
	if ptr {
		return cp.Addr().Interface(), fields
	}
	return cp.Interface(), fields
}

// sameError reports err == target without panicking on a dynamic type
// that cannot be compared.
func sameError(err, target error) (same bool) {
	if !reflect.TypeOf(target).Comparable() || !reflect.TypeOf(err).Comparable() {
		return false
	}
	defer func() {
		if recover() != nil {
			same = false
		}
	}()
	return err == target
}

// isClaims reports whether err's own Is method claims target.
func isClaims(err, target error) bool {
	x, ok := err.(interface{ Is(error) bool })
	return ok && x.Is(target)
}

// errNotReplayable is in the chain of the error decodeStepError returns
// for a detail it cannot decode (a corrupt row, or a typed value that
// could not be journaled): the caller reports it, as a corrupt journal,
// rather than hand the body an error that would answer its tests wrongly.
var errNotReplayable = errors.New("journaled step error cannot be replayed")

// decodeStepError rebuilds the error a step returned from its journaled
// text and detail (see encodeStepError): same Error() text, the same
// answers to errors.Is, errors.As, ==, type assertions and IsPermanent for
// the identities def knows. A detail that cannot be decoded yields an
// error wrapping errNotReplayable that says why; it never panics.
func decodeStepError(def *WorkflowDef, text string, detail json.RawMessage) error {
	return decodeErrorDepth(def, text, detail, 0)
}

func decodeErrorDepth(def *WorkflowDef, text string, detail json.RawMessage, depth int) error {
	if len(detail) == 0 || string(detail) == "null" {
		return &journaledError{text: text}
	}
	if depth > maxErrorDepth {
		return fmt.Errorf("%w: errors nested more than %d deep", errNotReplayable, maxErrorDepth)
	}
	var d errorDetail
	if err := json.Unmarshal(detail, &d); err != nil {
		return fmt.Errorf("%w: %v", errNotReplayable, err)
	}
	dec := &errorDecoder{defs: errorDefs(def), def: def, depth: depth}
	err, derr := dec.rebuild(text, &d)
	if derr != nil {
		return fmt.Errorf("%w: %v", errNotReplayable, derr)
	}
	if d.PermanentTop {
		return &permanentError{err: err}
	}
	return err
}

// errorDecoder rebuilds one error.
type errorDecoder struct {
	defs  [][]ErrorDef
	def   *WorkflowDef
	depth int
}

func (dec *errorDecoder) lookup(id string) *ErrorDef {
	for _, defs := range dec.defs {
		for i := range defs {
			if defs[i].id == id {
				return &defs[i]
			}
		}
	}
	return nil
}

// rebuild decodes the chain's identities and picks the replayed error.
func (dec *errorDecoder) rebuild(text string, d *errorDetail) (error, error) {
	var nodes []error
	var top error
	topSentinel := false
	for i, n := range d.Chain {
		v, err := dec.node(n)
		if err != nil {
			return nil, fmt.Errorf("identity %d (%s): %w", i+1, n.ID, err)
		}
		if v == nil {
			continue // no longer known: text only
		}
		if n.Top && top == nil {
			top, topSentinel = v, n.Value == nil
		}
		nodes = append(nodes, v)
	}
	// A sentinel is the very value the body compared with: it reaches
	// what it reached. A typed value must reach every other identity.
	if top != nil && (topSentinel || reachesAll(top, nodes)) {
		return top, nil
	}
	return &journaledError{text: text, wrapped: nodes, permanent: d.Permanent}, nil
}

// node decodes one identity; nil, nil when def no longer knows its id.
func (dec *errorDecoder) node(n errorNode) (error, error) {
	if n.Lost != "" {
		return nil, fmt.Errorf("its value was not journaled: %s", n.Lost)
	}
	def := dec.lookup(n.ID)
	if def == nil || def.sentinel == nil && def.decode == nil {
		return nil, nil
	}
	if def.sentinel != nil {
		return def.sentinel, nil
	}
	if n.Value == nil {
		return nil, errors.New("no value")
	}
	var fields func(reflect.Value) error
	if len(n.Fields) > 0 {
		fields = func(rv reflect.Value) error { return dec.setFields(rv, n.Fields) }
	}
	v, err := def.decode(n.Value, fields)
	if err != nil {
		return nil, fmt.Errorf("decode value: %w", err)
	}
	return v, nil
}

// setFields sets the error fields of the struct rv to their decoded
// errors.
func (dec *errorDecoder) setFields(rv reflect.Value, fields map[string]journaledErr) error {
	for name, je := range fields {
		f := rv.FieldByName(name)
		if !f.IsValid() || !f.CanSet() || f.Type() != errorType {
			return fmt.Errorf("field %s: not an exported field of type error", name)
		}
		fe := decodeErrorDepth(dec.def, je.Text, je.Detail, dec.depth+1)
		if errors.Is(fe, errNotReplayable) {
			return fmt.Errorf("field %s: %w", name, fe)
		}
		f.Set(reflect.ValueOf(&fe).Elem())
	}
	return nil
}

// reachesAll reports whether errors.Is or errors.As reach every identity
// of want from v.
func reachesAll(v error, want []error) bool {
	for _, w := range want {
		if !reaches(v, w) {
			return false
		}
	}
	return true
}

// reaches reports whether the chain of v holds w, or a value of w's
// dynamic type (for a typed identity).
func reaches(v, w error) bool {
	if reflect.TypeOf(w).Comparable() && errors.Is(v, w) {
		return true
	}
	target := reflect.New(reflect.TypeOf(w))
	return errors.As(v, target.Interface())
}

// journaledError is a replayed step error that is none of its known
// identities itself: its text, and the identities it wrapped.
type journaledError struct {
	text      string
	wrapped   []error
	permanent bool
}

func (e *journaledError) Error() string { return e.text }

// Unwrap returns the decoded identities in the order the original chain
// held them.
func (e *journaledError) Unwrap() []error { return e.wrapped }

// As answers IsPermanent for a chain that held a Permanent mark below its
// top.
func (e *journaledError) As(target any) bool {
	if p, ok := target.(**permanentError); ok && e.permanent {
		*p = &permanentError{err: e}
		return true
	}
	return false
}
