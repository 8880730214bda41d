package main

import (
	"database/sql"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/resumegen/resumegen/internal/proctest"

	_ "modernc.org/sqlite" // the test reads the journal with plain SQL
)

// The checkout, a method workflow with a step of three results, a
// journaled time.Now, a step without an error and a deferred refund, is
// killed at every point of every step it executes and resumed in a new
// process: the receipt (its time included) and the ledger equal an
// uninterrupted run's, but for the one repetition a default step killed at
// "effect" allows; the once step Ship killed at "effect" parks instead.

var binary string

func TestMain(m *testing.M) { proctest.Main(m, "shop", &binary) }

func shop(t *testing.T, dir, items string, gift bool, crash string) (out string, killed, failed bool) {
	t.Helper()
	args := []string{"-db", filepath.Join(dir, "j.db"), "-ledger", filepath.Join(dir, "ledger"), "-run", "o-1", "-items", items}
	if gift {
		args = append(args, "-gift")
	}
	if crash != "" {
		args = append(args, "-crash", crash)
	}
	return proctest.Outcome(t, binary, args...)
}

func TestKillEveryStep(t *testing.T) {
	for _, tc := range []struct {
		name, items string
		gift        bool
		points      []string
	}{
		{"gift", "book,pen", true, []string{"now", "Shop.Quote", "Shop.Charge", "Shop.Ship", "Shop.Wrap"}},
		{"broken", "book,broken", false, []string{"now", "Shop.Quote", "Shop.Charge", "Shop.Refund"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ref := t.TempDir()
			want, _, wantFailed := shop(t, ref, tc.items, tc.gift, "")
			wantExec, wantBalance, err := readLedger(filepath.Join(ref, "ledger"))
			if err != nil {
				t.Fatal(err)
			}
			for _, step := range tc.points {
				for _, point := range []string{"before", "effect", "after"} {
					crash := step + ":" + point
					t.Run(crash, func(t *testing.T) {
						t.Parallel()
						dir := t.TempDir()
						if _, killed, _ := shop(t, dir, tc.items, tc.gift, crash); !killed {
							t.Fatalf("not killed at %s", crash)
						}
						got, killed, failed := shop(t, dir, tc.items, tc.gift, "")
						if step == "Shop.Ship" && point == "effect" {
							if !failed || !strings.Contains(got, "needs_attention") {
								t.Fatalf("a once step killed at effect must park: %v %s", failed, got)
							}
							return
						}
						if killed || failed != wantFailed {
							t.Fatalf("resumed: killed=%v failed=%v %s; want failed=%v", killed, failed, got, wantFailed)
						}
						if !wantFailed {
							// The time is the first run's, replayed from the
							// journal: the rest equals the uninterrupted run's.
							placed := journaledNow(t, filepath.Join(dir, "j.db"))
							if !strings.Contains(got, `"Placed":`+placed) {
								t.Errorf("receipt after resume = %s, want the journaled time %s", got, placed)
							}
							if withoutTime(got) != withoutTime(want) {
								t.Errorf("receipt after resume = %s, want %s", got, want)
							}
						}
						gotExec, gotBalance, err := readLedger(filepath.Join(dir, "ledger"))
						if err != nil {
							t.Fatal(err)
						}
						wantHere := map[string]int{}
						for k, n := range wantExec {
							wantHere[k] = n
						}
						if point == "effect" && step != "now" {
							wantHere[step]++ // the one repetition at least once allows
						}
						if !reflect.DeepEqual(gotExec, wantHere) {
							t.Errorf("executions %v, want %v", gotExec, wantHere)
						}
						if point != "effect" && gotBalance != wantBalance {
							t.Errorf("balance %d, want %d", gotBalance, wantBalance)
						}
					})
				}
			}
		})
	}
}

// journaledNow reads the result journaled for step now.
func journaledNow(t *testing.T, db string) string {
	t.Helper()
	conn, err := sql.Open("sqlite", "file:"+db+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var v string
	if err := conn.QueryRow(`SELECT result FROM resume_steps WHERE step_key = 'now'`).Scan(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

// withoutTime drops the receipt's Placed field.
func withoutTime(receipt string) string {
	return regexp.MustCompile(`"Placed":"[^"]*",`).ReplaceAllString(receipt, "")
}
