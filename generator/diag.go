package generator

import (
	"fmt"
	"go/token"
	"path/filepath"
	"sort"
	"strings"
)

// Diagnostic is one refusal of the generator, positioned in the user's
// source like a compiler error.
type Diagnostic struct {
	// Pos is the position; Filename is relative to Config.Dir when the file
	// lies below it.
	Pos token.Position
	// Message says what is wrong and, where it can, how to fix it.
	Message string

	pos token.Pos // the unresolved position, for [Check]
}

// String renders the diagnostic as file:line:col: message.
func (d Diagnostic) String() string {
	if !d.Pos.IsValid() {
		return d.Message
	}
	return fmt.Sprintf("%s:%d:%d: %s", d.Pos.Filename, d.Pos.Line, d.Pos.Column, d.Message)
}

// diagnostics collects the diagnostics of one generator run.
type diagnostics struct {
	fset *token.FileSet
	base string // directory that file names are made relative to
	list []Diagnostic
}

// errorf records a diagnostic at pos.
func (ds *diagnostics) errorf(pos token.Pos, format string, args ...any) {
	ds.add(ds.fset.Position(pos), fmt.Sprintf(format, args...))
	ds.list[len(ds.list)-1].pos = pos
}

// add records a diagnostic at an already resolved position.
func (ds *diagnostics) add(p token.Position, msg string) {
	p.Filename = ds.rel(p.Filename)
	ds.list = append(ds.list, Diagnostic{Pos: p, Message: msg})
}

// rel makes an absolute file name relative to the base directory when the
// file lies below it, as go build prints positions.
func (ds *diagnostics) rel(name string) string {
	if name == "" || ds.base == "" || !filepath.IsAbs(name) {
		return name
	}
	r, err := filepath.Rel(ds.base, name)
	if err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
		return name
	}
	return r
}

// sorted returns the diagnostics ordered by file and position, without
// exact duplicates.
func (ds *diagnostics) sorted() []Diagnostic {
	out := append([]Diagnostic(nil), ds.list...)
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i].Pos, out[j].Pos
		if a.Filename != b.Filename {
			return a.Filename < b.Filename
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Column < b.Column
	})
	var dedup []Diagnostic
	for i, d := range out {
		if i > 0 && d == out[i-1] {
			continue
		}
		dedup = append(dedup, d)
	}
	return dedup
}
