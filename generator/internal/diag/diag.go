// Package diag collects the diagnostics of one generator run: refusals
// and warnings, each positioned in the user's source like a compiler
// error. Every stage of the pipeline reports through it; none prints.
package diag

import (
	"fmt"
	"go/token"
	"path/filepath"
	"sort"
	"strings"
)

// Diagnostic is one refusal (or warning) of the generator.
type Diagnostic struct {
	// Pos is the position; Filename is relative to the run's base
	// directory when the file lies below it.
	Pos token.Position
	// Message says what is wrong and, where it can, how to fix it.
	Message string
	// At is the unresolved position in the run's file set, NoPos when
	// the diagnostic was made from a resolved position; go vet reports it.
	At token.Pos
}

// String renders the diagnostic as file:line:col: message.
func (d Diagnostic) String() string {
	if !d.Pos.IsValid() {
		return d.Message
	}
	return fmt.Sprintf("%s:%d:%d: %s", d.Pos.Filename, d.Pos.Line, d.Pos.Column, d.Message)
}

// List collects diagnostics.
type List struct {
	// Fset resolves positions.
	Fset *token.FileSet
	// Base is the directory file names are made relative to; "" keeps
	// them as they are.
	Base  string
	items []Diagnostic
}

// New returns an empty list resolving positions in fset, with file names
// made relative to base.
func New(fset *token.FileSet, base string) *List { return &List{Fset: fset, Base: base} }

// Errorf records a diagnostic at pos.
func (l *List) Errorf(pos token.Pos, format string, args ...any) {
	l.Add(l.Fset.Position(pos), fmt.Sprintf(format, args...))
	l.items[len(l.items)-1].At = pos
}

// Add records a diagnostic at an already resolved position.
func (l *List) Add(p token.Position, msg string) {
	p.Filename = l.Rel(p.Filename)
	l.items = append(l.items, Diagnostic{Pos: p, Message: msg})
}

// AddMessage records a diagnostic without a position.
func (l *List) AddMessage(msg string) { l.items = append(l.items, Diagnostic{Message: msg}) }

// Len is the number of diagnostics recorded.
func (l *List) Len() int { return len(l.items) }

// Items returns the diagnostics in the order they were recorded.
func (l *List) Items() []Diagnostic { return l.items }

// Rel makes an absolute file name relative to the base directory when
// the file lies below it, as go build prints positions.
func (l *List) Rel(name string) string {
	if name == "" || l.Base == "" || !filepath.IsAbs(name) {
		return name
	}
	r, err := filepath.Rel(l.Base, name)
	if err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
		return name
	}
	return r
}

// RelPos makes the file of a "file:line:col" position relative.
func (l *List) RelPos(pos string) string {
	file, rest, ok := strings.Cut(pos, ":")
	if !ok {
		return pos
	}
	return l.Rel(file) + ":" + rest
}

// PosString is pos as "file:line:col", the file relative, for messages
// that point at a second place.
func (l *List) PosString(pos token.Pos) string {
	p := l.Fset.Position(pos)
	return fmt.Sprintf("%s:%d:%d", l.Rel(p.Filename), p.Line, p.Column)
}

// Sorted returns the diagnostics ordered by file and position, without
// exact duplicates.
func (l *List) Sorted() []Diagnostic {
	out := append([]Diagnostic(nil), l.items...)
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
		if i > 0 && d.Pos == out[i-1].Pos && d.Message == out[i-1].Message {
			continue
		}
		dedup = append(dedup, d)
	}
	return dedup
}
