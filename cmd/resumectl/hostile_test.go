package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/resumegen/resumegen/internal/termesc"
	"github.com/resumegen/resumegen/runtime/journal"
	"github.com/resumegen/resumegen/runtime/sqlitejournal"
)

// seedHostile writes, for each of termesc.Samples, runs whose id,
// workflow, version, steps, errors, result, wait and schedule hold it, and
// returns the journal's path and the run ids.
func seedHostile(t *testing.T) (string, []string) {
	t.Helper()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "journal.db")
	j, err := sqlitejournal.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	now := time.Now().Add(-time.Minute)
	var ids []string
	var forged [][2]string // ids the journal refuses (NUL, not UTF-8): the API's id, the forged one
	for i, h := range termesc.Samples {
		id := fmt.Sprintf("r%02d-%s", i, h)
		if safe := storable(id); safe != id {
			// The journal refuses such an id where input enters; a row
			// forged by SQL can still hold it, so it is written after.
			forged = append(forged, [2]string{safe, id})
			id = safe
		}
		res, _ := json.Marshal(h)
		wf := "example.com/app.W" + storable(h)
		h := storable(h) // names and keys too
		if _, _, err := j.CreateRun(ctx, journal.RunRecord{RunID: id, Workflow: wf, Version: "v1" + h, Input: json.RawMessage("[" + string(res) + "]"),
			LeaseOwner: "owner" + h, LeaseUntil: now.Add(time.Hour), CreatedAt: now, UpdatedAt: now}); err != nil {
			t.Fatal(err)
		}
		if err := j.SaveManifest(ctx, journal.ManifestRecord{Workflow: wf, Version: "v1" + h, Manifest: "Fetch" + strings.ReplaceAll(h, "\n", " ") + "\n" /* a manifest is lines */, CreatedAt: now}); err != nil {
			t.Fatal(err)
		}
		l := journal.Lease{RunID: id, Owner: "owner" + h, Epoch: 1}
		for _, s := range []journal.StepRecord{
			{StepKey: "Fetch" + h, Name: "Fetch" + h, Status: journal.StepSucceeded, Result: res, Attempt: 2, Seq: 1, StartedAt: now, FinishedAt: now,
				History: []journal.AttemptRecord{{Attempt: 1, StartedAt: now, Error: "attempt " + h}}},
			{StepKey: "Ship" + h, Name: "Ship", Status: journal.StepFailed, Final: true, Error: "ship " + h, Attempt: 1, Seq: 2, StartedAt: now, FinishedAt: now},
		} {
			s.RunID = id
			if err := j.WriteStep(ctx, l, s); err != nil {
				t.Fatal(err)
			}
		}
		if err := j.FinishRun(ctx, l, journal.RunRecord{RunID: id, Status: journal.StatusFailed, FailedStep: "Ship" + h, Error: "failed " + h, UpdatedAt: now}); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
		if _, _, err := j.CreateSchedule(ctx, journal.ScheduleRecord{Name: "s" + h, Workflow: wf, Spec: "every 1m0s" + h, Missed: "skip", CatchUpLimit: 1,
			NextTick: now, CreatedAt: now, UpdatedAt: now}); err != nil {
			t.Fatal(err)
		}
	}
	j.Close()
	forge(t, path, forged, ids)
	return path, ids
}

// storable is s as the journal stores an id, a name or a key: NUL and
// bytes that are not UTF-8 replaced.
func storable(s string) string {
	return strings.ToValidUTF8(strings.ReplaceAll(s, "\x00", "NUL"), "?")
}

// forge rewrites, by SQL as an attacker with the database's file would,
// the run ids the journal refused into the hostile ones, in ids too.
func forge(t *testing.T, path string, forged [][2]string, ids []string) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	// Queues' names and owners are refused where they enter too
	// (journal.CheckQueueName); forged rows can hold anything.
	for i, h := range termesc.Samples {
		if _, err := db.Exec(`INSERT INTO resume_queues (name, concurrency, per_key, rate, per_ms, configured_by, configured_at)
			VALUES (?, 2, 1, 5, 60000, ?, ?)`, fmt.Sprintf("q%02d-%s", i, h), "owner"+h, time.Now().UTC().Format(time.RFC3339Nano)); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range forged {
		for _, table := range []string{"resume_runs", "resume_steps"} {
			if _, err := db.Exec("UPDATE "+table+" SET run_id = ? WHERE run_id = ?", f[1], f[0]); err != nil {
				t.Fatal(err)
			}
		}
		for i := range ids {
			if ids[i] == f[0] {
				ids[i] = f[1]
			}
		}
	}
}

// colourSequences are the only escape sequences resumectl writes.
var colourSequences = []string{"\x1b[31m", "\x1b[32m", "\x1b[33m", "\x1b[36m", "\x1b[90m", "\x1b[39m", "\x1b[0m"}

