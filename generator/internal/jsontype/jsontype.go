// Package jsontype is what the generator knows of how encoding/json
// treats a Go type: whether its values survive a round trip through the
// journal, and the shape of what it encodes (which enters a workflow's
// version). The model, the checks and the emitter read it; it knows
// nothing of workflows.
package jsontype

import (
	"go/types"
)

// NewRenderer returns a renderer writing types as shape lines write them,
// qualified by q.
func NewRenderer(q types.Qualifier) *Renderer {
	return &Renderer{q: q, seen: map[string]bool{}}
}

// Type renders t as shape lines write it: a named type by its name,
// anything else structurally.
func (r *Renderer) Type(t types.Type) string { return r.typ(t) }

// TypeString is t written as shape lines write types.
func TypeString(t types.Type, q types.Qualifier) string { return NewRenderer(q).typ(t) }

// isError reports whether t is the predeclared error type.
func isError(t types.Type) bool { return types.Identical(t, types.Universe.Lookup("error").Type()) }
