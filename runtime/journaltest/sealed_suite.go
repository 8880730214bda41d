package journaltest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/resumegen/resumegen/runtime/journal"
	"github.com/resumegen/resumegen/runtime/resume"
)

// keyring returns a resume.NewKeyring of test keys named ids.
func keyring(t *testing.T, ids ...string) resume.KeyedCodec {
	t.Helper()
	var keys []resume.Key
	for _, id := range ids {
		keys = append(keys, resume.Key{ID: id, Secret: []byte(strings.Repeat(id, 32)[:32])})
	}
	k, err := resume.NewKeyring(keys...)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// runSealed proves that on a sealed journal every value is authenticated
// (issue 20's codec downgrade: a sealed result replaced by plain JSON with
// SQL was read, and the next step ran with the forged value): a plain
// value, an emptied result, a flipped bit and a forged signal park their
// run naming the run, the step and the field, and nothing executes with
// them; ReadUnsealed reads plain values of a journal sealed after the
// fact; keys rotate; a missing key is an error naming it, not a park. It
// needs h.Exec.
func runSealed(t *testing.T, h Harness) {
	if h.Exec == nil {
		t.Skip("the harness has no Exec: the journal's rows cannot be changed with SQL")
	}
	ctx := context.Background()
	k1 := keyring(t, "k1")
	// crashed leaves run id of Chain sealed with codec, crashed after its
	// Loop#2 step was journaled.
	crashed := func(t *testing.T, j journal.Journal, codec resume.Codec) string {
		t.Helper()
		id := newRunID(t)
		if !startCrashing(t, resume.SealJournal(j, codec), id, Plan{Loop: 2}, resume.Fault{Step: "Loop#2", Point: resume.FaultAfter}) {
			t.Fatal("no crash")
		}
		return id
	}
	// parked resumes run id through codec and checks that it parks on
	// step, saying why, and that no step executes again.
	parked := func(t *testing.T, j journal.Journal, codec resume.Codec, id, step, why string) {
		t.Helper()
		before := map[string]int{}
		for _, s := range []string{"Fetch", "Notify", "Write", "Loop"} {
			before[s] = seen.count(id, s)
		}
		res, err := resume.NewEngine(j, resume.WithCodec(codec)).Resume(ctx, id)
		if res.Status != journal.StatusNeedsAttention {
			t.Fatalf("resume of a tampered run: %+v, %v; want it parked", res, err)
		}
		r, _, err := resume.SealJournal(j, codec).LoadRun(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if r.AttentionKind != journal.AttentionKindJournal || r.AttentionStep != step || !strings.Contains(r.Error, why) ||
			!strings.Contains(r.Error, "run "+id) || !strings.Contains(r.Error, "tampered") {
			t.Errorf("tampered run: %s (%s) at %q: %q; want needs_attention (journal) at %q naming the run, %q and tampering",
				r.Status, r.AttentionKind, r.AttentionStep, r.Error, step, why)
		}
		for s, n := range before {
			if got := seen.count(id, s); got != n {
				t.Errorf("%s executed %d more times with a tampered journal", s, got-n)
			}
		}
	}
	set := func(t *testing.T, sql, id string) {
		t.Helper()
		if err := h.Exec(ctx, strings.ReplaceAll(sql, "{run}", quoteSQL(id))); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}

	t.Run("sealed: a result replaced by plain JSON parks the run", func(t *testing.T) {
		j := h.open(t)
		id := crashed(t, j, k1)
		set(t, `UPDATE resume_steps SET result = '"forged"' WHERE run_id = {run} AND step_key = 'Fetch'`, id)
		parked(t, j, k1, id, "Fetch", "result is not sealed")
	})

	t.Run("sealed: an emptied result parks the run", func(t *testing.T) {
		j := h.open(t)
		id := crashed(t, j, k1)
		set(t, `UPDATE resume_steps SET result = NULL WHERE run_id = {run} AND step_key = 'Notify'`, id)
		parked(t, j, k1, id, "Notify", "result is empty")
	})

	t.Run("sealed: a flipped bit in an envelope parks the run", func(t *testing.T) {
		j := h.open(t)
		id := crashed(t, j, k1)
		_, steps, err := j.LoadRun(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		var stored string
		for _, s := range steps {
			if s.StepKey == "Loop" {
				stored = string(s.Result)
			}
		}
		if !strings.HasPrefix(stored, `{"resume:sealed":"v2","key":"k1","data":"`) {
			t.Fatalf("Loop's stored result %s: want an envelope naming key k1", stored)
		}
		// Flip one bit of the ciphertext, keeping it base64.
		i := len(`{"resume:sealed":"v2","key":"k1","data":"`) + 20
		flip := []byte(stored)
		if flip[i] == 'A' {
			flip[i] = 'B'
		} else {
			flip[i] = 'A'
		}
		set(t, `UPDATE resume_steps SET result = `+quoteSQL(string(flip))+` WHERE run_id = {run} AND step_key = 'Loop'`, id)
		parked(t, j, k1, id, "Loop", "does not open with key k1")
	})

	t.Run("sealed: a run input replaced by plain JSON parks the run", func(t *testing.T) {
		j := h.open(t)
		id := crashed(t, j, k1)
		set(t, `UPDATE resume_runs SET input = '[{"Loop": 9}]' WHERE run_id = {run}`, id)
		parked(t, j, k1, id, "", "input is not sealed")
	})

	t.Run("sealed: ReadUnsealed reads a journal sealed after the fact", func(t *testing.T) {
		j := h.open(t)
		id := newRunID(t)
		if !startCrashing(t, j, id, Plan{Loop: 2}, resume.Fault{Step: "Loop#2", Point: resume.FaultAfter}) {
			t.Fatal("no crash")
		}
		if _, err := resume.NewEngine(j, resume.WithCodec(k1)).Resume(ctx, id); err == nil {
			t.Fatal("a strict sealed engine resumed a run of plain values")
		}
		res, err := resume.NewEngine(j, resume.WithCodec(k1, resume.ReadUnsealed())).Resume(ctx, id)
		if err != nil || res.Status != journal.StatusSucceeded {
			// The strict engine parked it: a person says the plain
			// values are the legacy ones, with a retry.
			if rerr := j.Retry(ctx, id); rerr != nil {
				t.Fatalf("resume with ReadUnsealed: %+v, %v; retry: %v", res, err, rerr)
			}
			res, err = resume.NewEngine(j, resume.WithCodec(k1, resume.ReadUnsealed())).Resume(ctx, id)
		}
		if err != nil || res.Status != journal.StatusSucceeded || string(res.Output) != "1" {
			t.Fatalf("resume with ReadUnsealed: %+v, %v; want succeeded with 1", res, err)
		}
		if n := seen.count(id, "Fetch"); n != 1 {
			t.Errorf("Fetch executed %d times, want 1: its plain result replays", n)
		}
	})

	t.Run("sealed: keys rotate, and a missing key is named", func(t *testing.T) {
		j := h.open(t)
		id := crashed(t, j, k1)
		if _, err := resume.NewEngine(j, resume.WithCodec(keyring(t, "k3")), resume.WithLease(crashLease), resume.WithOwner("k3-only")).Resume(ctx, id); err == nil || !strings.Contains(err.Error(), "key k1") {
			t.Errorf("resume without key k1: %v; want an error naming key k1", err)
		}
		if r, _, _ := j.LoadRun(ctx, id); r.Status == journal.StatusNeedsAttention {
			t.Errorf("a missing key parked the run as tampered: %s", r.Error)
		}
		// The refused claim holds the run until its lease lapses, and its
		// owner stops.
		if l, ok := journal.Find[journal.Liveness](j); ok {
			if err := l.Release(ctx, "k3-only"); err != nil {
				t.Fatal(err)
			}
		}
		time.Sleep(crashLease + 50*time.Millisecond)
		k21 := keyring(t, "k2", "k1")
		res, err := resume.NewEngine(j, resume.WithCodec(k21)).Resume(ctx, id)
		if err != nil || res.Status != journal.StatusSucceeded {
			t.Fatalf("resume with k2, k1: %+v, %v; want succeeded", res, err)
		}
		r, _, err := j.LoadRun(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(r.Output), `"key":"k2"`) {
			t.Errorf("output sealed after the rotation: %s; want it under key k2", r.Output)
		}
		kr, ok := journal.Find[journal.KeyRegistry](j)
		if !ok {
			t.Fatal("the journal records no sealing keys (journal.KeyRegistry)")
		}
		keys, err := kr.SealingKeys(ctx)
		if err != nil || len(keys) != 2 || keys[0].KeyID != "k1" || keys[1].KeyID != "k2" {
			t.Errorf("sealing keys: %+v, %v; want k1 then k2", keys, err)
		}
	})

	t.Run("sealed: a forged signal payload is never delivered", func(t *testing.T) {
		j := h.open(t)
		e := resume.NewEngine(j, resume.WithCodec(k1))
		id := newRunID(t)
		if _, err := e.Start(ctx, id, ApproveFlow, Gate{}); !errors.Is(err, resume.ErrRunWaiting) {
			t.Fatalf("start: %v; want waiting", err)
		}
		// resumectl without a key, or SQL: a plain payload.
		if _, err := j.Signal(ctx, journal.SignalRecord{RunID: id, Name: "approval", Payload: json.RawMessage(`{"Approved":true,"By":"mallory"}`)}); err != nil {
			t.Fatal(err)
		}
		res, err := e.Resume(ctx, id)
		if res.Status != journal.StatusNeedsAttention || !strings.Contains(res.Error, "tampered") || strings.Contains(string(res.Output), "mallory") {
			t.Errorf("resume after a forged signal: %+v, %v; want parked as tampered", res, err)
		}
	})

	t.Run("sealed: a step a move renamed still opens", func(t *testing.T) {
		// A move to a version whose step has renamed-from= relabels the
		// step's rows; their values were sealed under the old key.
		raw := h.open(t)
		j := resume.SealJournal(raw, k1)
		id := newRunID(t)
		now := time.Now()
		if _, _, err := j.CreateRun(ctx, journal.RunRecord{RunID: id, Workflow: "example.com/app.Moved", Version: "v1", Input: []byte("[]"),
			LeaseOwner: "w", LeaseUntil: now.Add(time.Minute), CreatedAt: now, UpdatedAt: now}); err != nil {
			t.Fatal(err)
		}
		l := journal.Lease{RunID: id, Owner: "w", Epoch: 1}
		for i, key := range []string{"Score", "Score#2", "Fetch"} {
			if err := j.WriteStep(ctx, l, journal.StepRecord{RunID: id, StepKey: key, Name: journal.StepName(key), Status: journal.StepSucceeded,
				Result: []byte(`"` + key + `"`), Attempt: 1, Seq: int64(i + 1), StartedAt: now, FinishedAt: now,
				History: []journal.AttemptRecord{{Attempt: 1, StartedAt: now, Error: "flaky " + key}}}); err != nil {
				t.Fatal(err)
			}
		}
		for _, m := range []journal.Move{
			{Workflow: "example.com/app.Moved", From: "v1", To: "v2", Renames: map[string]string{"Score": "Rate"}, By: "engine w"},
			{Workflow: "example.com/app.Moved", From: "v2", To: "v3", Renames: map[string]string{"Rate": "Grade", "Fetch": "Load"}, By: "engine w"},
		} {
			if err := j.MoveRun(ctx, l, m); err != nil {
				t.Fatal(err)
			}
		}
		_, steps, err := j.LoadRun(ctx, id)
		if err != nil {
			t.Fatalf("LoadRun after the renames: %v", err)
		}
		got := map[string]string{}
		for _, s := range steps {
			if s.Unreadable != "" {
				t.Errorf("step %s after the renames: %s", s.StepKey, s.Unreadable)
			}
			got[s.StepKey] = string(s.Result) + " " + s.History[0].Error
		}
		want := map[string]string{"Grade": `"Score" flaky Score`, "Grade#2": `"Score#2" flaky Score#2`, "Load": `"Fetch" flaky Fetch`}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("rows after the renames: %v; want %v", got, want)
		}
		// A value moved to another step's key is still refused: the
		// renames name the keys a value may come from.
		if err := h.Exec(ctx, `UPDATE resume_steps SET result = (SELECT result FROM resume_steps WHERE run_id = `+quoteSQL(id)+` AND step_key = 'Load')
			WHERE run_id = `+quoteSQL(id)+` AND step_key = 'Grade'`); err != nil {
			t.Fatal(err)
		}
		_, steps, _ = j.LoadRun(ctx, id)
		for _, s := range steps {
			if s.StepKey == "Grade" && !strings.Contains(s.Unreadable, "tampered") {
				t.Errorf("Grade holding Load's sealed result: %q, unreadable %q; want tampered", s.Result, s.Unreadable)
			}
		}
	})
}
