package generator

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// deferRunSource is a saga whose compensations are deferred steps: a
// failed payment undoes, last in first out, what was reserved. Every step
// execution appends its journal key to the effects file.
const deferRunSource = `package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/resumegen/resumegen/runtime/resume"
)

func track(ctx context.Context) {
	info, _ := resume.StepFromContext(ctx)
	logEffect(info.StepKey)
}

//resume:workflow
func Book(ctx context.Context, id string) (err error) {
	for _, leg := range []string{"flight", "hotel", "car"} {
		if err := Reserve(ctx, leg); err != nil {
			return err
		}
		defer func() {
			if err != nil {
				_ = Cancel(ctx, leg)
			}
		}()
	}
	return Pay(ctx, id)
}

//resume:step
func Reserve(ctx context.Context, leg string) error { track(ctx); return nil }

//resume:step
func Cancel(ctx context.Context, leg string) error { track(ctx); return nil }

//resume:step
func Pay(ctx context.Context, id string) error {
	track(ctx)
	return resume.Permanent(errors.New("card declined"))
}

func main() {
	ctx := context.Background()
	_, err := newEngine(ctx).Start(ctx, "r-1", Book, "b-1")
	fmt.Println("error:", err)
}
`

// TestDeferredStepsSurviveResume kills a saga inside its deferred
// compensations and resumes it in a new process: the compensations run
// last in first out, each once, and the resumed run ends as an
// uninterrupted one does.
func TestDeferredStepsSurviveResume(t *testing.T) {
	bin := buildProgram(t, "deferrun", deferRunSource)
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
	if got := strings.Join(wantFx, " "); got != "Reserve Reserve#2 Reserve#3 Pay Cancel Cancel#2 Cancel#3" {
		t.Fatalf("uninterrupted executions: %s", got)
	}
	for _, kill := range []string{"Cancel:before", "Cancel:after", "Cancel#2:before", "Cancel#2:after", "Cancel#3:before"} {
		t.Run(kill, func(t *testing.T) {
			db := filepath.Join(t.TempDir(), "j.db")
			if _, _, killed := run(db, db+".effects", kill); !killed {
				t.Fatalf("not killed at %s", kill)
			}
			out, fx, _ := run(db, db+".effects")
			if out != wantOut {
				t.Errorf("resumed run: %s, want %s", out, wantOut)
			}
			if strings.Join(fx, " ") != strings.Join(wantFx, " ") {
				t.Errorf("executions %v, want %v: each compensation once, last in first out", fx, wantFx)
			}
		})
	}
}
