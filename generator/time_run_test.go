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
