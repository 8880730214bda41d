package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestPurge: runs purge counts first and changes nothing until
// confirmed (a dry run opens the journal read-only; no terminal and no
// -yes refuses; a "no" refuses), keeps runs younger than -older-than,
// deletes only the -workflow and -status asked, and refuses statuses of
// runs that still execute.
func TestPurge(t *testing.T) {
	backends(t, func(t *testing.T, e env) {
		e.mustExample(onboardBin, "f1", 1, "-fail", "ScoreAll")
		e.mustExample(onboardBin, "ok", 0)
		before := e.state("f1", "ok")
		var files string
		if !strings.Contains(e.db, "://") {
			files = snapshot(t, e.db)
		}
		unchanged := func(what string) {
			t.Helper()
			if after := e.state("f1", "ok"); after != before {
				t.Errorf("%s changed the journal:\nbefore %s\nafter %s", what, before, after)
			}
			if files != "" && snapshot(t, e.db) != files {
				t.Errorf("%s changed the SQLite file", what)
			}
		}
		for _, c := range []struct {
			args []string
			want string
		}{
			{[]string{"runs", "purge", "-yes"}, "-older-than is required"},
			{[]string{"runs", "purge", "-older-than", "0s", "-status", "running", "-yes"}, "-status"},
			{[]string{"runs", "purge", "ok", "-older-than", "0s"}, "no run id"},
			{[]string{"runs", "purge", "-older-than", "soon"}, "-older-than"},
		} {
			if code, _, errOut := e.ctl(c.args...); code != exitUsage || !strings.Contains(errOut, c.want) {
				t.Errorf("resumectl %v: exit %d, %q; want 2 and %q", c.args, code, errOut, c.want)
			}
		}
		out := e.mustCtl("runs", "purge", "-older-than", "0s", "-dry-run")
		if !strings.Contains(out, "dry run: purge would delete 2 run(s)") || !strings.Contains(out, "Nothing changed") {
			t.Errorf("dry run said %q", out)
		}
		out = e.mustCtl("runs", "purge", "-older-than", "1d", "-yes")
		if !strings.Contains(out, "no run to purge") {
			t.Errorf("purge of runs older than a day said %q", out)
		}
		if code, _, errOut := e.ctl("runs", "purge", "-older-than", "0s"); code != exitUsage || !strings.Contains(errOut, "no terminal") {
			t.Errorf("purge without -yes nor a terminal: exit %d, %q; want 2", code, errOut)
		}
		if code, _, errOut := ctlAt("n\n", "runs", "purge", "-older-than", "0s", "-db", e.db); code != exitFail || !strings.Contains(errOut, "purge 2 run(s)") {
			t.Errorf("purge answered no: exit %d, %q; want 1", code, errOut)
		}
		unchanged("a dry run, a purge of younger runs and refused purges")

		out = e.mustCtl("runs", "purge", "-older-than", "0s", "-workflow", "Onboard", "-status", "succeeded", "-yes", "-json")
		var got purgeJSON
		if err := json.Unmarshal([]byte(out), &got); err != nil || got.Runs != 1 || got.Steps == 0 || len(got.Workflows) != 1 {
			t.Errorf("purge of succeeded Onboard runs: %+v (%v)\n%s", got, err, out)
		}
		if l := e.list(); len(l) != 1 || l["f1"].Status != "failed" {
			t.Errorf("after purging the succeeded run: %+v; want f1 alone, failed", l)
		}
		out = e.mustCtl("runs", "purge", "-older-than", "0s", "-workflow", "NoSuchFlow", "-yes")
		if !strings.Contains(out, "no run to purge") || len(e.list()) != 1 {
			t.Errorf("purge of another workflow said %q", out)
		}
		out = e.mustCtl("runs", "purge", "-older-than", "0s", "-yes")
		if !strings.Contains(out, "deleted 1 run(s)") || len(e.list()) != 0 {
			t.Errorf("purge of the rest said %q; %d runs left", out, len(e.list()))
		}
	})
}
