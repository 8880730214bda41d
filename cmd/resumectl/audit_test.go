package main

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// TestActionsRecordedAndShown: resumectl's retry and cancel are recorded
// in the journal (resume_actions) with the operating-system user, the
// host and the tool, and runs show (and -json) lists them; a refused
// action records nothing.
func TestActionsRecordedAndShown(t *testing.T) {
	path, ids := seedHostile(t)
	id := ids[0]
	for _, args := range [][]string{{"runs", "retry", id}, {"runs", "cancel", id}, {"runs", "cancel", id}} {
		ctl(t, append(args, "-db", path)...)
	}
	code, out, stderr := ctl(t, "runs", "show", "-json", id, "-db", path)
	if code != exitOK {
		t.Fatalf("runs show -json: %d %s", code, stderr)
	}
	var shown struct {
		Actions []actionRecordJSON `json:"actions"`
	}
	if err := json.Unmarshal([]byte(out), &shown); err != nil {
		t.Fatal(err)
	}
	host, _ := os.Hostname()
	me := cliActor().Name
	if len(shown.Actions) != 2 {
		t.Fatalf("actions %+v; want the retry and the first cancel (the second was refused)", shown.Actions)
	}
	for i, want := range []string{"retry", "cancel"} {
		a := shown.Actions[i]
		if a.Action != want || a.By != me || a.From != host || a.Via != "resumectl" || a.At.IsZero() || a.Seq != int64(i+1) {
			t.Errorf("action %d: %+v; want %s by %s from %s via resumectl", i, a, want, me, host)
		}
	}
	if !strings.Contains(shown.Actions[0].Detail, "reopened") {
		t.Errorf("the retry's detail %q does not name the step it reopened", shown.Actions[0].Detail)
	}
	_, human, _ := ctl(t, "runs", "show", id, "-db", path)
	if !strings.Contains(human, "Operators' actions:") || !regexpLine(human, `^\S+ \S+\s+cancel\s+-\s+`+me+`\s+`) {
		t.Errorf("runs show does not list the actions:\n%s", human)
	}
}
