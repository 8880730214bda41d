package generator

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// handleSource is a program that starts a run awaiting an event, sends it
// through the workflow's generated run handle and waits for the output
// through it; the send is os.Args[3] ("typed" or a Go expression the
// compile tests replace).
const handleSource = `package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/resumegen/resumegen/runtime/resume"
)

// Decision is the approval event's payload.
type Decision struct{ OK bool }

//resume:workflow
func Approve(ctx context.Context, amount int) (string, error) {
	d, err := resume.Await[Decision](ctx, "approval", time.Hour)
	if err != nil {
		return "", err
	}
	if !d.OK {
		return "rejected", nil
	}
	return fmt.Sprint("paid ", amount), Audit(ctx, amount)
}

//resume:workflow
func Audit(ctx context.Context, amount int) error {
	_, err := resume.Await[string](ctx, "audited", time.Hour)
	return err
}

func main() {
	ctx := context.Background()
	e := newEngine(ctx)
	if _, err := e.Start(ctx, "r-1", Approve, 7); !errors.Is(err, resume.ErrRunWaiting) {
		fmt.Println("start:", err)
		os.Exit(1)
	}
	run := ApproveRun{Engine: e, ID: "r-1"}
	if err := (AuditRun{Engine: e, ID: "r-1"}).SignalAudited(ctx, "x"); !errors.Is(err, resume.ErrOtherWorkflow) {
		fmt.Println("a parent run signalled through the child's handle:", err)
		os.Exit(1)
	}
	if err := e.Signal(ctx, "r-1", "aproval", Decision{OK: true}); !errors.Is(err, resume.ErrNotAwaited) {
		fmt.Println("a misspelt event was accepted:", err)
		os.Exit(1)
	}
	if err := e.Signal(ctx, "r-1", "audited", "x"); !errors.Is(err, resume.ErrNotAwaited) || !strings.Contains(err.Error(), "child workflow") {
		fmt.Println("a child's event sent to the parent:", err)
		os.Exit(1)
	}
	SEND
	go func() {
		for {
			if _, err := e.Resume(ctx, "r-1"); err == nil {
				return
			}
			if err := (AuditRun{Engine: e, ID: resume.ChildRunID("r-1", "Audit")}).SignalAudited(ctx, "ok"); err == nil {
				e.Resume(ctx, resume.ChildRunID("r-1", "Audit"))
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	out, err := run.Wait(ctx)
	fmt.Println(out, err)
}
`

// TestRunHandle builds a program that signals a run and waits for it
// through the generated run handle, and runs it: the signal reaches the
// await, Wait returns the typed output, a misspelt name and a child's
// event sent to the parent are refused at run time by Engine.Signal, and
// the child's handle on the parent's run by resume.ErrOtherWorkflow.
func TestRunHandle(t *testing.T) {
	bin := buildProgram(t, "handlerun", strings.Replace(handleSource, "SEND", `if err := run.SignalApproval(ctx, Decision{OK: true}); err != nil {
		fmt.Println("signal:", err)
		os.Exit(1)
	}`, 1))
	db := filepath.Join(t.TempDir(), "j.db")
	out, _, err := runProgram(bin, db, db+".effects")
	if err != nil || strings.TrimSpace(out) != "paid 7 <nil>" {
		t.Fatalf("run = %q (%v), want \"paid 7 <nil>\"", strings.TrimSpace(out), err)
	}
}

// TestRunHandleCompileErrors compiles code that sends an event by a
// misspelt name, with the wrong payload type, and a child's event to the
// parent's handle: each is a compile error, not a signal kept for an await
// that never comes.
func TestRunHandleCompileErrors(t *testing.T) {
	dir := filepath.Join(testModule, "handlecompile")
	buildProgram(t, "handlecompile", strings.Replace(handleSource, "SEND", "_ = run.SignalApproval(ctx, Decision{})", 1))
	for _, tc := range []struct{ send, want string }{
		{"_ = run.SignalAproval(ctx, Decision{})", "run.SignalAproval undefined (type ApproveRun has no field or method SignalAproval)"},
		{`_ = run.SignalApproval(ctx, "yes")`, `cannot use "yes" (untyped string constant) as Decision value in argument to run.SignalApproval`},
		{`_ = run.SignalAudited(ctx, "x")`, "run.SignalAudited undefined (type ApproveRun has no field or method SignalAudited)"},
	} {
		// Generated from scratch: code naming the handle before it exists
		// is no error of the generator's.
		os.Remove(filepath.Join(dir, "main_resume.go"))
		writeFiles(t, dir, map[string]string{"main.go": strings.Replace(handleSource, "SEND", tc.send, 1)})
		res := generateIn(t, dir)
		if len(res.Diagnostics) > 0 {
			t.Fatalf("diagnostics: %v", res.Diagnostics)
		}
		if _, err := res.Write(); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command("go", "build", "-o", filepath.Join(t.TempDir(), "bin"), ".")
		cmd.Dir, cmd.Env = dir, testEnv
		out, err := cmd.CombinedOutput()
		if err == nil || !strings.Contains(string(out), tc.want) {
			t.Errorf("go build with %s: %v, want the compile error %q:\n%s", tc.send, err, tc.want, out)
		}
	}
}
