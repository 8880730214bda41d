package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/resumegen/resumegen/internal/termesc"
	"github.com/resumegen/resumegen/runtime/journal"
	"github.com/resumegen/resumegen/runtime/resume"
)

// colorful reports whether w is a terminal and NO_COLOR is unset
// (https://no-color.org).
func colorful(w io.Writer) bool {
	if os.Getenv("NO_COLOR") != "" {
		return false
	}
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0 && os.Getenv("TERM") != "dumb"
}

// paint colours s (escaped) when the output is a terminal: the colour is
// a mark that only the output's termesc.Writer turns into an escape
// sequence.
func (c *cli) paint(color termesc.Colour, s string) termesc.Styled {
	if !c.color {
		return termesc.Styled(termesc.String(s))
	}
	return termesc.Paint(color, s)
}

func statusColor(s string) termesc.Colour {
	switch {
	case strings.HasPrefix(s, string(journal.StatusSucceeded)):
		return termesc.Green
	case strings.HasPrefix(s, string(journal.StatusFailed)):
		return termesc.Red
	case strings.HasPrefix(s, string(journal.StatusNeedsAttention)), s == string(journal.StepInFlight):
		return termesc.Yellow
	case strings.HasPrefix(s, string(journal.StatusRunning)):
		return termesc.Cyan
	case strings.HasPrefix(s, string(journal.StatusCancelled)):
		return termesc.Grey
	}
	return termesc.Plain
}

// table writes aligned rows.
type table struct {
	tw    *tabwriter.Writer
	cells []any
}

func (c *cli) table(header ...string) *table {
	t := &table{tw: tabwriter.NewWriter(c.stdout, 0, 0, 2, ' ', 0)}
	if len(header) > 0 {
		for _, h := range header {
			t.cells = append(t.cells, h)
		}
		t.row(t.cells...)
		t.cells = nil
	}
	return t
}

// row writes one row. A cell is a string, escaped (termesc.String) so
// that a value holding a tab, a newline or an escape sequence stays in its
// cell, or a termesc.Styled (from paint), escaped already.
func (t *table) row(cells ...any) {
	out := make([]string, len(cells))
	for i, c := range cells {
		switch c := c.(type) {
		case termesc.Styled:
			out[i] = string(c)
		case string:
			out[i] = termesc.String(c)
		default:
			out[i] = termesc.String(fmt.Sprint(c))
		}
	}
	fmt.Fprintln(t.tw, strings.Join(out, "\t"))
}

func (t *table) flush() error { return t.tw.Flush() }

// writeJSON prints v as indented JSON, with the characters a terminal
// acts on that encoding/json leaves raw escaped (termesc.JSON).
func (c *cli) writeJSON(v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = c.stdout.Write(append(termesc.JSON(b), '\n'))
	return err
}

// shortName is a workflow's package name, dot, function name:
// onboard.Onboard for github.com/x/examples/onboard.Onboard.
func shortName(qualified string) string {
	return qualified[strings.LastIndex(qualified, "/")+1:]
}

// age formats how long ago t was, to the second.
func age(now, t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	d := now.Sub(t)
	switch {
	case d < time.Minute:
		return d.Round(time.Second).String()
	case d < time.Hour:
		return d.Round(time.Second).String()
	case d < 48*time.Hour:
		return d.Round(time.Minute).String()
	}
	return fmt.Sprintf("%dd", int(d.Hours()/24))
}

// duration formats a step's duration, "-" when it has not finished.
func duration(start, end time.Time) string {
	if start.IsZero() || end.IsZero() {
		return "-"
	}
	d := end.Sub(start)
	if d < time.Millisecond {
		return d.Round(time.Microsecond).String()
	}
	return d.Round(time.Millisecond).String()
}

func stamp(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format("2006-01-02 15:04:05.000")
}

// preview shortens s, escaped (termesc.String) and folded onto one line,
// to n characters.
func preview(s string, n int) string {
	s = esc(oneLine(s))
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// printDiff prints a step diff, indented, coloured on a terminal.
func (c *cli) printDiff(lines []resume.ManifestChange) {
	for _, l := range lines {
		switch l.Op {
		case "+":
			fmt.Fprintln(c.stdout, "  "+c.paint(termesc.Green, l.String()))
		case "-":
			fmt.Fprintln(c.stdout, "  "+c.paint(termesc.Red, l.String()))
		default:
			fmt.Fprintln(c.stdout, "    "+l.Step)
		}
	}
}
