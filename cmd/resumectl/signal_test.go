package main

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/resumegen/resumegen/runtime/journaltest"
	"github.com/resumegen/resumegen/runtime/resume"
	"github.com/resumegen/resumegen/runtime/sqlitejournal"
)

// TestSignalWaitingRun: runs list and show say what a waiting run waits
// for; runs signal refuses a payload of another shape, wakes the run with
// a good one, and refuses a finished run.
func TestSignalWaitingRun(t *testing.T) {
	ctx := context.Background()
	db := filepath.Join(t.TempDir(), "j.db")
	j, err := sqlitejournal.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	e := resume.NewEngine(j)
	if _, err := e.Start(ctx, "expense-7", journaltest.ApproveFlow, journaltest.Gate{TimeoutMS: 3600_000}); !errors.Is(err, resume.ErrRunWaiting) {
		t.Fatal(err)
	}
	if code, out, errs := ctl(t, "runs", "list", "-db", db, "-status", "waiting"); code != 0 || !strings.Contains(out, "waiting (signal approval until ") {
		t.Fatalf("runs list: %d\n%s%s", code, out, errs)
	}
	if code, out, errs := ctl(t, "runs", "show", "expense-7", "-db", db); code != 0 || !strings.Contains(out, "waits for") || !strings.Contains(out, "signal approval until") {
		t.Fatalf("runs show: %d\n%s%s", code, out, errs)
	}
	code, _, errs := ctl(t, "runs", "signal", "expense-7", "approval", `{"Approved":1}`, "-db", db)
	if code != 1 || !strings.Contains(errs, "does not fit what the run awaits") || !strings.Contains(errs, "Approved") {
		t.Fatalf("a payload of another shape: %d %s", code, errs)
	}
	code, out, errs := ctl(t, "runs", "signal", "expense-7", "approval", `{"Approved":true,"By":"ops"}`, "-db", db)
	if code != 0 || !strings.Contains(out, "woke the run") {
		t.Fatalf("runs signal: %d\n%s%s", code, out, errs)
	}
	if res, err := e.Resume(ctx, "expense-7"); err != nil || string(res.Output) != `"approved by ops"` {
		t.Fatalf("Resume = %+v, %v", res, err)
	}
	if code, _, errs := ctl(t, "runs", "signal", "expense-7", "approval", `{"Approved":true,"By":"ops"}`, "-db", db); code != 1 || !strings.Contains(errs, "run is finished") {
		t.Fatalf("a signal to a finished run: %d %s", code, errs)
	}
}

// TestSignalUnawaited: runs signal refuses a name the run's version never
// awaits (a misspelt event), naming what it awaits, and keeps it with
// -unawaited; runs show lists the signals kept and not consumed, and
// stops listing one once an await consumed it.
func TestSignalUnawaited(t *testing.T) {
	ctx := context.Background()
	db := filepath.Join(t.TempDir(), "j.db")
	j, err := sqlitejournal.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	e := resume.NewEngine(j)
	if _, err := e.Start(ctx, "expense-8", journaltest.ApproveFlow, journaltest.Gate{TimeoutMS: 3600_000}); !errors.Is(err, resume.ErrRunWaiting) {
		t.Fatal(err)
	}
	code, _, errs := ctl(t, "runs", "signal", "expense-8", "aproval", `{"Approved":true,"By":"ops"}`, "-db", db)
	if code != 1 || !strings.Contains(errs, `awaits only "approval"`) || !strings.Contains(errs, "-unawaited") {
		t.Fatalf("a misspelt event: %d %s", code, errs)
	}
	if code, out, errs := ctl(t, "runs", "signal", "expense-8", "aproval", `{"x":1}`, "-unawaited", "-db", db); code != 0 {
		t.Fatalf("runs signal -unawaited: %d\n%s%s", code, out, errs)
	}
	if code, out, errs := ctl(t, "runs", "signal", "expense-8", "approval", `{"Approved":true,"By":"ops"}`, "-db", db); code != 0 {
		t.Fatalf("runs signal: %d\n%s%s", code, out, errs)
	}
	code, out, errs := ctl(t, "runs", "show", "expense-8", "-db", db)
	if code != 0 || !strings.Contains(out, "Signals kept, not yet consumed by an await:") || !strings.Contains(out, "aproval") || !strings.Contains(out, "approval") {
		t.Fatalf("runs show before the await: %d\n%s%s", code, out, errs)
	}
	if _, err := e.Resume(ctx, "expense-8"); err != nil {
		t.Fatal(err)
	}
	code, out, errs = ctl(t, "runs", "show", "expense-8", "-db", db, "-json")
	var shown struct {
		Kept []struct{ Name string } `json:"kept_signals"`
	}
	if err := json.Unmarshal([]byte(out), &shown); code != 0 || err != nil || len(shown.Kept) != 1 || shown.Kept[0].Name != "aproval" {
		t.Fatalf("runs show -json after the await consumed approval, with aproval still kept: %d %v %+v\n%s", code, err, shown.Kept, errs)
	}
}
