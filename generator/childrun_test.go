package generator

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// childRunSource is a program whose workflow Parent runs step Before, then
// workflow Kid as a child run (steps One and Two, reached in Kid through a
// helper), then step After. Every step execution appends its run id and
// journal key to the effects file.
const childRunSource = `package main

import (
	"context"
	"fmt"
	"os"

	"github.com/resumegen/resumegen/runtime/resume"
)

func track(ctx context.Context) {
	info, _ := resume.StepFromContext(ctx)
	logEffect(info.RunID + " " + info.StepKey)
}

//resume:workflow
func Parent(ctx context.Context, id string) (int, error) {
	if err := Before(ctx, id); err != nil {
		return 0, err
	}
	n, err := Kid(ctx, id+"-kid")
	if err != nil {
		return 0, err
	}
	return n + 100, After(ctx, id)
}

//resume:workflow
func Kid(ctx context.Context, id string) (int, error) {
	a, err := step(ctx, 1)
	if err != nil {
		return 0, err
	}
	b, err := Two(ctx, 2)
	return a + b, err
}

func step(ctx context.Context, n int) (int, error) { return One(ctx, n) }

// Countdown calls itself: each level is a child run of the one above.
//
//resume:workflow
func Countdown(ctx context.Context, n int) (int, error) {
	if n == 0 {
		return 0, nil
	}
	if _, err := Two(ctx, n); err != nil {
		return 0, err
	}
	m, err := Countdown(ctx, n-1)
	return m + n, err
}

//resume:step
func Before(ctx context.Context, id string) error { track(ctx); return nil }

//resume:step once
func One(ctx context.Context, n int) (int, error) { track(ctx); return n, nil }

//resume:step
func Two(ctx context.Context, n int) (int, error) { track(ctx); return n, nil }

//resume:step once
func After(ctx context.Context, id string) error { track(ctx); return nil }

func main() {
	ctx := context.Background()
	if len(os.Args) > 3 && os.Args[3] == "countdown" {
		n, err := resume.Run(ctx, newEngine(ctx), "c-1", Countdown, 3)
		fmt.Println("countdown", n, err)
		return
	}
	n, err := resume.Run(ctx, newEngine(ctx), "r-1", Parent, "o-1")
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	fmt.Println("result", n)
}
`

// TestChildRunSurvivesResume kills a parent run inside its child run (at
// the child's second step, before and after its effect), and at the
// parent's own step of the child call once the child finished, and resumes
// it in a new process: the child resumes where it stopped, no step runs
// twice except the one a default step's effect point allows, and the
// parent's step after the child runs once. Before a workflow called from a
// workflow was a child run, its steps were not journaled at all and the
// kill points inside it were never reached. A recursive workflow runs
// each level as a run of its own. The program runs with the default
// 30-second lease: a resumed parent takes over at once both its own run
// and the child run its dead process held, whose liveness lock the OS
// released.
func TestChildRunSurvivesResume(t *testing.T) {
	bin := buildProgram(t, "childrun", childRunSource)

	t.Run("recursion", func(t *testing.T) {
		db := filepath.Join(t.TempDir(), "j.db")
		effects := db + ".effects"
		out, err := exec.Command(bin, db, effects, "countdown").CombinedOutput()
		if err != nil || strings.TrimSpace(string(out)) != "countdown 6 <nil>" {
			t.Fatalf("countdown: %v\n%s", err, out)
		}
		b, err := os.ReadFile(effects)
		if err != nil {
			t.Fatal(err)
		}
		want := "c-1 Two\nc-1/Countdown Two\nc-1/Countdown/Countdown Two\n"
		if string(b) != want {
			t.Errorf("step executions:\n%s\nwant, each level a run of its own:\n%s", b, want)
		}
	})

	once := []string{"r-1 Before", "r-1/Kid One", "r-1/Kid Two", "r-1 After"}
	for _, tc := range []struct {
		fault string
		want  []string
	}{
		{"Two:before", once},
		{"Two:effect", []string{"r-1 Before", "r-1/Kid One", "r-1/Kid Two", "r-1/Kid Two", "r-1 After"}},
		{"Two:after", once},
		{"Kid:effect", once},
		{"Kid:after", once},
	} {
		t.Run(tc.fault, func(t *testing.T) {
			db := filepath.Join(t.TempDir(), "j.db")
			effects := db + ".effects"
			out, killed, err := runProgram(bin, db, effects, tc.fault)
			if !killed {
				t.Fatalf("first run was not killed at %s: %v\n%s", tc.fault, err, out)
			}
			out, _, err = runProgram(bin, db, effects)
			if err != nil || strings.TrimSpace(string(out)) != "result 103" {
				t.Fatalf("resumed run: %v\n%s", err, out)
			}
			b, err := os.ReadFile(effects)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
				got = append(got, strings.Join(strings.Fields(l), " "))
			}
			if strings.Join(got, "|") != strings.Join(tc.want, "|") {
				t.Errorf("step executions = %q, want %q", got, tc.want)
			}
		})
	}
}
