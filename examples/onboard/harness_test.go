package main

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/resumegen/resumegen/runtime/resume"
	"github.com/resumegen/resumegen/runtime/resumetest"
)

// TestCrashAnywhereInProcess is crash_test.go's proof in one call of the
// test harness, in process: Onboard is crashed before, at the effect of
// and after every step execution (NotifyOwner three times) and resumed by
// a fresh engine; each time the summary and the executions equal an
// uninterrupted run's but for what the crashed step's policy allows, and
// the world it leaves (checked as each case ends) was charged once and
// sent each owner one email.
func TestCrashAnywhereInProcess(t *testing.T) {
	rep := resumetest.New(t, resumetest.WithContext(freshWorld)).CrashEverywhere(Onboard, Input{CustomerID: "c-7"})
	if len(rep.Cases) != 21 {
		t.Errorf("%d cases, want 21: 7 step executions at 3 points", len(rep.Cases))
	}
}

// TestScoringDownFailsTheRun replaces the scoring service's step with a
// double that fails for good: the run fails with its error, and nothing
// after it executes.
func TestScoringDownFailsTheRun(t *testing.T) {
	h := resumetest.New(t, resumetest.WithContext(freshWorld),
		resumetest.Replace("ScoreAll", func(context.Context, []Record) ([]Score, error) {
			return nil, resume.Permanent(errors.New("scoring service: account suspended"))
		}))
	res, err := h.Run("c-8", Onboard, Input{CustomerID: "c-8"})
	if !errors.Is(err, resume.ErrRunFailed) || res.Error != "scoring service: account suspended" || res.FailedStep != "ScoreAll" {
		t.Fatalf("run: %+v, %v; want failed at ScoreAll with the double's error", res, err)
	}
	if n := h.Count("c-8", "WriteScores"); n != 0 {
		t.Errorf("WriteScores executed %d times after ScoreAll failed", n)
	}
}

// freshWorld gives a run of the harness a world of its own; as the run's
// test ends, it checks what the world went through.
func freshWorld(t testing.TB) context.Context {
	dir := t.TempDir()
	w, err := openWorld(dir, filepath.Join(dir, "outbox"), txStore{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() || w.scoring.calls() == 0 {
			return // a run that failed on purpose, or did not score
		}
		if n := w.scoring.charges(); n != 1 {
			t.Errorf("the scoring service charged %d times, want once", n)
		}
		sent, err := w.outbox.sent()
		if err != nil {
			t.Fatal(err)
		}
		for _, owner := range []string{"alice@example.com", "bob@example.com", "carol@example.com"} {
			if sent[owner] != 1 {
				t.Errorf("%s got %d emails, want 1", owner, sent[owner])
			}
		}
	})
	return withWorld(context.Background(), w)
}

// txStore writes the scores in the tx step's transaction, on the journal
// the harness opened, creating the table there.
type txStore struct{}

func (txStore) Insert(ctx context.Context, scores []Score) error {
	q := resume.Tx[sqlExecer](ctx, nil)
	if q == nil {
		return errors.New("txStore: outside a tx step")
	}
	if _, err := q.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS scores (
		record_id TEXT NOT NULL, owner TEXT NOT NULL, points INTEGER NOT NULL)`); err != nil {
		return err
	}
	return sqliteStore{}.Insert(ctx, scores)
}

func (txStore) Count(context.Context) (int, error) {
	return 0, errors.New("txStore: the scores live in the harness's journal")
}
