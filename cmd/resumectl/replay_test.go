package main

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/resumegen/resumegen/runtime/journaltest"
	"github.com/resumegen/resumegen/runtime/resume"
	"github.com/resumegen/resumegen/runtime/sqlitejournal"
)

// ctlRun runs resumectl in process on the journal at db.
func ctlRun(t *testing.T, db string, args ...string) (int, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(context.Background(), append(args, "-db", db), &out, &errOut)
	return code, out.String() + errOut.String()
}

// TestShowAndRetryFollowTheReplayRules runs journaltest's Transfer into
// the states faithful replay creates and checks what show and retry say.
func TestShowAndRetryFollowTheReplayRules(t *testing.T) {
	ctx := context.Background()
	db := filepath.Join(t.TempDir(), "j.db")
	j, err := sqlitejournal.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	e := resume.NewEngine(j)
	// failed: Deposit spends its budget (handled: refunded), Finish ends the run.
	if _, err := e.Start(ctx, "failed", journaltest.Transfer, journaltest.TransferPlan{FailDeposit: 3, FailFinish: 1}); err == nil {
		t.Fatal("the run did not fail")
	}
	// parked: Measure (once) returns NaN.
	if _, err := e.Start(ctx, "nan", journaltest.Transfer, journaltest.TransferPlan{NaN: true}); err == nil {
		t.Fatal("the run did not park")
	}
	j.Close()

	code, out := ctlRun(t, db, "runs", "show", "failed")
	for _, want := range []string{
		"ended the run, error: finish failed",
		"handled, error: transient failure",
		"Failed attempts:",
		"The failure of step Finish ended the run",
		"resumectl runs retry failed",
	} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("runs show failed (exit %d) does not say %q:\n%s", code, want, out)
		}
	}
	if n := strings.Count(out, "Deposit "); n < 4 { // its row and 3 attempts
		t.Errorf("runs show lists Deposit %d times, want its row and its 3 attempts:\n%s", n, out)
	}

	_, out = ctlRun(t, db, "runs", "show", "failed", "-json")
	var shown struct {
		Run struct {
			FailedStep string `json:"failed_step"`
		} `json:"run"`
		Steps []stepJSON `json:"steps"`
	}
	if err := json.Unmarshal([]byte(out), &shown); err != nil {
		t.Fatalf("show -json: %v\n%s", err, out)
	}
	if shown.Run.FailedStep != "Finish" {
		t.Errorf("show -json failed_step = %q, want Finish", shown.Run.FailedStep)
	}
	for _, s := range shown.Steps {
		if s.StepKey == "Deposit" && (!s.Final || len(s.Attempts) != 3 || s.Attempts[2].Attempt != 3) {
			t.Errorf("show -json Deposit = %+v, want final with 3 attempts", s)
		}
	}

	code, out = ctlRun(t, db, "runs", "show", "nan")
	if code != 0 || !strings.Contains(out, "needs_attention (result)") || !strings.Contains(out, "-done -result JSON") || strings.Contains(out, "runs retry") {
		t.Errorf("runs show nan (exit %d) should ask for a result and never advise retry:\n%s", code, out)
	}
	if code, out := ctlRun(t, db, "runs", "retry", "nan"); code == 0 {
		t.Errorf("runs retry of a parked run succeeded:\n%s", out)
	}

	code, out = ctlRun(t, db, "runs", "retry", "failed", "-json")
	var a actionJSON
	if code != 0 || json.Unmarshal([]byte(out), &a) != nil || len(a.Steps) != 1 || a.Steps[0] != "Finish" || strings.Contains(a.Message, "Deposit") {
		t.Errorf("runs retry failed (exit %d) = %s; want only Finish reopened", code, out)
	}
}
