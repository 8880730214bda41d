package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/resumegen/resumegen/internal/pgtest"
	"github.com/resumegen/resumegen/runtime/journal"
	"github.com/resumegen/resumegen/runtime/journaltest"
	"github.com/resumegen/resumegen/runtime/pgjournal"
	"github.com/resumegen/resumegen/runtime/resume"
	"github.com/resumegen/resumegen/runtime/sqlitejournal"
)

// TestShowCorruptRows damages journal rows with plain SQL and checks that
// runs show still shows the run, every row, and the damaged ones marked
// with what is wrong, in both forms; and that a run whose status is no
// status is named as such, not as busy.
func TestShowCorruptRows(t *testing.T) {
	ctx := context.Background()
	for _, b := range []struct {
		name string
		// open returns the journal, its -db argument and a plain SQL exec.
		open   func(t *testing.T) (journal.Journal, string, func(string))
		damage []string
		wants  []string
	}{
		{"sqlite", func(t *testing.T) (journal.Journal, string, func(string)) {
			db := filepath.Join(t.TempDir(), "j.db")
			j, err := sqlitejournal.Open(ctx, db)
			if err != nil {
				t.Fatal(err)
			}
			return j, db, func(q string) {
				if _, err := j.DB().ExecContext(ctx, q); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
			}
		}, []string{
			`UPDATE resume_steps SET seq = 'abc' WHERE run_id = 'bad' AND step_key = 'Lookup'`,
			`UPDATE resume_steps SET result = '{oops' WHERE run_id = 'bad' AND step_key = 'Quote'`,
			`UPDATE resume_runs SET status = 'bogus' WHERE run_id = 'nostatus'`,
		}, []string{`unreadable: seq "abc" is not an integer`, "unreadable: result is not JSON"}},
		{"postgres", func(t *testing.T) (journal.Journal, string, func(string)) {
			dsn := pgtest.FreshDatabase(t)
			pool, err := pgxpool.New(ctx, dsn)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(pool.Close)
			j, err := pgjournal.Open(ctx, pool)
			if err != nil {
				t.Fatal(err)
			}
			return j, dsn, func(q string) {
				if _, err := pool.Exec(ctx, q); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
			}
		}, []string{
			`UPDATE resume_steps SET status = 'bogus' WHERE run_id = 'bad' AND step_key = 'Lookup'`,
			`UPDATE resume_steps SET history = '{"x": 1}' WHERE run_id = 'bad' AND step_key = 'Quote'`,
			`UPDATE resume_runs SET status = 'bogus' WHERE run_id = 'nostatus'`,
		}, []string{`unreadable: status "bogus" is not a step status`, "unreadable: history"}},
	} {
		t.Run(b.name, func(t *testing.T) {
			j, db, exec := b.open(t)
			e := resume.NewEngine(j)
			for _, id := range []string{"bad", "nostatus"} {
				if _, err := e.Start(ctx, id, journaltest.Transfer, journaltest.TransferPlan{}); err != nil {
					t.Fatal(err)
				}
			}
			_, steps, _ := j.LoadRun(ctx, "bad")
			for _, q := range b.damage {
				exec(q)
			}
			j.Close()

			code, out := ctlRun(t, db, "runs", "show", "bad")
			if code != 0 {
				t.Fatalf("runs show bad exited %d:\n%s", code, out)
			}
			for _, want := range append(b.wants, "Deposit", "Finish") {
				if !strings.Contains(out, want) {
					t.Errorf("runs show bad does not say %q:\n%s", want, out)
				}
			}
			code, out = ctlRun(t, db, "runs", "show", "bad", "-json")
			var s showJSON
			if err := json.Unmarshal([]byte(out), &s); code != 0 || err != nil {
				t.Fatalf("runs show -json exited %d, %v:\n%s", code, err, out)
			}
			var marked int
			for _, st := range s.Steps {
				if st.Problem != "" {
					marked++
				}
			}
			if len(s.Steps) != len(steps) || marked != 2 {
				t.Errorf("runs show -json: %d rows, %d marked; want %d rows, 2 marked:\n%s", len(s.Steps), marked, len(steps), out)
			}

			code, out = ctlRun(t, db, "runs", "show", "nostatus")
			if code != 0 || !strings.Contains(out, `status "bogus" is not a run status`) || strings.Contains(out, "lease") {
				t.Errorf("runs show nostatus (exit %d) does not name the bad status, or shows a lease:\n%s", code, out)
			}
		})
	}
}

// TestResolveChecksResult resolves a parked step with results that do not
// have the shape of what the step journals: each is refused, saying what
// is wrong, and the run is unchanged; a fitting one is taken.
func TestResolveChecksResult(t *testing.T) {
	ctx := context.Background()
	db := filepath.Join(t.TempDir(), "j.db")
	j, err := sqlitejournal.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	// Measure returns NaN on its first execution in this process: the
	// run id is this test's own.
	if _, err := resume.NewEngine(j).Start(ctx, "nan-resolve", journaltest.Transfer, journaltest.TransferPlan{NaN: true}); err == nil {
		t.Fatal("the run did not park")
	}
	j.Close()
	_, before := ctlRun(t, db, "runs", "show", "nan-resolve", "-json")
	for _, tc := range []struct{ result, why string }{
		{`{"x":1}`, "step Measure journals float64: result: want a number (float64), have an object"},
		{`"2.5"`, "want a number (float64), have the string"},
		{`null`, "cannot be null"},
	} {
		code, out := ctlRun(t, db, "runs", "resolve", "nan-resolve", "Measure", "-done", "-result", tc.result)
		if code != 1 || !strings.Contains(out, tc.why) || strings.Count(strings.TrimSpace(out), "\n") != 0 {
			t.Errorf("resolve -result %s: exit %d, %q; want 1 and one line saying %q", tc.result, code, out, tc.why)
		}
	}
	if _, after := ctlRun(t, db, "runs", "show", "nan-resolve", "-json"); stripAge(after) != stripAge(before) {
		t.Errorf("refused resolutions changed the run:\nbefore %s\nafter %s", before, after)
	}
	if code, out := ctlRun(t, db, "runs", "resolve", "nan-resolve", "Measure", "-done", "-result", "2.5"); code != 0 {
		t.Errorf("resolve -result 2.5: exit %d\n%s", code, out)
	}
}

// stripAge drops the age_seconds lines of show -json, which move with the
// clock.
func stripAge(s string) string {
	var keep []string
	for _, l := range strings.Split(s, "\n") {
		if !strings.Contains(l, `"age_seconds"`) {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "\n")
}
