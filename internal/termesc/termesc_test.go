package termesc

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// inert reports why s is not safe on a terminal, "" if it is.
func inert(s string, allowNewline bool) string {
	if !utf8.ValidString(s) {
		return "not UTF-8"
	}
	for _, r := range s {
		if Hostile(r) && !(allowNewline && (r == '\n' || r == '\t')) {
			return "holds " + string(r) + " raw"
		}
	}
	return ""
}

func TestStringEscapesEverySample(t *testing.T) {
	for _, s := range Samples {
		got := String(s)
		if why := inert(got, false); why != "" {
			t.Errorf("String(%q) = %q: %s", s, got, why)
		}
		if strings.Contains(got, "\n") || strings.Contains(got, "\t") {
			t.Errorf("String(%q) = %q: one value must stay one cell on one line", s, got)
		}
	}
	if got := String("plain ünïcode ✓"); got != "plain ünïcode ✓" {
		t.Errorf("String changed plain text: %q", got)
	}
	if got, want := String("a\x1b[2J\n\x9b\xff"), `a\u001b[2J\n\x9b\xff`; got != want {
		t.Errorf("String = %q, want %q", got, want)
	}
}

func TestWriterLetsOnlyItsColoursThrough(t *testing.T) {
	for _, colour := range []bool{false, true} {
		for _, s := range Samples {
			// A message that escaped its data with String, and painted
			// some: one line, and no ESC but the green asked for.
			var b bytes.Buffer
			Writer(&b, colour).Write([]byte(String(s) + " " + string(Paint(Green, "ok "+s)) + "\n"))
			out := b.String()
			if colour {
				if !strings.Contains(out, colours[Green]+"ok ") {
					t.Errorf("colour on: %q lacks its green", out)
				}
				out = strings.Replace(out, colours[Green], "", 1)
				out = strings.Replace(out, colours[reset], "", 1)
			}
			if why := inert(out, true); why != "" || strings.Count(out, "\n") != 1 {
				t.Errorf("colour %v: %q came out as %q: %s (want one line)", colour, s, b.String(), why)
			}
			// Data that skipped String: the writer still lets no escape
			// sequence through but its own colours.
			b.Reset()
			Writer(&b, colour).Write([]byte(s))
			out = b.String()
			for _, c := range colours {
				out = strings.ReplaceAll(out, c, "")
			}
			if why := inert(out, true); why != "" {
				t.Errorf("colour %v: raw %q came out as %q: %s", colour, s, b.String(), why)
			}
		}
	}
}

func TestJSONStaysJSON(t *testing.T) {
	for _, s := range Samples {
		b, _ := json.Marshal(map[string]string{"v": strings.ToValidUTF8(s, "?")})
		got := JSON(b)
		if why := inert(string(got), false); why != "" {
			t.Errorf("JSON(%s) = %s: %s", b, got, why)
		}
		var back map[string]string
		if err := json.Unmarshal(got, &back); err != nil || back["v"] != strings.ToValidUTF8(s, "?") {
			t.Errorf("JSON(%s) = %s reads back as %q, %v", b, got, back["v"], err)
		}
	}
}
