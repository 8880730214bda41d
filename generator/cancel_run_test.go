package generator

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// cancelRunSource is a saga cancelled while it waits: its deferred
// compensations (Release, which the generator marks Deferred) execute as
// it unwinds, and nothing else does. Every step execution appends its
// journal key and leg to the effects file.
const cancelRunSource = `package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/resumegen/resumegen/runtime/resume"
)

func track(ctx context.Context, leg string) {
	info, _ := resume.StepFromContext(ctx)
	logEffect(info.StepKey + ":" + leg)
}

//resume:workflow
func Book(ctx context.Context, id string) (err error) {
	for _, leg := range []string{"flight", "hotel"} {
		if err := Reserve(ctx, leg); err != nil {
			return err
		}
		defer func() {
			if err != nil {
				_ = Release(ctx, leg)
			}
		}()
	}
	if _, err := resume.Await[bool](ctx, "go", 0); err != nil {
		return err
	}
	return Pay(ctx, id)
}

//resume:step
func Reserve(ctx context.Context, leg string) error { track(ctx, leg); return nil }

//resume:step
func Release(ctx context.Context, leg string) error { track(ctx, leg); return nil }

//resume:step
func Pay(ctx context.Context, id string) error { track(ctx, id); return nil }

func main() {
	ctx := context.Background()
	e := newEngine(ctx)
	res, err := e.Start(ctx, "r-1", Book, "b-1")
	if res.Status == resume.StatusWaiting {
		if err := e.Cancel(ctx, "r-1", resume.CancelOptions{}); err != nil {
			panic(err)
		}
		res, err = e.Resume(ctx, "r-1")
	}
	fmt.Println("status:", res.Status, "cancelled:", errors.Is(err, resume.ErrRunCancelled))
}
`

// TestCancelledSagaUnwindsAcrossKills cancels a waiting saga and kills
// its process (SIGKILL) at each point of the unwinding; a new process
// finishes it: cancelled, each reservation released once, last first
// (twice only when killed at a release's effect, as a default step is),
// and the payment never made.
func TestCancelledSagaUnwindsAcrossKills(t *testing.T) {
	bin := buildProgram(t, "cancelrun", cancelRunSource)
	run := func(db, effects string, kill ...string) (string, []string, bool) {
		out, killed, err := runProgram(bin, append([]string{db, effects}, kill...)...)
		if err != nil {
			t.Fatalf("%v: %v\n%s", kill, err, out)
		}
		b, _ := os.ReadFile(effects)
		return string(out), strings.Fields(string(b)), killed
	}
	ref := filepath.Join(t.TempDir(), "ref.db")
	wantOut, wantFx, _ := run(ref, ref+".effects")
	if wantOut != "status: cancelled cancelled: true\n" || strings.Join(wantFx, " ") != "Reserve:flight Reserve#2:hotel Release:hotel Release#2:flight" {
		t.Fatalf("uninterrupted: %q, executions %v", wantOut, wantFx)
	}
	for _, kill := range []string{"go:before", "Release:before", "Release:effect", "Release:after", "Release#2:before", "Release#2:effect", "Release#2:after"} {
		t.Run(kill, func(t *testing.T) {
			db := filepath.Join(t.TempDir(), "j.db")
			if _, _, killed := run(db, db+".effects", kill); !killed {
				t.Fatalf("not killed at %s", kill)
			}
			out, fx, _ := run(db, db+".effects")
			if out != wantOut {
				t.Errorf("resumed: %q, want %q", out, wantOut)
			}
			want := append([]string(nil), wantFx...)
			if strings.HasSuffix(kill, ":effect") {
				i := map[string]int{"Release:effect": 2, "Release#2:effect": 3}[kill]
				want = append(want[:i+1], want[i:]...)
			}
			if strings.Join(fx, " ") != strings.Join(want, " ") {
				t.Errorf("executions %v, want %v", fx, want)
			}
		})
	}
}
