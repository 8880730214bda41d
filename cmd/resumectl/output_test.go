package main

import (
	"flag"
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/resumegen/resumegen/runtime/resume"
)

func TestDiffManifests(t *testing.T) {
	for _, tc := range []struct {
		name, old, new string
		want           []string
	}{
		{"same", "A\nB\n", "A\nB\n", []string{"  A", "  B"}},
		{"inserted", "A\nC\n", "A\nB\nC\n", []string{"  A", "+ B", "  C"}},
		{"removed", "A\nB\nC\n", "A\nC\n", []string{"  A", "- B", "  C"}},
		{"changed", "A\nB x\nC\n", "A\nB y\nC\n", []string{"  A", "- B x", "+ B y", "  C"}},
		{"moved", "A\nB\n", "B\nA\n", []string{"- A", "  B", "+ A"}},
		{"no old manifest", "", "A\n", []string{"+ A"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, l := range resume.DiffManifests(tc.old, tc.new) {
				got = append(got, l.Op+" "+l.Step)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("diff = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestOneLine(t *testing.T) {
	in := "failed to connect to `user=x`:\n\taddr: refused\n\taddr: refused\nnext"
	if got, want := oneLine(in), "failed to connect to `user=x`: addr: refused; next"; got != want {
		t.Errorf("oneLine = %q, want %q", got, want)
	}
}

func TestParseInterspersed(t *testing.T) {
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	done := fs.Bool("done", false, "")
	db := fs.String("db", "", "")
	pos, err := parseInterspersed(fs, strings.Fields("r1 -done STEP -db j.db -- -odd"))
	if err != nil || !*done || *db != "j.db" || !reflect.DeepEqual(pos, []string{"r1", "STEP", "-odd"}) {
		t.Errorf("parse = %q, done %v, db %q, err %v", pos, *done, *db, err)
	}
}

func TestWorkflowNames(t *testing.T) {
	const q = "github.com/x/examples/onboard.Onboard"
	if got := shortName(q); got != "onboard.Onboard" {
		t.Errorf("shortName = %q", got)
	}
	for _, w := range []string{q, "onboard.Onboard", "Onboard"} {
		if !workflowMatches(q, w) {
			t.Errorf("%q does not match %q", w, q)
		}
	}
	if workflowMatches(q, "Board") || workflowMatches(q, "other.Onboard") {
		t.Error("a partial name matched")
	}
}
