package generator

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// helperRunSource is a program whose workflow reaches its steps only
// through helpers: a method helper that calls a function helper in a
// loop. Every step execution appends its journal key to the effects file.
const helperRunSource = `package main

import (
	"context"
	"fmt"
	"os"

	"github.com/resumegen/resumegen/runtime/resume"
)

func track(ctx context.Context) {
	info, _ := resume.StepFromContext(ctx)
	logEffect(info.StepKey)
}

type team struct{ owners []string }

//resume:workflow
func Onboard(ctx context.Context, id string) (int, error) {
	t := team{owners: []string{"a", "b", "c"}}
	return t.notifyAll(ctx)
}

func (t *team) notifyAll(ctx context.Context) (int, error) {
	n := 0
	for _, o := range t.owners {
		if err := notifyOne(ctx, o); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

func notifyOne(ctx context.Context, o string) error { return Notify(ctx, o) }

//resume:step once
func Notify(ctx context.Context, o string) error {
	track(ctx)
	return nil
}

func main() {
	ctx := context.Background()
	n, err := resume.Run(ctx, newEngine(ctx), "r-1", Onboard, "c-1")
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	fmt.Println("notified", n)
}
`

// TestHelperStepsSurviveResume kills a run inside a helper's loop, at the
// second execution of a step reached only through two helpers, and
// resumes it in a new process: the steps journaled before the kill are
// not executed again. Before helpers were followed, the steps were not
// journaled at all and the kill point was never reached.
func TestHelperStepsSurviveResume(t *testing.T) {
	bin := buildProgram(t, "helperrun", helperRunSource)
	db := filepath.Join(t.TempDir(), "j.db")
	effects := db + ".effects"

	out, killed, err := runProgram(bin, db, effects, "Notify#2:before")
	if !killed {
		t.Fatalf("first run was not killed at Notify#2 (the helper's step is not journaled): %v\n%s", err, out)
	}
	out, _, err = runProgram(bin, db, effects)
	if err != nil || strings.TrimSpace(string(out)) != "notified 3" {
		t.Fatalf("resumed run: %v\n%s", err, out)
	}
	b, err := os.ReadFile(effects)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Fields(string(b)), []string{"Notify", "Notify#2", "Notify#3"}; strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("step executions = %v, want %v: each once, the first not again on resume", got, want)
	}
}
