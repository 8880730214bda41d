package generator

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// replayOutSource is a program whose workflow reads what its steps wrote
// through pointer parameters. Its first run dies (SIGKILL) before Charge;
// the second resumes the run, replaying Fetch and Count from the journal.
const replayOutSource = `package main

import (
	"context"
	"fmt"
	"os"

	"github.com/resumegen/resumegen/runtime/resume"
	"github.com/resumegen/resumegen/runtime/sqlitejournal"
)

type Info struct {
	Email string
	Cents int
	Tags  []string
}

//resume:workflow
func Checkout(ctx context.Context, id string) (string, error) {
	var info Info
	if err := Fetch(ctx, id, &info); err != nil {
		return "", err
	}
	var note string
	n, err := Count(ctx, &note, nil)
	if err != nil {
		return "", err
	}
	return Charge(ctx, fmt.Sprintf("%s %d %v %s %d", info.Email, info.Cents, info.Tags, note, n))
}

//resume:step
func Fetch(ctx context.Context, id string, info *Info) error {
	record("Fetch")
	info.Email, info.Cents, info.Tags = id+"@example.com", 1250, []string{"vip"}
	return nil
}

//resume:step
func Count(ctx context.Context, note *string, unused *Info) (int, error) {
	record("Count")
	*note = "counted"
	return 7, nil
}

//resume:step
func Charge(ctx context.Context, what string) (string, error) {
	record("Charge")
	return "charged " + what, nil
}

func record(step string) {
	f, err := os.OpenFile(os.Getenv("EFFECTS"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		panic(err)
	}
	defer f.Close()
	fmt.Fprintln(f, step)
}

func main() {
	ctx := context.Background()
	j, err := sqlitejournal.Open(ctx, os.Args[1])
	if err != nil {
		panic(err)
	}
	var opts []resume.Option
	if len(os.Args) > 2 {
		f, err := resume.ParseFault(os.Args[2])
		if err != nil {
			panic(err)
		}
		opts = append(opts, resume.WithFault(f))
	}
	out, err := resume.Run(ctx, resume.NewEngine(j, opts...), "r1", Checkout, "ann")
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	fmt.Println(out)
}
`

// TestReplayRestoresPointees runs generated code: a run killed after the
// steps that wrote through pointers is resumed by a new process, which
// must replay them (not execute them again) and still see what they
// wrote, as the uninterrupted run did.
func TestReplayRestoresPointees(t *testing.T) {
	bin := buildProgram(t, "replayout", replayOutSource)
	tmp := t.TempDir()

	const want = "charged ann@example.com 1250 [vip] counted 7\n"
	run := func(db, effects string, args ...string) (string, error) {
		cmd := exec.Command(bin, append([]string{db}, args...)...)
		cmd.Env = append(os.Environ(), "EFFECTS="+effects)
		out, err := cmd.Output()
		return string(out), err
	}
	executions := func(effects string) string {
		b, err := os.ReadFile(effects)
		if err != nil {
			t.Fatal(err)
		}
		return strings.Join(strings.Fields(string(b)), " ")
	}

	// Uninterrupted: the reference.
	db, effects := filepath.Join(tmp, "straight.db"), filepath.Join(tmp, "straight.log")
	if out, err := run(db, effects); err != nil || out != want {
		t.Fatalf("uninterrupted run: %q, %v; want %q", out, err, want)
	}

	for _, crash := range []string{"Count:after", "Charge:before"} {
		t.Run(crash, func(t *testing.T) {
			name := strings.ReplaceAll(crash, ":", "-")
			db, effects := filepath.Join(tmp, name+".db"), filepath.Join(tmp, name+".log")
			if out, err := run(db, effects, crash); err == nil {
				t.Fatalf("the run with fault %s did not die: %q", crash, out)
			}
			out, err := run(db, effects)
			if err != nil || out != want {
				t.Errorf("resumed run: %q, %v; want %q, as the uninterrupted run", out, err, want)
			}
			if got := executions(effects); got != "Fetch Count Charge" {
				t.Errorf("executions: %s, want each step once: Fetch Count Charge", got)
			}
		})
	}
}
