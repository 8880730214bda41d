package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/resumegen/resumegen/runtime/journal"
)

// Run ids, step keys, versions, errors and results come from the journal,
// and so, ultimately, from whoever chose a run's id or a step's error: a
// value holding control characters must not forge table rows, move the
// cursor or retitle the operator's terminal. Data is escaped where it is
// printed (esc, table cells), and everything resumectl writes passes
// through escWriter, which lets only newlines, tabs and resumectl's own
// colours through.

// hostile reports whether r must not reach a terminal raw: C0 and C1
// control characters, DEL, and the bidirectional overrides and isolates
// that reorder what a line shows.
func hostile(r rune) bool {
	return unicode.IsControl(r) || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069)
}

// escRune writes r's visible escape: \n, \t and \r as in Go, anything else
// as \u00XX (valid inside a JSON string, too).
func escRune(b *strings.Builder, r rune) {
	switch r {
	case '\n':
		b.WriteString(`\n`)
	case '\t':
		b.WriteString(`\t`)
	case '\r':
		b.WriteString(`\r`)
	default:
		fmt.Fprintf(b, `\u%04x`, r)
	}
}

// esc returns s with every control character escaped, newlines and tabs
// included: one value, one cell, one line.
func esc(s string) string {
	if strings.IndexFunc(s, hostile) < 0 && utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	for i, w := 0, 0; i < len(s); i += w {
		r, n := utf8.DecodeRuneInString(s[i:])
		w = n
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case hostile(r):
			escRune(&b, r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// colours are the only escape sequences resumectl writes itself.
var colours = []string{red, green, yellow, cyan, grey, plain, noColor}

// escKeepColour is esc for a table cell that paint may have coloured: the
// colour sequences stay, every other control character is escaped.
func escKeepColour(s string) string {
	if strings.IndexFunc(s, hostile) < 0 && utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	for s != "" {
		i := strings.IndexByte(s, '\x1b')
		if i < 0 {
			b.WriteString(esc(s))
			break
		}
		b.WriteString(esc(s[:i]))
		s = s[i:]
		if c := colourAt(s); c != "" {
			b.WriteString(c)
			s = s[len(c):]
			continue
		}
		b.WriteString(esc(s[:1]))
		s = s[1:]
	}
	return b.String()
}

// colourAt returns the colour sequence s starts with, or "".
func colourAt(s string) string {
	for _, c := range colours {
		if strings.HasPrefix(s, c) {
			return c
		}
	}
	return ""
}

// escWriter is the last line of defence on stdout and stderr: it passes
// newlines, tabs and resumectl's colours, and escapes any other control
// character a message let through.
type escWriter struct{ w io.Writer }

func (e escWriter) Write(p []byte) (int, error) {
	s := string(p)
	var b strings.Builder
	for s != "" {
		i := strings.IndexFunc(s, func(r rune) bool { return (hostile(r) && r != '\n' && r != '\t') || r == utf8.RuneError })
		if i < 0 {
			b.WriteString(s)
			break
		}
		b.WriteString(s[:i])
		s = s[i:]
		if c := colourAt(s); c != "" {
			b.WriteString(c)
			s = s[len(c):]
			continue
		}
		r, n := utf8.DecodeRuneInString(s)
		if r == utf8.RuneError && n == 1 {
			fmt.Fprintf(&b, `\x%02x`, s[0])
		} else if r == utf8.RuneError {
			b.WriteRune(r) // a real U+FFFD
		} else {
			escRune(&b, r)
		}
		s = s[n:]
	}
	if _, err := io.WriteString(e.w, b.String()); err != nil {
		return 0, err
	}
	return len(p), nil
}

// escRun escapes the values of r that show's free text prints outside
// tables (tables escape their cells).
func escRun(r journal.RunRecord) journal.RunRecord {
	r.RunID, r.Workflow, r.Version, r.AttentionStep, r.FailedStep, r.LeaseOwner, r.Parent =
		esc(r.RunID), esc(r.Workflow), esc(r.Version), esc(r.AttentionStep), esc(r.FailedStep), esc(r.LeaseOwner), esc(r.Parent)
	return r
}

// escVersionChange escapes what show prints of a version change.
func escVersionChange(vc *versionChange) *versionChange {
	if vc == nil {
		return nil
	}
	v := *vc
	v.Workflow, v.From, v.To, v.Note = esc(v.Workflow), esc(v.From), esc(v.To), esc(v.Note)
	return &v
}

// escDeploy escapes what check-deploy prints outside its table.
func escDeploy(out deployJSON) deployJSON {
	diffs := make([]deployDiff, len(out.Diffs))
	for i, d := range out.Diffs {
		d.Workflow, d.From, d.To = esc(d.Workflow), esc(d.From), esc(d.To)
		runs := make([]string, len(d.Runs))
		for k, r := range d.Runs {
			runs[k] = esc(r)
		}
		d.Runs = runs
		diffs[i] = d
	}
	out.Diffs = diffs
	old := make([]oldVersion, len(out.Old))
	for i, ov := range out.Old {
		ov.Workflow, ov.Version, ov.Func = esc(ov.Workflow), esc(ov.Version), esc(ov.Func)
		old[i] = ov
	}
	out.Old = old
	hints := map[string]string{}
	for w, h := range out.Hints {
		hints[esc(w)] = esc(h)
	}
	out.Hints = hints
	return out
}

// encrypted stands for a value a codec sealed (resume.WithCodec):
// resumectl has no key.
const encrypted = "(encrypted)"

// forDisplay prepares show's human form: free-text values escaped, and
// sealed values shown as (encrypted).
func forDisplay(r journal.RunRecord, out showJSON) (journal.RunRecord, showJSON) {
	r, out.VersionChange = escRun(r), escVersionChange(out.VersionChange)
	if journal.IsSealed(r.Input) {
		r.Input = json.RawMessage(encrypted)
	}
	if journal.IsSealed(r.Output) {
		r.Output = json.RawMessage(encrypted)
	}
	if journal.IsSealed([]byte(r.Error)) {
		r.Error = encrypted
	}
	steps := make([]stepJSON, len(out.Steps))
	for i, s := range out.Steps {
		if journal.IsSealed(s.Result) {
			s.Result = json.RawMessage(encrypted)
		}
		if journal.IsSealed([]byte(s.Error)) {
			s.Error = encrypted
		}
		if len(s.Attempts) > 0 {
			as := make([]attemptJSON, len(s.Attempts))
			for k, a := range s.Attempts {
				if journal.IsSealed([]byte(a.Error)) {
					a.Error = encrypted
				}
				as[k] = a
			}
			s.Attempts = as
		}
		steps[i] = s
	}
	out.Steps = steps
	return r, out
}
