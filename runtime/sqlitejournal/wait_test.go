package sqlitejournal_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/resumegen/resumegen/runtime/journal"
	"github.com/resumegen/resumegen/runtime/journaltest"
	"github.com/resumegen/resumegen/runtime/resume"
	"github.com/resumegen/resumegen/runtime/resumetest"
	"github.com/resumegen/resumegen/runtime/sqlitejournal"
)

// TestFastForwardedWait: with the journal's and the engine's clocks both
// injected (WithClock), a 72-hour approval timeout passes in no time, and
// a run is not due one microsecond early.
func TestFastForwardedWait(t *testing.T) {
	ctx := context.Background()
	clock := resumetest.NewClock(time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC))
	j, err := sqlitejournal.Open(ctx, filepath.Join(t.TempDir(), "j.db"), sqlitejournal.WithClock(clock.Now))
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	e := resume.NewEngine(j, resume.WithClock(clock))
	const timeout = 72 * time.Hour
	res, err := e.Start(ctx, "expense-1", journaltest.ApproveFlow, journaltest.Gate{TimeoutMS: int(timeout / time.Millisecond)})
	if !errors.Is(err, resume.ErrRunWaiting) || !res.WakeAt.Equal(clock.Now().Add(timeout)) {
		t.Fatalf("Start = %+v, %v; want waiting 72h", res, err)
	}
	claim := func() error {
		_, _, err := j.ClaimNext(ctx, journal.ClaimNextRequest{Owner: "w", Lease: time.Minute, Workflows: []string{res.Workflow}})
		return err
	}
	clock.Advance(timeout - time.Microsecond)
	if err := claim(); !errors.Is(err, journal.ErrNoRunReady) {
		t.Fatalf("a microsecond before its timeout the run was claimable: %v", err)
	}
	if d, ok, err := j.NextWake(ctx, []string{res.Workflow}); err != nil || !ok || d != time.Microsecond {
		t.Fatalf("NextWake = %v, %v, %v; want 1µs", d, ok, err)
	}
	clock.Advance(time.Microsecond)
	if res, err := e.Resume(ctx, "expense-1"); err != nil || string(res.Output) != `"timeout"` {
		t.Fatalf("Resume at the timeout = %+v, %v", res, err)
	}
}

// offsetClock is a fake clock read d off: the clock of an engine whose
// host is wrong by d, in a test that fast-forwards time.
type offsetClock struct {
	c *resumetest.Clock
	d time.Duration
}

func (o offsetClock) Now() time.Time { return o.c.Now().Add(o.d) }

func (o offsetClock) At(t time.Time) <-chan time.Time { return o.c.At(t.Add(-o.d)) }

// TestSkewedEngineSleepsByTheJournalsClock: with the journal's clock a
// fake one and the engine's an hour off it (slow, then fast), a 30-minute
// sleep ends 30 minutes after it began by the journal's clock, and not a
// microsecond earlier. Before, the hour-slow engine's sleep was due at
// once (its wake-up was 30 minutes in the past of the journal's clock) and
// the hour-fast engine's an hour late.
func TestSkewedEngineSleepsByTheJournalsClock(t *testing.T) {
	ctx := context.Background()
	for _, skew := range []time.Duration{-time.Hour, time.Hour} {
		t.Run(skew.String(), func(t *testing.T) {
			clock := resumetest.NewClock(time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC))
			j, err := sqlitejournal.Open(ctx, filepath.Join(t.TempDir(), "j.db"), sqlitejournal.WithClock(clock.Now))
			if err != nil {
				t.Fatal(err)
			}
			defer j.Close()
			e := resume.NewEngine(j, resume.WithClock(offsetClock{clock, skew}))
			const nap = 30 * time.Minute
			began := clock.Now()
			res, err := e.Start(ctx, "nap-1", journaltest.SleepFlow, nap)
			if !errors.Is(err, resume.ErrRunWaiting) || !res.WakeAt.Equal(began.Add(nap)) {
				t.Fatalf("Start = %+v, %v; want waiting until %v, 30m after it began by the journal's clock", res, err, began.Add(nap))
			}
			clock.Advance(nap - time.Microsecond)
			if res, err := e.Resume(ctx, "nap-1"); !errors.Is(err, resume.ErrRunWaiting) {
				t.Fatalf("a microsecond before its wake-up, by the journal's clock, the run went on: %+v, %v", res, err)
			}
			clock.Advance(time.Microsecond)
			if res, err := e.Resume(ctx, "nap-1"); err != nil || string(res.Output) != `"ab"` {
				t.Fatalf("Resume at the wake-up = %+v, %v", res, err)
			}
		})
	}
}