// checkInert fails t when out holds a character a terminal acts on, other
// than newline, tab and resumectl's colours, or a line a value forged.
func checkInert(t *testing.T, what, out string) {
	t.Helper()
	clean := out
	for _, c := range colourSequences {
		clean = strings.ReplaceAll(clean, c, "")
	}
	for _, r := range clean {
		if termesc.Hostile(r) && r != '\n' && r != '\t' {
			t.Errorf("%s: %U reached the terminal raw:\n%q", what, r, out)
			return
		}
	}
	for _, l := range strings.Split(clean, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "forged") {
			t.Errorf("%s: a value forged the line %q", what, l)
		}
	}
}

// TestHostileStringsInertInEveryCommand runs every command that prints
// journal data, in colour and not, on runs whose every field holds one of
// termesc.Samples (CSI, OSC, C1, bidi, newlines, invalid UTF-8, ...), and
// checks that nothing but resumectl's own colours reaches the terminal.
// (Before: a stored error's ESC[31m passed through as a colour.)
func TestHostileStringsInertInEveryCommand(t *testing.T) {
	path, ids := seedHostile(t)
	cmds := [][]string{
		{"runs", "list"}, {"runs", "list", "-json"}, {"schedules", "list"}, {"schedules", "list", "-json"}, {"queues", "list"}, {"queues", "list", "-json"},
		{"runs", "retry", "-workflow", "W" + termesc.Samples[2], "-dry-run"},
		{"runs", "show", "no-such-run" + termesc.Samples[3]},
	}
	for _, id := range ids {
		cmds = append(cmds, []string{"runs", "show", id}, []string{"runs", "show", "-json", id}, []string{"runs", "watch", id},
			[]string{"runs", "watch", "-json", id}, []string{"runs", "resolve", id, "Ship", "-redo"}, []string{"runs", "signal", id, "n", "{}"})
	}
	for _, colour := range []bool{false, true} {
		for _, args := range cmds {
			var out, errb bytes.Buffer
			newCLI(context.Background(), &out, &errb, colour).main(append(args, "-db", path))
			what := fmt.Sprintf("colour %v: %q", colour, strings.Join(args, " "))
			checkInert(t, what+" stdout", out.String())
			checkInert(t, what+" stderr", errb.String())
			if args[0] == "queues" {
				for i := range termesc.Samples {
					if !strings.Contains(out.String(), fmt.Sprintf("q%02d-", i)) {
						t.Errorf("%s: forged queue %d is not listed:\n%s%s", what, i, out.String(), errb.String())
					}
				}
			}
			if strings.Contains(strings.Join(args, " "), "-json") && strings.HasPrefix(strings.TrimSpace(out.String()), "[") || strings.HasPrefix(strings.TrimSpace(out.String()), "{") && !strings.Contains(args[1], "watch") {
				if !json.Valid(out.Bytes()) {
					t.Errorf("%s: -json output is not JSON:\n%s", what, out.String())
				}
			}
		}
	}
	// The destructive ones last: a retry and a cancel print the run id in
	// their message.
	for _, id := range ids[:3] {
		for _, args := range [][]string{{"runs", "retry", id}, {"runs", "cancel", id}} {
			var out, errb bytes.Buffer
			code := newCLI(context.Background(), &out, &errb, true).main(append(args, "-db", path))
			checkInert(t, strings.Join(args, " "), out.String()+errb.String())
			if code != exitOK {
				t.Errorf("%q: exit %d: %s", args, code, errb.String())
			}
		}
	}
	// check-deploy prints every unfinished run, its workflow and version,
	// on code that has none of their workflows: each is stranded.
	mod := t.TempDir()
	if err := os.WriteFile(filepath.Join(mod, "go.mod"), []byte("module example.com/empty\n\ngo 1.26\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(mod, "x.go"), []byte("package empty\n\nfunc F() {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	wd, _ := os.Getwd()
	if err := os.Chdir(mod); err != nil {
		t.Fatal(err)
	}
	defer os.Chdir(wd)
	for _, colour := range []bool{false, true} {
		for _, args := range [][]string{{"check-deploy", "./..."}, {"check-deploy", "-json", "./..."}} {
			var out, errb bytes.Buffer
			code := newCLI(context.Background(), &out, &errb, colour).main(append(args, "-db", path))
			if code != exitFail || !strings.Contains(out.String(), "stranded") {
				t.Errorf("%q: exit %d, %s %s; want 1, the runs stranded", args, code, out.String(), errb.String())
			}
			checkInert(t, fmt.Sprintf("colour %v: %q stdout", colour, args), out.String())
			checkInert(t, fmt.Sprintf("colour %v: %q stderr", colour, args), errb.String())
		}
	}
	if os.Getenv("RESUME_SHOW_HOSTILE") != "" {
		var out bytes.Buffer
		newCLI(context.Background(), &out, &out, true).main([]string{"runs", "show", ids[2], "-db", path})
		t.Log(out.String())
	}
}
