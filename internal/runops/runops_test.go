package runops

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/resumegen/resumegen/runtime/journal"
	"github.com/resumegen/resumegen/runtime/sqlitejournal"
)

func TestCheckResolve(t *testing.T) {
	for _, c := range []struct {
		done, redo bool
		result     string
		ok         bool
	}{
		{true, false, "", true}, {true, false, `{"a":1}`, true}, {false, true, "", true},
		{true, true, "", false}, {false, false, "", false}, {false, true, "1", false}, {true, false, "{a:1}", false},
	} {
		err := CheckResolve(c.done, c.redo, c.result)
		if (err == nil) != c.ok || err != nil && !errors.Is(err, ErrUsage) {
			t.Errorf("CheckResolve(%v, %v, %q) = %v; want ok %v (a usage error otherwise)", c.done, c.redo, c.result, err, c.ok)
		}
	}
}

// TestActionNeedsAnActor: an action without an actor to record it as is
// refused before the journal is touched, so that no operator's write goes
// unrecorded.
func TestActionNeedsAnActor(t *testing.T) {
	ctx := context.Background()
	j, err := sqlitejournal.Open(ctx, filepath.Join(t.TempDir(), "j.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	if _, _, err := j.CreateRun(ctx, journal.RunRecord{RunID: "r1", Workflow: "w", Version: "v", Input: []byte("[]"), CreatedAt: time.Now(), UpdatedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	if _, err := Cancel(ctx, j, "r1", false, time.Now(), "-running"); err == nil || !strings.Contains(err.Error(), "no actor") {
		t.Errorf("cancel without an actor: %v; want refused", err)
	}
	if r, _, _ := j.LoadRun(ctx, "r1"); r.Status != journal.StatusPending {
		t.Errorf("run r1 is %s after a refused cancel", r.Status)
	}
	res, err := Cancel(WithActor(ctx, Actor{Name: "ada", Origin: "h", Via: "test"}), j, "r1", false, time.Now(), "-running")
	if err != nil || res.Status != "cancelled" {
		t.Fatalf("cancel with an actor: %+v, %v", res, err)
	}
	if _, err := Cancel(WithActor(ctx, Actor{Name: "ada"}), j, "r1", false, time.Now(), "-running"); err == nil ||
		strings.Contains(err.Error(), "busy") || !strings.Contains(err.Error(), "already cancelled: nothing to cancel") {
		t.Errorf("cancelling a cancelled run: %v; want it said without \"busy\"", err)
	}
	acts, err := Actions(ctx, j, "r1")
	if err != nil || len(acts) != 1 || acts[0].Actor != "ada" || acts[0].Action != "cancel" {
		t.Errorf("actions: %+v, %v; want ada's one cancel", acts, err)
	}
}
