package resume

import (
	"errors"
	"testing"
)

func TestStepSkeleton(t *testing.T) {
	const manifest = `approval: journals Decision
approval: result Decision: approved bool
approval: result Decision: by string
approval: result Decision: note string omitempty
approval: result Decision: at time.Time
approval: result Decision: lines []Line
approval: result Decision: tags map[string]string
approval: result Decision: ref *Decision
approval: result Decision: cents int64 string
approval: result Decision: pair [2]Wait
approval: result Wait: type int64
count: journals int
nothing: journals null
`
	for _, c := range []struct{ step, want string }{
		{"approval", `{"approved":false,"by":"","note":"","at":"2006-01-02T15:04:05Z","lines":[],"tags":{},"ref":null,"cents":"0","pair":[0,0]}`},
		{"count", `0`},
		{"nothing", `null`},
	} {
		got, err := StepSkeleton(manifest, c.step)
		if err != nil || string(got) != c.want {
			t.Errorf("StepSkeleton(%s) = %s, %v; want %s", c.step, got, err, c.want)
		}
		if err := CheckStepResult(manifest, c.step, got); err != nil {
			t.Errorf("CheckStepResult refuses the skeleton of %s: %v", c.step, err)
		}
	}
	if _, err := StepSkeleton(manifest, "other"); !errors.Is(err, ErrShapeUnknown) {
		t.Errorf("StepSkeleton of an unknown step: %v; want ErrShapeUnknown", err)
	}
}
