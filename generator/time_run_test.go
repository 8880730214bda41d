package generator

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// journaledTimeSource reads the clock with a call-site step, time.Now()
// //resume:step name=now, and hands the time to two steps and the run's
// result.
const journaledTimeSource = `package main

import (
	"context"
	"fmt"
	"time"

	"github.com/resumegen/resumegen/runtime/resume"
)

//resume:workflow
func Stamp(ctx context.Context, id string) (string, error) {
	now := time.Now() //resume:step name=now
	at := now.Format(time.RFC3339Nano)
	if err := Mark(ctx, id, at); err != nil {
		return "", err
	}
	if err := Pay(ctx, id, at); err != nil {
		return "", err
	}
	return at, nil
}

//resume:step
func Mark(ctx context.Context, id, at string) error {
	logEffect("Mark " + at)
	return nil
}

//resume:step
func Pay(ctx context.Context, id, at string) error {
	logEffect("Pay " + at)
	return nil
}

func main() {
	ctx := context.Background()
	at, err := resume.Run(ctx, newEngine(ctx), "r-1", Stamp, "e-1")
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	fmt.Println("result " + at)
}
`

// TestJournaledTime proves that time.Now() marked //resume:step is
// journaled time: a run killed after the clock was read (just after, at
// the next step's effect, before the last step) and resumed by a new
// process sees the time the first process read, in every step and in its
// result, never the new process's clock.
func TestJournaledTime(t *testing.T) {
	bin := buildProgram(t, "journaledtime", journaledTimeSource)
	for _, crash := range []string{"now:after", "Mark:before", "Mark:effect", "Pay:before"} {
		t.Run(crash, func(t *testing.T) {
			dir := t.TempDir()
			db, effects := filepath.Join(dir, "j.db"), filepath.Join(dir, "effects")
			if out, killed, err := runProgram(bin, db, effects, crash); !killed {
				t.Fatalf("fault %s did not kill the process: %q, %v", crash, out, err)
			}
			before := readLines(t, effects)
			resumed := time.Now()
			out, killed, err := runProgram(bin, db, effects)
			if killed || err != nil {
				t.Fatalf("resumed run: %q, killed %v, %v", out, killed, err)
			}
			lines := append(readLines(t, effects), strings.TrimSpace(out))
			at := ""
			for _, l := range lines {
				_, v, _ := strings.Cut(l, " ")
				if at == "" {
					at = v
				}
				if v != at || v == "" {
					t.Fatalf("the resumed run saw another time: %q (first process logged %q)", lines, before)
				}
			}
			// Read by the killed process, the time precedes the new one.
			if read, err := time.Parse(time.RFC3339Nano, at); err != nil || !read.Before(resumed) {
				t.Errorf("the run's time %q (%v) is not the killed process's: the resumed process started at %s", at, err, resumed.Format(time.RFC3339Nano))
			}
			if want := strings.Count(strings.Join(lines, "\n"), "Pay "); want != 1 || !strings.HasPrefix(lines[len(lines)-1], "result ") {
				t.Errorf("effects and result %q: want Pay once and the result last", lines)
			}
		})
	}
}

func readLines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSpace(string(b)), "\n")
}

// timeIdentitySource reads the clock with a call-site step, echoes the
// time through a step, and returns what a body can observe of it: its
// printout (which shows a monotonic reading), its Location, and whether it
// equals the echoed copy and the copy inside a struct result.
const timeIdentitySource = `package main

import (
	"context"
	"fmt"
	"time"

	"github.com/resumegen/resumegen/runtime/resume"
)

type Stamped struct {
	At   time.Time
	Note string
}

//resume:workflow
func Observe(ctx context.Context, id string) (string, error) {
	now := time.Now() //resume:step name=now
	echoed, err := Echo(ctx, now)
	if err != nil {
		return "", err
	}
	st, err := Wrap(ctx, now)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%s|%s|%v|%v|%s", now, now.Location(), now == echoed, st.At == now, st.At.Location()), nil
}

//resume:step
func Echo(ctx context.Context, t time.Time) (time.Time, error) { return t, nil }

//resume:step
func Wrap(ctx context.Context, t time.Time) (Stamped, error) { return Stamped{At: t, Note: "n"}, nil }

func main() {
	ctx := context.Background()
	out, err := resume.Run(ctx, newEngine(ctx), "r-1", Observe, "e-1")
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	fmt.Println(out)
}
`

// TestJournaledTimeIdentity compares what a body observes of a journaled
// time in an uninterrupted run with what it observes when killed after
// reading the clock and resumed by a new process: the same printout (no
// monotonic reading in either), the same Location, and == holding, in
// several time zones (UTC, where a time of offset 0 used to come back as
// UTC rather than Local, and two others).
func TestJournaledTimeIdentity(t *testing.T) {
	bin := buildProgram(t, "timeidentity", timeIdentitySource)
	for _, tz := range []string{"UTC", "Europe/Paris", "America/Los_Angeles"} {
		t.Run(tz, func(t *testing.T) {
			t.Setenv("TZ", tz)
			dir := t.TempDir()
			// The uninterrupted run reads the clock and journals it; the
			// same journal replays it to a second process, killed before
			// nothing: its output is what the uninterrupted body saw.
			db, effects := filepath.Join(dir, "u.db"), filepath.Join(dir, "u.effects")
			whole, killed, err := runProgram(bin, db, effects)
			if killed || err != nil || strings.HasPrefix(whole, "error") {
				t.Fatalf("uninterrupted run: %q, killed %v, %v", whole, killed, err)
			}
			if strings.Contains(whole, "m=") {
				t.Errorf("the uninterrupted body saw a monotonic reading, which no resume can see: %q", whole)
			}
			if !strings.Contains(whole, "|true|true|") {
				t.Errorf("uninterrupted: the echoed time does not equal the one read: %q", whole)
			}
			for _, crash := range []string{"now:after", "Echo:effect", "Wrap:before"} {
				db, effects := filepath.Join(dir, crash+".db"), filepath.Join(dir, crash+".effects")
				if out, killed, err := runProgram(bin, db, effects, crash); !killed {
					t.Fatalf("fault %s did not kill the process: %q, %v", crash, out, err)
				}
				resumed, killed, err := runProgram(bin, db, effects)
				if killed || err != nil {
					t.Fatalf("%s: resumed run: %q, killed %v, %v", crash, resumed, killed, err)
				}
				// The instant differs between the two runs (each read the
				// clock); everything after it must not.
				_, wantRest, _ := strings.Cut(strings.TrimSpace(whole), "|")
				_, gotRest, _ := strings.Cut(strings.TrimSpace(resumed), "|")
				if gotRest != wantRest || strings.Contains(resumed, "m=") {
					t.Errorf("%s: resumed body saw %q, the uninterrupted one %q", crash, resumed, whole)
				}
			}
		})
	}
}