// unreadableClock is a journal whose clock cannot be read for now.
type unreadableClock struct {
	*sqlitejournal.Journal
	broken atomic.Bool
}

func (u *unreadableClock) Now(ctx context.Context) (time.Time, error) {
	if u.broken.Load() {
		return time.Time{}, errors.New("the journal's clock is unreachable")
	}
	return u.Journal.Now(ctx)
}

// TestStartWithoutTheJournalsClock: a run whose times cannot be taken
// from the journal's clock (its reading fails) is not created on a guess
// from the engine's clock (an hour slow here): nothing is stored nor
// executed, and once the clock reads the run sleeps a minute from the
// journal's now.
func TestStartWithoutTheJournalsClock(t *testing.T) {
	ctx := context.Background()
	sj, err := sqlitejournal.Open(ctx, filepath.Join(t.TempDir(), "j.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer sj.Close()
	j := &unreadableClock{Journal: sj}
	e := resume.NewEngine(j, resume.WithClock(offsetClock{resumetest.NewClock(time.Now()), -time.Hour}))
	j.broken.Store(true)
	res, err := e.Start(ctx, "nap-1", journaltest.SleepFlow, time.Minute)
	if err == nil || !strings.Contains(err.Error(), "unreachable") {
		t.Fatalf("Start with the journal's clock unreadable = %+v, %v; want its error", res, err)
	}
	if _, _, err := sj.LoadRun(ctx, "nap-1"); !errors.Is(err, journal.ErrRunNotFound) {
		t.Fatalf("a run was stored without the journal's clock: %v", err)
	}
	j.broken.Store(false)
	before := time.Now()
	res, err = e.Start(ctx, "nap-1", journaltest.SleepFlow, time.Minute)
	if !errors.Is(err, resume.ErrRunWaiting) || res.WakeAt.Before(before.Add(time.Minute).Truncate(time.Microsecond)) {
		t.Fatalf("Start once the clock reads = %+v, %v; want waiting a minute from the journal's now", res, err)
	}
}

// TestWaitingClaimUsesIndex: the claim of the next run reads waiting runs
// through resume_runs_claim_due and NextWake through resume_runs_by_wake,
// only those due, not by
// scanning them (the plan of the statement ClaimNext sends, as sent), and
// with 10,000 runs waiting (half for later, half for an event) they find
// nothing quickly.
func TestWaitingClaimUsesIndex(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "j.db")
	j, err := sqlitejournal.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	if _, err := j.DB().ExecContext(ctx, `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 10000)
		INSERT INTO resume_runs (run_id, workflow, version, status, input, created_at, updated_at, wait_kind, wake_at)
		SELECT 'w-' || i, 'app.Flow', 'v1', 'waiting', '[]', '2026-01-01T00:00:00.000000Z', '2026-01-01T00:00:00.000000Z',
			CASE WHEN i % 2 = 0 THEN 'sleep' ELSE 'signal' END,
			CASE WHEN i % 2 = 0 THEN '2999-01-01T00:00:00.000000Z' ELSE '' END FROM n`); err != nil {
		t.Fatal(err)
	}
	for _, req := range []journal.ClaimNextRequest{
		{Owner: "w", Lease: time.Minute, Workflows: []string{"app.Flow"}},
		{Owner: "w", Lease: time.Minute, Workflows: []string{"app.Flow", "app.Other"}, Holding: []string{"r-1"},
			Versions: []journal.WorkflowVersion{{Workflow: "app.Flow", Version: "v1"}}, AdvertisedWithin: time.Minute},
		{Owner: "w", Lease: time.Minute, Workflows: []string{"app.Flow"},
			Versions: []journal.WorkflowVersion{{Workflow: "app.Flow", Version: "v2"}}, Older: []journal.WorkflowVersion{{Workflow: "app.Flow", Version: "v1"}},
			AdvertisedWithin: time.Minute},
	} {
		plan, err := sqlitejournal.ExplainClaimNext(ctx, j, req)
		if err != nil {
			t.Fatal(err)
		}
		p := strings.Join(plan, "\n")
		t.Logf("plan of ClaimNext(%d workflows, %d versions):\n%s", len(req.Workflows), len(req.Versions), p)
		if strings.Contains(p, "SCAN resume_runs") || !strings.Contains(p, "resume_runs_claim_due (workflow=? AND wake_at>? AND wake_at<?)") {
			t.Errorf("the claim reads waiting runs other than the due ones (a scan, or a range from ''):\n%s", p)
		}
		// The oldest pending run and the oldest lapsed one come first out
		// of their index, in the order wanted: no OR of indexes, no sort
		// of every pending run (claims took 25 ms at 10,000 pending runs
		// and 169 ms at 100,000 so).
		if strings.Contains(p, "MULTI-INDEX OR") || strings.Count(p, "resume_runs_by_status_created (status=?)") != 1 || !eachWorkflowFromClaimIndexes(p) {
			t.Errorf("the claim does not take the oldest pending runs of each workflow from resume_runs_claim_pending and the lapsed ones from resume_runs_by_status_created:\n%s", p)
		}
	}
	journaltest.CheckNoneDue(t, j, 50) // over 10,000 waiting runs
	wake, args := sqlitejournal.NextWakeQuery("app.Flow")
	rows, err := j.DB().QueryContext(ctx, `EXPLAIN QUERY PLAN `+wake, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, detail)
	}
	if p := strings.Join(plan, "\n"); !strings.Contains(p, "resume_runs_by_wake (status=? AND wake_at>?)") {
		t.Errorf("NextWake reads the runs that wait for no time (a range from ''):\n%s", p)
	}
}

