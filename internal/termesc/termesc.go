// Package termesc makes bytes from a journal inert on a terminal. Run ids,
// step keys, errors and results come, in the end, from whoever chose a
// run's id or a step's error: a value holding control characters must not
// forge a table row, move the cursor, clear the screen, retitle the
// window, plant a hyperlink (OSC 8) or reorder what a line shows.
//
// [String] escapes one value for printing. [Writer] is the last line of
// defence on a command's standard output and error: it escapes whatever a
// message let through, and is the only place that writes the escape
// sequences of colours, which a program asks for with [Paint] (so that no
// ESC byte from data ever reaches the terminal, colour or not).
package termesc

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// Hostile reports whether r must not reach a terminal raw: the C0 controls
// (newline and tab included), DEL, the C1 controls (U+0080 to U+009F, of
// which U+009B is an 8-bit CSI and U+009D an 8-bit OSC), the line and
// paragraph separators, the bidirectional marks, embeddings, overrides
// and isolates that reorder a line, and the private-use characters this
// package uses to mark colours.
func Hostile(r rune) bool {
	switch {
	case r < 0x20, r >= 0x7f && r <= 0x9f:
		return true
	case r == 0x061c, r == 0x200e, r == 0x200f, r == 0x2028, r == 0x2029:
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	case r >= markBase && r < markBase+rune(len(colours)):
		return true
	}
	return false
}

// String returns s with every hostile character escaped, newlines and tabs
// included, and every byte that is not UTF-8 shown as \xNN: one value,
// one cell, one line. \n, \t and \r read as in Go; anything else is
// \u00XX (valid inside a JSON string too).
func String(s string) string {
	if utf8.ValidString(s) && strings.IndexFunc(s, Hostile) < 0 {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case Hostile(r):
			escRune(&b, r)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

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

// Colour is one of the colours [Paint] marks text with.
type Colour int

// The colours, in the order of their escape sequences in colours.
const (
	Red Colour = iota
	Green
	Yellow
	Cyan
	Grey
	Plain // the terminal's default foreground
	reset
)

// colours are the only escape sequences [Writer] writes, by Colour.
var colours = [...]string{"\x1b[31m", "\x1b[32m", "\x1b[33m", "\x1b[36m", "\x1b[90m", "\x1b[39m", "\x1b[0m"}

// markBase is the first of the private-use characters that stand for a
// colour until [Writer] turns them into its escape sequence. Each is one
// rune wide, so that text/tabwriter aligns coloured cells as plain ones.
const markBase = 0xe000

func mark(c Colour) string { return string(rune(markBase) + rune(c)) }

// Styled is text already escaped, with colour marks that only [Writer]
// turns into escape sequences.
type Styled string

// Paint returns s escaped (see [String]) and marked with colour c, which a
// [Writer] with colour on writes as c's escape sequence and one with
// colour off drops.
func Paint(c Colour, s string) Styled {
	return Styled(mark(c) + String(s) + mark(reset))
}

// Writer returns w behind the last line of defence: every hostile
// character but newline and tab is escaped (as [String] does), bytes that
// are not UTF-8 are shown as \xNN, and the colour marks of [Paint] become
// their escape sequences when colour is true, nothing otherwise. No other
// escape sequence can be written through it.
func Writer(w io.Writer, colour bool) io.Writer { return escWriter{w, colour} }

type escWriter struct {
	w      io.Writer
	colour bool
}

func (e escWriter) Write(p []byte) (int, error) {
	var b strings.Builder
	for s := string(p); s != ""; {
		r, n := utf8.DecodeRuneInString(s)
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[0])
		case r >= markBase && r < markBase+rune(len(colours)):
			if e.colour {
				b.WriteString(colours[r-markBase])
			}
		case r == '\n' || r == '\t':
			b.WriteRune(r)
		case Hostile(r):
			escRune(&b, r)
		default:
			b.WriteString(s[:n])
		}
		s = s[n:]
	}
	if _, err := io.WriteString(e.w, b.String()); err != nil {
		return 0, err
	}
	return len(p), nil
}

// JSON escapes, in text a JSON encoder wrote, the characters it leaves
// raw and a terminal acts on (DEL, C1 controls, bidi controls, colour
// marks) as \uXXXX, which JSON reads back as the same characters.
func JSON(b []byte) []byte {
	s := string(b)
	if strings.IndexFunc(s, Hostile) < 0 {
		return b
	}
	var out strings.Builder
	for _, r := range s {
		if Hostile(r) && r != '\n' && r != '\t' {
			fmt.Fprintf(&out, `\u%04x`, r)
			continue
		}
		out.WriteRune(r)
	}
	return []byte(out.String())
}

// Samples are hostile strings for tests of every surface that shows
// journal data: each must come out inert (escaped on a terminal, text in
// HTML).
var Samples = []string{
	"title\x1b]0;pwned\x07", // OSC: retitle the window
	"link\x1b]8;;https://evil.example\x1b\\click\x1b]8;;\x1b\\", // OSC 8 hyperlink
	"red\x1b[31mRED\x1b[0m",            // CSI SGR: a colour of its own
	"clear\x1b[2J\x1b[H",               // CSI: clear the screen, cursor home
	"up\x1b[1A\x1b[2Kforged",           // CSI: overwrite the line above
	"csi8\u009b31mC1",                  // 8-bit CSI
	"osc8\u009d0;t\u009c",              // 8-bit OSC and ST
	"row\nforged-run  w  v  succeeded", // a forged table row
	"cr\rforged",                       // carriage return
	"tab\tcell",                        // a forged cell
	"bell\x07del\x7fnul\x00",           // BEL, DEL, NUL
	"bidi\u202egnp.exe\u202c",          // right-to-left override
	"iso\u2066late\u2069 lrm\u200e",    // bidi isolates and a mark
	"ls\u2028ps\u2029",                 // line and paragraph separators
	"bad\xffutf8",                      // not UTF-8
	"mark\ue000\ue006",                 // this package's colour marks
	`<script>alert(1)</script><img src=x onerror=alert(2)>`, // markup
}
