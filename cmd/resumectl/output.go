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

// ANSI colours, each five bytes long, so that a coloured column stays
// aligned in a tabwriter (which counts the bytes of escape sequences).
const (
	red     = "\x1b[31m"
	green   = "\x1b[32m"
	yellow  = "\x1b[33m"
	cyan    = "\x1b[36m"
	grey    = "\x1b[90m"
	plain   = "\x1b[39m"
	noColor = "\x1b[0m"
)

// paint colours s when the output is a terminal.
func (c *cli) paint(color, s string) string {
	if !c.color {
		return s
	}
	return color + s + noColor
}

func statusColor(s string) string {
	switch {
	case strings.HasPrefix(s, string(journal.StatusSucceeded)):
		return green
	case strings.HasPrefix(s, string(journal.StatusFailed)):
		return red
	case strings.HasPrefix(s, string(journal.StatusNeedsAttention)), s == string(journal.StepInFlight):
		return yellow
	case strings.HasPrefix(s, string(journal.StatusRunning)):
		return cyan
	case strings.HasPrefix(s, string(journal.StatusCancelled)):
		return grey
	}
	return plain
}

// table writes aligned rows.
type table struct {
	tw *tabwriter.Writer
}

func (c *cli) table(header ...string) *table {
	t := &table{tw: tabwriter.NewWriter(c.stdout, 0, 0, 2, ' ', 0)}
	if len(header) > 0 {
		t.row(header...)
	}
	return t
}

// row writes one row; each cell is escaped (escKeepColour), so that a
// value holding a tab, a newline or an escape sequence stays in its cell.
func (t *table) row(cells ...string) {
	for i, c := range cells {
		cells[i] = escKeepColour(c)
	}
	fmt.Fprintln(t.tw, strings.Join(cells, "\t"))
}

func (t *table) flush() error { return t.tw.Flush() }

// writeJSON prints v as indented JSON.
func (c *cli) writeJSON(v any) error {
	enc := json.NewEncoder(c.stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
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

// preview shortens s to n characters on one line.
func preview(s string, n int) string {
	s = oneLine(s)
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
			fmt.Fprintln(c.stdout, "  "+c.paint(green, l.String()))
		case "-":
			fmt.Fprintln(c.stdout, "  "+c.paint(red, l.String()))
		default:
			fmt.Fprintln(c.stdout, "    "+l.Step)
		}
	}
}
