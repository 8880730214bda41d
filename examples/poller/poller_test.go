package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// TestWatchContinues runs a chain of Watch to its end: four runs, each
// with a journal of its own three polls (a Fetch and a sleep each), each
// continued as the next, and the cursor carried across all of them.
func TestWatchContinues(t *testing.T) {
	var out bytes.Buffer
	if err := watch(context.Background(), filepath.Join(t.TempDir(), "j.db"), "w", &out); err != nil {
		t.Fatal(err)
	}
	want := `run w: 6 journal rows, continued as "w~2"
run w~2: 6 journal rows, continued as "w~3"
run w~3: 6 journal rows, continued as "w~4"
run w~4: 6 journal rows, continued as ""
cursor {Offset:24 Run:3}
`
	if got := out.String(); got != want {
		t.Errorf("output:\n%s\nwant:\n%s", got, want)
	}
	if strings.Count(out.String(), "6 journal rows") != 4 {
		t.Errorf("a run's journal is not bounded: %s", out.String())
	}
}
