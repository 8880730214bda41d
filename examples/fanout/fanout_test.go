package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/resumegen/resumegen/internal/pgtest"
	"github.com/resumegen/resumegen/internal/proctest"
)

// A fan-out killed mid-way (a real SIGKILL of the process running the
// parent and the workers) and resumed by two processes at once must give
// the Summary an uninterrupted run gives, and execute again only the items
// whose child run had not finished: a child that succeeded before the
// kill is never executed again.

var binary string

func TestMain(m *testing.M) { proctest.Main(m, "fanout", &binary) }

// journalTarget makes an empty journal for one run of the test: a SQLite
// file in dir, or a fresh PostgreSQL database.
type journalTarget func(t *testing.T, dir, name string) string

func sqliteTarget(t *testing.T, dir, name string) string { return filepath.Join(dir, name+".db") }

func postgresTarget(t *testing.T, dir, name string) string { return pgtest.FreshDatabase(t) }

func TestKillMidwaySQLite(t *testing.T)   { testKillMidway(t, sqliteTarget) }
func TestKillMidwayPostgres(t *testing.T) { testKillMidway(t, postgresTarget) }

const items, workers = 12, 4

func testKillMidway(t *testing.T, target journalTarget) {
	for _, tc := range []struct{ name, flag string }{
		{"kill-after=1", "-kill-after=1"}, // in the first child's Weigh
		{"kill-after=6", "-kill-after=6"}, // children done, running, pending
		{"kill-after=11", "-kill-after=11"},
		{"dispatch", "-crash=ScoreItem[i05]:before"}, // the parent dispatching
		{"dispatch-last", "-crash=ScoreItem[i11]:before"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			ref := fanout(t, target(t, dir, "ref"), filepath.Join(dir, "ref.effects"))
			want, killed := ref.run()
			if killed {
				t.Fatal("the reference run was killed")
			}
			for item, n := range ref.executions() {
				if n != 1 {
					t.Errorf("reference run: %s executed %d times, want 1", item, n)
				}
			}

			c := fanout(t, target(t, dir, "crash"), filepath.Join(dir, "crash.effects"))
			if _, killed := c.run(tc.flag); !killed {
				t.Fatalf("the process was not killed at %s", tc.flag)
			}
			atKill := c.children()
			before := c.executions()
			finished := 0
			for _, status := range atKill {
				if status == "succeeded" {
					finished++
				}
			}
			if len(atKill) == items && finished == items {
				t.Fatalf("all %d children finished before the kill: it was not mid-way", items)
			}

			// Two processes resume it at once: the children are shared
			// between their workers.
			var wg sync.WaitGroup
			outs := make([]string, 2)
			for i := range outs {
				wg.Go(func() {
					var killed bool
					if outs[i], killed = c.run("-workers=2"); killed {
						t.Errorf("resume %d was killed", i)
					}
				})
			}
			wg.Wait()
			for i, got := range outs {
				if got != want {
					t.Errorf("resume %d printed %s, want %s (the uninterrupted run's)", i, got, want)
				}
			}
			after := c.executions()
			redone := 0
			for _, step := range []string{"Fetch", "Weigh"} {
				for i := range items {
					item := fmt.Sprintf("%s i%02d", step, i)
					child := fmt.Sprintf("fan/ScoreItem[i%02d]", i)
					switch n := after[item]; {
					case n == 0:
						t.Errorf("%s never executed", item)
					case atKill[child] == "succeeded" && n != 1:
						t.Errorf("%s executed %d times, but its child run had succeeded before the kill: want 1", item, n)
					case n > before[item]+1 || n > 2:
						t.Errorf("%s executed %d times (%d before the kill): a resume executes an unfinished item once more at most", item, n, before[item])
					case n == 2:
						redone++
					}
				}
			}
			if after["ListItems fan"] != 1 {
				t.Errorf("ListItems executed %d times, want 1 (journaled before the kill)", after["ListItems fan"])
			}
			// At least once: only the steps executing when the process
			// died (up to one per worker) may execute twice.
			if redone > 2*workers {
				t.Errorf("%d step executions repeated, want at most %d (the steps in flight at the kill)", redone, 2*workers)
			}
		})
	}
}

// proc runs the example against one journal.
type proc struct {
	t       *testing.T
	db      string
	effects string
}

func fanout(t *testing.T, db, effects string) *proc { return &proc{t: t, db: db, effects: effects} }

// run runs the example with the run's flags and extra ones; killed
// reports a SIGKILL.
func (p *proc) run(extra ...string) (out string, killed bool) {
	p.t.Helper()
	args := append([]string{"-db", p.db, "-effects", p.effects, "-run", "fan", "-n", fmt.Sprint(items), "-workers", fmt.Sprint(workers), "-work", "30ms", "-lease", "2s"}, extra...)
	stdout, stderr, killed, err := proctest.Run(binary, args...)
	if err != nil {
		p.t.Errorf("fanout %v: %v\n%s%s", extra, err, stdout, stderr)
	}
	return stdout, killed
}

// children returns the status of each child run, by id.
func (p *proc) children() map[string]string {
	p.t.Helper()
	out, _ := p.run("-show")
	m := map[string]string{}
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		p.t.Fatalf("-show printed %q: %v", out, err)
	}
	return m
}

// executions counts the effects log's lines ("STEP ITEM").
func (p *proc) executions() map[string]int {
	p.t.Helper()
	b, err := os.ReadFile(p.effects)
	if err != nil {
		p.t.Fatal(err)
	}
	out := map[string]int{}
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		out[l]++
	}
	return out
}
