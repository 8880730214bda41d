package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/resumegen/resumegen/internal/proctest"
)

// Killing the batch inside its loop, at every kind of step it has, and
// resuming it in a new process must give the run an uncrashed process
// gives: the same output and the same step executions, each once, but for
// the step killed at "effect" (at least once: twice).

var binary string

func TestMain(m *testing.M) { proctest.Main(m, "batch", &binary) }

// runBatch runs the batch binary; killed reports a SIGKILL.
func runBatch(t *testing.T, db string, limit int, crash string) (out string, killed bool) {
	t.Helper()
	args := []string{"-db", db, "-run", "b", "-limit", fmt.Sprint(limit)}
	if crash != "" {
		args = append(args, "-crash", crash)
	}
	stdout, stderr, killed, err := proctest.Run(binary, args...)
	if killed {
		return stdout + stderr, true
	}
	if err != nil {
		t.Fatalf("batch %v: %v\n%s%s", args, err, stdout, stderr)
	}
	return stdout + stderr, false
}

// executions counts the effects log's lines by step key.
func executions(t *testing.T, db string) map[string]int {
	t.Helper()
	b, err := os.ReadFile(db + ".effects")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		_, key, _ := strings.Cut(l, " ")
		out[key]++
	}
	return out
}

func TestKillInsideTheLoop(t *testing.T) {
	for _, tc := range []struct {
		limit int
		crash string
	}{
		{1000, "ListItems:effect"},
		{1000, "Price:before"},
		{1000, "Price#2:effect"}, // the nested step, second iteration
		{1000, "Price#3:after"},
		{1000, "Charge[b-item-2]:before"}, // the keyed step
		{1000, "Charge[b-item-2]:effect"},
		{1000, "Charge[b-item-4]:after"},
		{1000, "Close:effect"},
		{200, "Price#2:effect"}, // the batch returns early at item 3
		{200, "Charge[b-item-2]:after"},
	} {
		t.Run(fmt.Sprintf("limit=%d/%s", tc.limit, tc.crash), func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			ref := filepath.Join(dir, "ref.db")
			want, _ := runBatch(t, ref, tc.limit, "")
			wantExec := executions(t, ref)

			db := filepath.Join(dir, "crash.db")
			if _, killed := runBatch(t, db, tc.limit, tc.crash); !killed {
				t.Fatalf("the process was not killed at %s", tc.crash)
			}
			got, killed := runBatch(t, db, tc.limit, "")
			if killed {
				t.Fatal("the resume was killed")
			}
			if got != want {
				t.Errorf("output after resume = %s, want %s", got, want)
			}
			step, point, _ := strings.Cut(tc.crash, ":")
			gotExec := executions(t, db)
			for key, n := range wantExec {
				if key == step && point == "effect" {
					n = 2
				}
				if gotExec[key] != n {
					t.Errorf("%s executed %d times, want %d", key, gotExec[key], n)
				}
			}
			if len(gotExec) != len(wantExec) {
				t.Errorf("executed keys %v, want %v", gotExec, wantExec)
			}
		})
	}
}
