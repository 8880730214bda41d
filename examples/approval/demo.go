package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"time"

	"github.com/resumegen/resumegen/runtime/journal"
)

// demo narrates the example in a temporary folder, with real processes
// and the real resumectl (built there from this module, or found on
// $PATH).
func demo(ctx context.Context, out io.Writer) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	root, err := os.MkdirTemp("", "resumegen-approval-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(root)
	ctl, err := findResumectl(ctx, root)
	if err != nil {
		return err
	}
	t := tools{self: self, ctl: ctl, out: out}
	// Each scene's journal is a SQLite file in its world's folder, which
	// the example creates.
	return t.narrate(ctx, func(name string) place {
		dir := filepath.Join(root, name)
		return place{db: filepath.Join(dir, "journal.db"), world: dir}
	})
}

// findResumectl builds resumectl into dir, or finds it on $PATH when the
// demo does not run inside the module.
func findResumectl(ctx context.Context, dir string) (string, error) {
	bin := filepath.Join(dir, "resumectl")
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, "github.com/resumegen/resumegen/cmd/resumectl")
	if out, err := build.CombinedOutput(); err != nil {
		if p, lerr := exec.LookPath("resumectl"); lerr == nil {
			return p, nil
		}
		return "", fmt.Errorf("build resumectl (run the demo inside the resumegen module, or put resumectl on $PATH): %v\n%s", err, out)
	}
	return bin, nil
}

// narrate plays the demo's scenes, each on the journal and world at(name)
// gives (a SQLite file each for the demo; a PostgreSQL database in a
// test).
func (t tools) narrate(ctx context.Context, at func(name string) place) error {
	say := func(format string, args ...any) { fmt.Fprintf(t.out, format+"\n", args...) }
	say("== 1. The approval arrives while no process runs ==")
	say("Approve submits the report, sleeps (the reminder's delay, 1s here, 24h by default),\n" +
		"reminds the approver, then waits up to 72h for the \"approval\" event. While it waits the\n" +
		"run holds no process: this one is killed, as an OOM kill or a deploy would.")
	twin, err := t.uninterrupted(ctx, at("twin"), `{"approved":true,"by":"dana"}`)
	if err != nil {
		return err
	}
	got, err := t.approveWhileDown(ctx, at("crash"))
	if err != nil {
		return err
	}
	if err := sameAs(got, twin); err != nil {
		return err
	}
	say("Same outcome, payment and emails as a run nobody killed: %s.", twin.World.summary())

	say("\n== 2. Nobody decides: the timeout passes while no process runs ==")
	say("The same report with 2s to decide. The process is killed while the run waits; the\n" +
		"deadline was journaled, so a process started after it finds the wait timed out.")
	return t.timeoutWhileDown(ctx, at("timeout"))
}

// approveWhileDown is scene 1: the run waits, its process is killed, the
// approval is sent with resumectl (a payload of the wrong shape first),
// and a new process finishes the run.
func (t tools) approveWhileDown(ctx context.Context, p place) (report, error) {
	const run = "exp-42"
	pr, err := t.start(ctx, p, run, "-remind", "1s")
	if err != nil {
		return report{}, err
	}
	if err := waitUntil(ctx, p, run, journal.WaitSignal, pr); err != nil {
		return report{}, err
	}
	if err := pr.kill(t.out); err != nil {
		return report{}, err
	}
	if err := t.resumectl(ctx, p, "runs", "list", "-status", "waiting"); err != nil {
		return report{}, err
	}
	fmt.Fprintln(t.out, "The approver answers while no process runs. A payload of another shape is refused when sent:")
	if err := t.resumectl(ctx, p, "runs", "signal", run, "approval", `{"approved":"yes"}`); err == nil {
		return report{}, fmt.Errorf("run %s: resumectl accepted a payload whose approved is a string", run)
	}
	if err := t.resumectl(ctx, p, "runs", "signal", run, "approval", `{"approved":true,"by":"dana"}`); err != nil {
		return report{}, err
	}
	fmt.Fprintln(t.out, "A new process, the same command, finishes the run:")
	if _, err := t.finish(ctx, p, run, "-remind", "1s"); err != nil {
		return report{}, err
	}
	return t.show(ctx, p, run)
}

// uninterrupted runs the report's twin, its process alive throughout,
// the decision sent while it waits, to compare the scenes with.
func (t tools) uninterrupted(ctx context.Context, p place, decision string) (report, error) {
	quiet := tools{self: t.self, ctl: t.ctl, out: io.Discard}
	const run = "exp-42"
	pr, err := quiet.start(ctx, p, run, "-remind", "1s")
	if err != nil {
		return report{}, err
	}
	if err := waitUntil(ctx, p, run, journal.WaitSignal, pr); err != nil {
		return report{}, err
	}
	if err := quiet.resumectl(ctx, p, "runs", "signal", run, "approval", decision); err != nil {
		return report{}, err
	}
	if _, killed, err := pr.wait(io.Discard); err != nil || killed {
		return report{}, fmt.Errorf("the uninterrupted run: killed %v, %v", killed, err)
	}
	return quiet.report(ctx, p, run)
}

// timeoutWhileDown is scene 2.
func (t tools) timeoutWhileDown(ctx context.Context, p place) error {
	const run = "exp-43"
	flags := []string{"-remind", "1s", "-within", "2s"}
	pr, err := t.start(ctx, p, run, flags...)
	if err != nil {
		return err
	}
	if err := waitUntil(ctx, p, run, journal.WaitSignal, pr); err != nil {
		return err
	}
	if err := pr.kill(t.out); err != nil {
		return err
	}
	fmt.Fprintln(t.out, "(3 seconds pass; nobody answers)")
	time.Sleep(3 * time.Second)
	if _, err := t.finish(ctx, p, run, flags...); err != nil {
		return err
	}
	r, err := t.show(ctx, p, run)
	if err != nil {
		return err
	}
	if string(r.Outcome) != `{"status":"timed out"}` || r.World.Payments != 0 || r.World.Emails["sam@example.com"] != 1 {
		return fmt.Errorf("run %s: %s, %s; want timed out, nothing paid, sam told once", run, r.Outcome, r.World.summary())
	}
	fmt.Fprintln(t.out, "Timed out: nothing paid, sam told once.")
	return nil
}

// show prints run runID's journal and what the world went through.
func (t tools) show(ctx context.Context, p place, runID string) (report, error) {
	r, err := t.report(ctx, p, runID)
	if err != nil {
		return r, err
	}
	fmt.Fprintf(t.out, "  run %s: %s %s\n  journal: %v\n  world: %s\n", runID, r.Status, r.Outcome, r.Journal, r.World.summary())
	return r, nil
}

// sameAs fails unless the killed and resumed run ended as its
// uninterrupted twin did, and did the same to the world.
func sameAs(got, want report) error {
	if got.Status != want.Status || string(got.Outcome) != string(want.Outcome) ||
		!reflect.DeepEqual(got.Journal, want.Journal) || !reflect.DeepEqual(got.World, want.World) {
		return fmt.Errorf("the resumed run differs from the uninterrupted one:\n  got  %s %s %v %s\n  want %s %s %v %s",
			got.Status, got.Outcome, got.Journal, got.World.summary(), want.Status, want.Outcome, want.Journal, want.World.summary())
	}
	return nil
}