// TestStoppedEngineClockSleepsInFull: an engine whose clock stopped (a
// fake one given to the engine alone, over the journal's real clock)
// still sleeps the whole time asked. Before, the engine counted on from
// its last reading of the journal's clock by its own stopped clock: 1.5 s
// after that reading a 1 s sleep was journaled half a second in the
// journal's past, and the run went on at once.
func TestStoppedEngineClockSleepsInFull(t *testing.T) {
	ctx := context.Background()
	j, err := sqlitejournal.Open(ctx, filepath.Join(t.TempDir(), "j.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	e := resume.NewEngine(j, resume.WithClock(resumetest.NewClock(time.Now())))
	// A first run reads the journal's clock.
	if _, err := e.Start(ctx, "nap-0", journaltest.SleepFlow, time.Hour); !errors.Is(err, resume.ErrRunWaiting) {
		t.Fatalf("Start nap-0 = %v, want waiting", err)
	}
	time.Sleep(1500 * time.Millisecond)
	before := time.Now().Truncate(time.Microsecond)
	res, err := e.Start(ctx, "nap-1", journaltest.SleepFlow, time.Second)
	if !errors.Is(err, resume.ErrRunWaiting) || res.WakeAt.Before(before.Add(time.Second)) {
		t.Fatalf("a 1s sleep 1.5s after the reading, the engine's clock stopped: %+v, %v; want waiting until %v or later", res, err, before.Add(time.Second))
	}
}
