package sqljournal

import (
	"errors"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/resumegen/resumegen/runtime/journal"
)

// hotDialect is PostgreSQL's spelling of the hot path's statements, with a
// fence of its own, to check what the shared statements bind.
type hotDialect struct{ Dialect }

func (hotDialect) Rebind(sql string) string     { return strings.ReplaceAll(sql, "{schema}.", "") }
func (hotDialect) Time(t time.Time) any         { return t }
func (hotDialect) RequiredTime(t time.Time) any { return t }
func (hotDialect) NoTime() string               { return "NULL" }
func (hotDialect) Unset(col string) string      { return col + " IS NULL" }
func (hotDialect) TimeParam(p string) string    { return p + "::timestamptz" }
func (hotDialect) StepFence() (with, cond string) {
	return "WITH run AS (SELECT 1 WHERE $15 <> $16 || $17)", "EXISTS (SELECT 1 FROM run)"
}

var placeholder = regexp.MustCompile(`\$(\d+)`)

// bound checks that sql uses placeholders $1 to $n, each at least once,
// and no other: n is the number of its arguments.
func bound(t *testing.T, what, sql string, n int) {
	t.Helper()
	used := map[int]bool{}
	for _, m := range placeholder.FindAllStringSubmatch(sql, -1) {
		k, _ := strconv.Atoi(m[1])
		if k < 1 || k > n {
			t.Errorf("%s uses $%d, beyond its %d arguments:\n%s", what, k, n, sql)
		}
		used[k] = true
	}
	for k := 1; k <= n; k++ {
		if !used[k] {
			t.Errorf("%s does not use argument $%d:\n%s", what, k, sql)
		}
	}
}

func TestHotPathStatementsBindTheirArguments(t *testing.T) {
	d := hotDialect{}
	l := journal.Lease{RunID: "r", Owner: "o", Epoch: 3}
	args, err := StepArgs(d, l, journal.StepRecord{RunID: "r", StepKey: "k", Name: "N", Status: journal.StepSucceeded})
	if err != nil {
		t.Fatal(err)
	}
	bound(t, "WriteStepSQL", WriteStepSQL(d), len(args))
	bound(t, "FinishSQL", FinishSQL(d), len(FinishArgs(d, l, journal.RunRecord{})))
	bound(t, "EntryStepsSQL", EntryStepsSQL(d), 1)
	bound(t, "StepsSQL", StepsSQL(d), 1)
	if got := len(strings.Split(StepColumns, ",")); got != 14 {
		t.Errorf("StepColumns has %d columns, StepArgs binds 14 before the lease", got)
	}
	if !strings.HasPrefix(WriteStepSQL(d), "WITH run AS") || !strings.Contains(WriteStepSQL(d), "WHERE EXISTS (SELECT 1 FROM run)") {
		t.Errorf("WriteStepSQL is not fenced by the dialect's StepFence:\n%s", WriteStepSQL(d))
	}
	if !strings.Contains(FinishSQL(d), "THEN $11::timestamptz ELSE NULL END") {
		t.Errorf("FinishSQL does not type its wake-up time where the dialect casts:\n%s", FinishSQL(d))
	}
}

// TestStepArgsFollowStepColumns: each argument of a step row is the value
// of the column StepColumns names in its place, then the lease.
func TestStepArgsFollowStepColumns(t *testing.T) {
	started, finished := time.Date(2026, 12, 2, 6, 0, 0, 0, time.UTC), time.Date(2026, 12, 2, 6, 0, 1, 0, time.UTC)
	s := journal.StepRecord{RunID: "r", StepKey: "k#2", Name: "N", Status: journal.StepFailed, Result: []byte(`{"a":1}`),
		Error: "boom", Attempt: 3, AttemptBase: 1, Seq: 7, StartedAt: started, FinishedAt: finished,
		ErrorDetail: []byte(`{"type":"x"}`), Final: true,
		History: []journal.AttemptRecord{{Attempt: 1, Error: "e1"}}}
	args, err := StepArgs(hotDialect{}, journal.Lease{RunID: "r", Owner: "o", Epoch: 9}, s)
	if err != nil {
		t.Fatal(err)
	}
	history, _ := journal.EncodeHistory(s.History)
	want := map[string]any{
		"run_id": "r", "step_key": "k#2", "name": "N", "status": "failed", "result": `{"a":1}`, "error": "boom",
		"attempt": 3, "attempt_base": 1, "seq": int64(7), "started_at": started, "finished_at": finished,
		"error_detail": `{"type":"x"}`, "final": true, "history": string(history),
	}
	cols := strings.Split(StepColumns, ",")
	if len(args) != len(cols)+3 {
		t.Fatalf("%d arguments, want %d columns and the lease", len(args), len(cols))
	}
	for i, c := range cols {
		c = strings.TrimSpace(c)
		if args[i] != want[c] {
			t.Errorf("argument %d (%s) = %#v, want %#v", i+1, c, args[i], want[c])
		}
	}
	if args[14] != "r" || args[15] != "o" || args[16] != int64(9) {
		t.Errorf("lease arguments = %v, want r, o, 9", args[14:])
	}
	// No result, detail or history: NULL, not "".
	args, _ = StepArgs(hotDialect{}, journal.Lease{}, journal.StepRecord{RunID: "r", StepKey: "k", Name: "N"})
	if args[4] != nil || args[11] != nil || args[13] != nil {
		t.Errorf("empty json columns = %#v, %#v, %#v, want nil", args[4], args[11], args[13])
	}
}

func TestStepArgsRefusesARowOverTheLimits(t *testing.T) {
	_, err := StepArgs(hotDialect{}, journal.Lease{}, journal.StepRecord{RunID: "r-1", StepKey: "k", Name: "N",
		Result: []byte("\xff")})
	var lim *journal.LimitError
	if !errors.As(err, &lim) || !strings.Contains(err.Error(), "run r-1") {
		t.Errorf("StepArgs of an invalid result = %v, want a LimitError naming run r-1", err)
	}
}

func TestLeaseHeld(t *testing.T) {
	l := journal.Lease{RunID: "r-7", Owner: "o", Epoch: 4}
	if err := LeaseHeld(1, l); err != nil {
		t.Errorf("LeaseHeld(1) = %v", err)
	}
	err := LeaseHeld(0, l)
	if !errors.Is(err, journal.ErrLeaseLost) || !strings.Contains(err.Error(), "run r-7, epoch 4") {
		t.Errorf("LeaseHeld(0) = %v, want ErrLeaseLost naming run r-7, epoch 4", err)
	}
}

func TestFirstClaimed(t *testing.T) {
	boom := errors.New("boom")
	if _, _, err := FirstClaimed(nil, boom); err != boom {
		t.Errorf("FirstClaimed of an error = %v", err)
	}
	if _, _, err := FirstClaimed(nil, nil); !errors.Is(err, journal.ErrNoRunReady) {
		t.Errorf("FirstClaimed of none = %v, want ErrNoRunReady", err)
	}
	runs := []journal.ClaimedRun{{Run: journal.RunRecord{RunID: "a"}, Steps: []journal.StepRecord{{StepKey: "k"}}, Err: boom}, {Run: journal.RunRecord{RunID: "b"}}}
	r, steps, err := FirstClaimed(runs, nil)
	if r.RunID != "a" || len(steps) != 1 || err != boom {
		t.Errorf("FirstClaimed = %s, %v, %v, want the first run, its steps and its error", r.RunID, steps, err)
	}
}
