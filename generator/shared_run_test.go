package generator

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// sharedRunMain is a program whose workflow reaches its steps only
// through helpers of another package of the module: util.NotifyAll loops
// over owners and calls an unexported helper whose call-site step is
// keyed by owner, then a method helper of util runs a declared step. Each
// step execution appends its journal key to the effects file.
const sharedRunMain = `package main

import (
	"context"
	"fmt"
	"os"

	"example.com/golden/sharedrun/util"
	"github.com/resumegen/resumegen/runtime/resume"
)

func init() { util.Effect = logEffect }

//resume:workflow
func Onboard(ctx context.Context, owners []string) (int, error) {
	n, err := util.NotifyAll(ctx, owners)
	if err != nil {
		return 0, err
	}
	t := util.Team{Name: "core"}
	return n, t.Welcome(ctx)
}

func main() {
	ctx := context.Background()
	n, err := resume.Run(ctx, newEngine(ctx), "r-1", Onboard, []string{"a", "b", "c"})
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	fmt.Println("notified", n)
}
`

// sharedRunUtil is the helpers' package.
const sharedRunUtil = `package util

import (
	"context"

	"github.com/resumegen/resumegen/runtime/resume"
)

// Effect records a step's execution; the program sets it.
var Effect func(string)

func track(ctx context.Context) {
	info, _ := resume.StepFromContext(ctx)
	Effect(info.StepKey)
}

// NotifyAll notifies each owner.
func NotifyAll(ctx context.Context, owners []string) (int, error) {
	n := 0
	for _, o := range owners {
		if err := notifyOne(ctx, o); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

func notifyOne(ctx context.Context, o string) error {
	return send(ctx, o) //resume:step name=Notify key=o
}

func send(ctx context.Context, to string) error {
	track(ctx)
	return nil
}

// Team is a team.
type Team struct{ Name string }

// Welcome greets the team.
func (t Team) Welcome(ctx context.Context) error { return Post(ctx, t.Name) }

// Post posts once.
//
//resume:step once
func Post(ctx context.Context, channel string) error {
	track(ctx)
	return nil
}
`

// TestSharedHelperStepsSurviveResume kills a run inside a loop of a
// helper of another package, before the second owner's step, and resumes
// it in a new process: the steps journaled before the kill are not
// executed again, and every step runs once. Before helpers of other
// packages were followed, the workflow was refused.
func TestSharedHelperStepsSurviveResume(t *testing.T) {
	dir := filepath.Join(testModule, "sharedrun")
	writeFiles(t, dir, map[string]string{"util/util.go": sharedRunUtil})
	bin := buildProgram(t, "sharedrun", sharedRunMain)
	if _, err := os.Stat(filepath.Join(dir, "util", "util_resume.go")); err != nil {
		t.Fatalf("no shared copies in the helpers' package: %v", err)
	}
	db := filepath.Join(t.TempDir(), "j.db")
	effects := db + ".effects"

	out, killed, err := runProgram(bin, db, effects, "Notify[b]:before")
	if !killed {
		t.Fatalf("first run was not killed at Notify[b] (the shared copy's step is not journaled): %v\n%s", err, out)
	}
	out, _, err = runProgram(bin, db, effects)
	if err != nil || strings.TrimSpace(out) != "notified 3" {
		t.Fatalf("resumed run: %v\n%s", err, out)
	}
	b, err := os.ReadFile(effects)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Fields(string(b)), []string{"Notify[a]", "Notify[b]", "Notify[c]", "Post"}; strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("step executions = %v, want %v: each once, the first not again on resume", got, want)
	}
}

// TestSharedHelperStale edits the helper of the other package after go
// generate and rebuilds without generating: the run refuses to start,
// naming the helper's file, instead of running the old copy.
func TestSharedHelperStale(t *testing.T) {
	dir := filepath.Join(testModule, "sharedstale")
	writeFiles(t, dir, map[string]string{"util/util.go": sharedRunUtil})
	buildProgram(t, "sharedstale", strings.ReplaceAll(sharedRunMain, "sharedrun", "sharedstale"))
	edited := strings.Replace(sharedRunUtil, "n++", "n += 2", 1)
	writeFiles(t, dir, map[string]string{"util/util.go": edited})
	bin := filepath.Join(t.TempDir(), "sharedstale")
	goCmd(t, dir, "build", "-o", bin, ".")
	db := filepath.Join(t.TempDir(), "j.db")
	out, _, err := runProgram(bin, db, db+".effects")
	if err == nil {
		t.Fatalf("a run started from a stale shared copy:\n%s", out)
	}
	for _, want := range []string{"generated code is stale", "util.go (package example.com/golden/sharedstale/util)", "run go generate"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if b, _ := os.ReadFile(db + ".effects"); len(b) > 0 {
		t.Errorf("steps ran from a stale copy: %q", b)
	}
}
