package generator

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// refsRunSource is a program whose steps write into a slice and a map the
// body hands them, and whose later step reads both.
const refsRunSource = `package main

import (
	"context"
	"fmt"
	"os"

	"github.com/resumegen/resumegen/runtime/resume"
)

//resume:workflow
func Rank(ctx context.Context, ids []string) (string, error) {
	recs := make([]int, len(ids))
	if err := Score(ctx, ids, recs); err != nil {
		return "", err
	}
	seen := map[string]int{}
	if err := Count(ctx, ids, recs, seen); err != nil {
		return "", err
	}
	return Report(ctx, recs, len(seen))
}

// Score writes each id's score into recs.
//
//resume:step
func Score(ctx context.Context, ids []string, recs []int) error {
	logEffect("Score")
	for i, id := range ids {
		recs[i] = 10 * len(id)
	}
	return nil
}

// Count fills seen.
//
//resume:step
func Count(ctx context.Context, ids []string, recs []int, seen map[string]int) error {
	logEffect("Count")
	for i, id := range ids {
		seen[id] = recs[i]
	}
	return nil
}

// Report reads what the steps before it wrote.
//
//resume:step
func Report(ctx context.Context, recs []int, n int) (string, error) {
	logEffect("Report")
	return fmt.Sprint(recs, n), nil
}

func main() {
	ctx := context.Background()
	out, err := resume.Run(ctx, newEngine(ctx), "r-1", Rank, []string{"a", "bb", "ccc"})
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	fmt.Println(out)
}
`

// TestRefsWrittenBackOnResume kills a run before its last step, after two
// steps wrote into the body's slice and map, and resumes it in a new
// process: the two steps are not executed again, and the last one reads
// what they wrote, restored from the journal. Before, the resumed body
// handed Report an empty slice ("[0 0 0] 0").
func TestRefsWrittenBackOnResume(t *testing.T) {
	bin := buildProgram(t, "refsrun", refsRunSource)
	db := filepath.Join(t.TempDir(), "j.db")
	effects := db + ".effects"
	out, killed, err := runProgram(bin, db, effects, "Report:before")
	if !killed {
		t.Fatalf("first run was not killed at Report: %v\n%s", err, out)
	}
	out, _, err = runProgram(bin, db, effects)
	if err != nil || strings.TrimSpace(out) != "[10 20 30] 3" {
		t.Fatalf("resumed run = %q (%v), want \"[10 20 30] 3\": the slice and map the steps wrote were not restored", strings.TrimSpace(out), err)
	}
	b, err := os.ReadFile(effects)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Fields(string(b)); strings.Join(got, " ") != "Score Count Report" {
		t.Errorf("step executions = %v, want each once", got)
	}
}
