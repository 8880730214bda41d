package generator

import (
	"bytes"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// waitsBase is a workflow with a sleep and an await, which the version
// variants edit.
const waitsBase = `package p

import (
	"context"
	"time"

	"github.com/resumegen/resumegen/runtime/resume"
)

type Decision struct{ OK bool }

//resume:workflow
func W(ctx context.Context, in int) (bool, error) {
	if err := A(ctx, in); err != nil {
		return false, err
	}
	if err := resume.Sleep(ctx, time.Hour); err != nil {
		return false, err
	}
	d, err := resume.Await[Decision](ctx, "approval", 72*time.Hour)
	return d.OK, err
}

//resume:step
func A(ctx context.Context, n int) error { return nil }
`

// TestVersionWaits proves that a wait is part of the step list the version
// hashes: adding, removing or moving one, renaming an event or changing
// what an await journals moves the version; the durations, which are
// arguments, do not.
func TestVersionWaits(t *testing.T) {
	sleep := "\tif err := resume.Sleep(ctx, time.Hour); err != nil {\n\t\treturn false, err\n\t}\n"
	checkVersions(t, "versionwaits", waitsBase, []versionVariant{
		{"add a sleep", [][2]string{{"\td, err :=", sleep + "\td, err :="}}, true},
		{"remove the sleep", [][2]string{{sleep, ""}}, true},
		{"sleep until instead", [][2]string{{"resume.Sleep(ctx, time.Hour)", "resume.SleepUntil(ctx, time.Unix(0, 0))"}}, true},
		{"move the sleep before the step", [][2]string{{sleep, ""}, {"\tif err := A(ctx, in)", sleep + "\tif err := A(ctx, in)"}}, true},
		{"add an await", [][2]string{{"\td, err :=", "\tif _, err := resume.Await[int](ctx, \"reminder\", time.Hour); err != nil {\n\t\treturn false, err\n\t}\n\td, err :="}}, true},
		{"rename the event", [][2]string{{`"approval"`, `"approved"`}}, true},
		{"payload field added", [][2]string{{"struct{ OK bool }", "struct {\n\tOK bool\n\tBy string\n}"}}, true},
		{"payload field type", [][2]string{{"struct{ OK bool }", "struct{ OK bool; N int }"}}, true},
		{"sleep duration", [][2]string{{"resume.Sleep(ctx, time.Hour)", "resume.Sleep(ctx, 3*24*time.Hour)"}}, false},
		{"await timeout", [][2]string{{"72*time.Hour", "time.Minute"}}, false},
		{"event name as a constant", [][2]string{{`"approval", 72`, "approval, 72"}, {"type Decision", "const approval = \"approval\"\n\ntype Decision"}}, false},
	})
}

// TestWaitSteps pins what a wait contributes to the step list (as
// resume.StepDef and the JSON manifest carry it) and that generating twice
// gives the same bytes.
func TestWaitSteps(t *testing.T) {
	dir := filepath.Join(testModule, "waitsteps")
	writeFiles(t, dir, map[string]string{"p.go": waitsBase})
	first, second := generateIn(t, dir), generateIn(t, dir)
	if len(first.Diagnostics) > 0 || len(first.Files) != 1 || len(second.Files) != 1 {
		t.Fatalf("diagnostics %v, files %d and %d", first.Diagnostics, len(first.Files), len(second.Files))
	}
	if !bytes.Equal(first.Files[0].Content, second.Files[0].Content) {
		t.Fatal("two runs generated different bytes")
	}
	var got []string
	for _, s := range first.Workflows[0].Steps {
		got = append(got, strings.Join([]string{s.Name, s.Callee, s.Signature, s.Policy, s.JSON, strings.Join(s.Shape, ";")}, "|"))
	}
	want := []string{
		"A|example.com/golden/waitsteps.A|func(context.Context, int) error|default|null|",
		"resume.Sleep|github.com/resumegen/resumegen/runtime/resume.Sleep|func(context.Context, time.Duration) error|default||",
		"approval|github.com/resumegen/resumegen/runtime/resume.Await|func(context.Context, string, time.Duration) (Decision, error)|default|Decision|result Decision: OK bool",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("steps:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	m, err := first.Manifest()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(m, []byte(`"name": "approval"`)) || !bytes.Contains(m, []byte(`"json": "Decision"`)) {
		t.Errorf("manifest lacks the await:\n%s", m)
	}
	// The wait calls are left as written: the runtime journals them.
	src := string(first.Files[0].Content)
	for _, call := range []string{"resume.Sleep(ctx, time.Hour)", `resume.Await[Decision](ctx, "approval", 72*time.Hour)`} {
		if !strings.Contains(src, call) {
			t.Errorf("the durable body does not call %s as written", call)
		}
	}
}
