package main

import (
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/resumegen/resumegen/internal/proctest"

	"github.com/resumegen/resumegen/internal/pgtest"
)

// The crash matrix of the replay rules: the transfer saga, in each of its
// three endings, is killed at every point of every step it executes (in
// the workflow, in its compensate helper and inside its Notify child run)
// and resumed in a new process. The resumed run must end as the
// uninterrupted run does, with the same effects at the bank, but for the
// one repetition a default step killed at "effect" allows; a once step
// killed at "effect" must park for a person instead of repeating.

var binary string

func TestMain(m *testing.M) { proctest.Main(m, "transfer", &binary) }

// ending is one of the saga's paths.
type ending struct {
	name   string
	to     string
	amount int
	// points lists STEP:POINT for every step key the path executes; a
	// step whose only attempt fails has no effect or after point.
	points []string
}

var endings = []ending{
	{"done", "bob", 5000, all("Price", "Reserve", "Withdraw", "Deposit", "Notify", "Send[alice]", "Send[bob]")},
	{"closed", "closed", 5000, append(all("Price", "Reserve", "Withdraw", "Refund", "Release"), "Deposit:before")},
	{"limit", "bob", 200000, append(all("Price", "Reserve", "Withdraw", "Refund", "Release"), "Deposit:before")},
}

func all(keys ...string) []string {
	var out []string
	for _, k := range keys {
		out = append(out, k+":before", k+":effect", k+":after")
	}
	return out
}

// once lists the steps with the once policy: killed at effect, they park.
var once = map[string]bool{"Send": true}

// runTransfer runs the binary; killed reports a SIGKILL, failed a non-zero
// exit.
func runTransfer(t *testing.T, db, world, runID string, e ending, crash string) (out string, killed, failed bool) {
	t.Helper()
	args := []string{"-db", db, "-world", world, "-run", runID, "-to", e.to, "-amount", fmt.Sprint(e.amount)}
	if strings.HasPrefix(db, "postgres") {
		// PostgreSQL takes a killed process's run over once its lease
		// expired (no session proves a process dead): 1 s here, and a
		// resume tries again while the killed one's lease holds the run.
		args = append(args, "-lease", "1s")
		if crash == "" {
			for end := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
				out, killed, failed = proctest.Outcome(t, binary, args...)
				if !failed || !strings.Contains(out, "run is busy") || time.Now().After(end) {
					return out, killed, failed
				}
			}
		}
	}
	if crash != "" {
		args = append(args, "-crash", crash)
	}
	return proctest.Outcome(t, binary, args...)
}

// keyCounts counts the effects log's executions by step key.
func keyCounts(t *testing.T, world string) map[string]int {
	t.Helper()
	fx, err := readEffects(world)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for _, e := range fx {
		out[e.Step+" "+e.Key]++
	}
	return out
}

func TestCrashMatrixSQLite(t *testing.T) {
	dir := t.TempDir()
	crashMatrix(t, dir, func(name string) string { return filepath.Join(dir, name+".db") })
}

func TestCrashMatrixPostgres(t *testing.T) {
	dsn := pgtest.FreshDatabase(t)
	crashMatrix(t, t.TempDir(), func(string) string { return dsn })
}

// crashMatrix runs every ending killed at every point; db names the journal
// of a case (runs ids differ, so cases may share a database).
func crashMatrix(t *testing.T, dir string, db func(name string) string) {
	for _, e := range endings {
		t.Run(e.name, func(t *testing.T) {
			refWorld := filepath.Join(dir, e.name+"-ref.effects")
			want, _, failed := runTransfer(t, db(e.name+"-ref"), refWorld, e.name+"-ref", e, "")
			if failed {
				t.Fatalf("uninterrupted run failed: %s", want)
			}
			wantFx := keyCounts(t, refWorld)
			for _, point := range e.points {
				t.Run(point, func(t *testing.T) {
					t.Parallel()
					name := e.name + "-" + strings.NewReplacer(":", "-", "[", "-", "]", "").Replace(point)
					world := filepath.Join(dir, name+".effects")
					if _, killed, _ := runTransfer(t, db(name), world, name, e, point); !killed {
						t.Fatalf("the process was not killed at %s", point)
					}
					got, killed, failed := runTransfer(t, db(name), world, name, e, "")
					key, at, _ := strings.Cut(point, ":")
					step, _, _ := strings.Cut(key, "[")
					if once[step] && at == "effect" {
						if !failed || !strings.Contains(got, "needs attention") {
							t.Fatalf("a once step killed at effect must park the run; got failed=%v %s", failed, got)
						}
						return
					}
					if killed || failed {
						t.Fatalf("the resume did not succeed: killed=%v %s", killed, got)
					}
					if got != want {
						t.Errorf("receipt after resume = %s, want %s", got, want)
					}
					gotFx := keyCounts(t, world)
					wantHere := map[string]int{}
					for k, n := range wantFx {
						wantHere[k] = n
					}
					if at == "effect" && step != "Notify" {
						// The one repetition at least once allows. (A child
						// run's outcome is in its own journal: none.)
						wantHere[step+" "+key]++
					}
					if !reflect.DeepEqual(gotFx, wantHere) {
						t.Errorf("executions by step key = %v, want %v", gotFx, wantHere)
					}
				})
			}
		})
	}
}

func TestDemo(t *testing.T) {
	var out strings.Builder
	if err := demoWith(t.Context(), &out, binary); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "Every resumed run ended as its uninterrupted twin did") {
		t.Errorf("demo output:\n%s", out.String())
	}
}
