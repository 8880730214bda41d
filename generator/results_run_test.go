package generator

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// resultsRunSource is a program whose steps return every result shape: a
// call of time.Now marked at the call site, three values with an error,
// two values without one, one value without one, and nothing. The body
// notes what it received after each step, so a resumed run's notes can be
// compared with the first run's.
const resultsRunSource = `package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/resumegen/resumegen/runtime/resume"
)

func note(line string) {
	f, err := os.OpenFile(effects, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644) //resume:allow nondeterministic reason="the test's log"
	if err != nil {
		panic(err)
	}
	fmt.Fprintln(f, line)
	f.Close()
}

func track(ctx context.Context) {
	info, _ := resume.StepFromContext(ctx)
	note("exec " + info.StepKey)
}

type Order struct{ ID string }

//resume:workflow
func Place(ctx context.Context, id string) (string, error) {
	now := time.Now() //resume:step name=now
	note(fmt.Sprint("saw now ", now.UnixNano()))
	o, n, err := Lookup(ctx, id)
	if err != nil {
		return "", err
	}
	note(fmt.Sprint("saw lookup ", o.ID, n))
	lo, hi := Bounds(ctx)
	note(fmt.Sprint("saw bounds ", lo, hi))
	label := Label(ctx, o)
	note("saw label " + label)
	Log(ctx)
	return fmt.Sprint(now.UnixNano(), o.ID, n, lo, hi, label), nil
}

//resume:step
func Lookup(ctx context.Context, id string) (Order, int, error) {
	track(ctx)
	return Order{ID: id + "-" + fmt.Sprint(time.Now().UnixNano())}, 7, nil
}

//resume:step
func Bounds(ctx context.Context) (int, int) {
	track(ctx)
	return int(time.Now().UnixNano() % 1000), 2
}

//resume:step
func Label(ctx context.Context, o Order) string {
	track(ctx)
	return "label-" + o.ID
}

//resume:step
func Log(ctx context.Context) { track(ctx) }

func main() {
	ctx := context.Background()
	out, err := resume.Run(ctx, newEngine(ctx), "r-1", Place, "o-1")
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	fmt.Println(out)
}
`

// TestResultShapesSurviveResume kills a run after each step whose results
// are not error or (T, error), and resumes it in a new process: the body
// receives exactly the values the first run received (time.Now's among
// them), and no step executes twice.
func TestResultShapesSurviveResume(t *testing.T) {
	bin := buildProgram(t, "resultsrun", resultsRunSource)
	for _, kill := range []string{"now:after", "Lookup:after", "Bounds:after", "Label:after", "Log:before"} {
		t.Run(kill, func(t *testing.T) {
			db := filepath.Join(t.TempDir(), "j.db")
			effects := db + ".effects"
			out, killed, err := runProgram(bin, db, effects, kill)
			if !killed {
				t.Fatalf("first run was not killed at %s: %v\n%s", kill, err, out)
			}
			out, _, err = runProgram(bin, db, effects)
			if err != nil {
				t.Fatalf("resumed run: %v\n%s", err, out)
			}
			b, err := os.ReadFile(effects)
			if err != nil {
				t.Fatal(err)
			}
			// Every "saw" line the body wrote twice (before the kill and
			// on the resume's replay) must be the same value twice; every
			// step executes once.
			saw := map[string]string{}
			execs := map[string]int{}
			for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
				f := strings.SplitN(l, " ", 3)
				switch f[0] {
				case "saw":
					if prev, ok := saw[f[1]]; ok && prev != f[2] {
						t.Errorf("the body saw %s %s, then %s after the resume", f[1], prev, f[2])
					}
					saw[f[1]] = f[2]
				case "exec":
					execs[f[1]]++
				}
			}
			for _, step := range []string{"Lookup", "Bounds", "Label", "Log"} {
				if execs[step] != 1 {
					t.Errorf("%s executed %d times, want once", step, execs[step])
				}
			}
			if len(saw) != 4 {
				t.Errorf("the body saw %v, want now, lookup, bounds and label", saw)
			}
		})
	}
}
