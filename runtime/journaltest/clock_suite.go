package journaltest

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/resumegen/resumegen/runtime/journal"
	"github.com/resumegen/resumegen/runtime/resume"
)

// skewedClock is the system clock moved by d: the clock of a host whose
// time is wrong by d, as resume.WithClock gives it to an engine. Timers
// still run at the system clock's pace.
type skewedClock struct{ d time.Duration }

// Now is the system clock's time moved by d.
func (c skewedClock) Now() time.Time { return time.Now().Add(c.d) }

// At fires when Now reaches t: after t minus Now of the system clock.
func (c skewedClock) At(t time.Time) <-chan time.Time { return time.After(t.Sub(c.Now())) }

// journalNow reads j's clock, the reference of durable times: the
// PostgreSQL server's, or the SQLite journal's (its host's). A journal
// that does not tell its clock is on this host: its clock is this one.
func journalNow(t *testing.T, j journal.Journal) time.Time {
	t.Helper()
	if c, ok := j.(interface {
		Now(context.Context) (time.Time, error)
	}); ok {
		now, err := c.Now(context.Background())
		if err != nil {
			t.Fatalf("read the journal's clock: %v", err)
		}
		return now
	}
	return time.Now()
}

// records is a slog handler that keeps what is logged, for tests that
// assert a warning.
type records struct {
	mu   sync.Mutex
	logs []slog.Record
}

// Enabled keeps every level.
func (r *records) Enabled(context.Context, slog.Level) bool { return true }

// WithAttrs keeps the handler as it is: the tests read the attributes of
// each call.
func (r *records) WithAttrs([]slog.Attr) slog.Handler { return r }

// WithGroup keeps the handler as it is.
func (r *records) WithGroup(string) slog.Handler { return r }

// Handle keeps rec.
func (r *records) Handle(_ context.Context, rec slog.Record) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.logs = append(r.logs, rec.Clone())
	return nil
}

// matching returns the records at level or above whose message contains
// msg, each as its message and attributes.
func (r *records) matching(level slog.Level, msg string) []map[string]string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []map[string]string
	for _, rec := range r.logs {
		if rec.Level < level || !strings.Contains(rec.Message, msg) {
			continue
		}
		m := map[string]string{"msg": rec.Message}
		rec.Attrs(func(a slog.Attr) bool {
			m[a.Key] = a.Value.String()
			return true
		})
		out = append(out, m)
	}
	return out
}

// runClocks proves that every time that decides something durable (a
// wake-up, an await's timeout, a schedule's ticks, a run's deadline, a
// lease) comes from the journal's clock, not from the engine's: a worker
// or scheduler whose clock is wrong by an hour or a day cannot cut a sleep
// or a timeout short, start a tick early, silence a schedule, or stop a
// run before or after its deadline, and says loudly that its clock is
// wrong. The journal's clock is the reference (for PostgreSQL, the
// server's); the engines' clocks are skewed through resume.WithClock.
func runClocks(t *testing.T, open func(t *testing.T) journal.Journal) {
	ctx := context.Background()
	skews := []time.Duration{-time.Hour, time.Hour}
	engine := func(j journal.Journal, skew time.Duration, opts ...resume.Option) *resume.Engine {
		return resume.NewEngine(j, append([]resume.Option{resume.WithClock(skewedClock{skew}), resume.WithLease(2 * time.Second),
			resume.WithLogger(slog.New(&records{}))}, opts...)...)
	}
	// finish waits for run id to end, executed by a worker of e.
	finish := func(t *testing.T, e *resume.Engine, id string) resume.Result {
		t.Helper()
		stop := startWorker(ctx, e, resume.WorkerOptions{PollInterval: 20 * time.Millisecond})
		defer stop()
		wctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		defer cancel()
		res, err := e.Wait(wctx, id)
		if err != nil {
			t.Fatalf("run %s did not finish within 20s: %+v, %v", id, res, err)
		}
		return res
	}

	for _, skew := range skews {
		t.Run(fmt.Sprintf("clocks: a worker %v off sleeps the journaled time by the journal's clock", skew), func(t *testing.T) {
			j := open(t)
			e := engine(j, skew)
			id := newRunID(t)
			const d = 1500 * time.Millisecond
			before := journalNow(t, j)
			res, err := e.Start(ctx, id, SleepFlow, d)
			after := journalNow(t, j)
			if !errors.Is(err, resume.ErrRunWaiting) {
				t.Fatalf("Start = %+v, %v; want the run waiting for its %v sleep", res, err, d)
			}
			if res.WakeAt.Before(before.Add(d).Truncate(time.Microsecond)) || res.WakeAt.After(after.Add(d+time.Second)) {
				t.Errorf("the sleep's wake-up is %v: %v from the journal's clock at the sleep; want %v from it",
					res.WakeAt.Format(time.RFC3339Nano), res.WakeAt.Sub(before).Round(time.Millisecond), d)
			}
			wake := res.WakeAt
			res = finish(t, e, id)
			if res.Status != resume.StatusSucceeded {
				t.Fatalf("run %s: %+v", id, res)
			}
			b := seen.timesOf(id, "Nap:b")
			if len(b) != 1 {
				t.Fatalf("Nap b executed %d times, want once", len(b))
			}
			if slept := b[0].Sub(before); slept < d {
				t.Errorf("the run went on %v after it fell asleep, by the journal's clock: the %v sleep was cut short", slept.Round(time.Millisecond), d)
			} else {
				t.Logf("a worker %v off: wake-up %v after the sleep began, the run went on %v after it, by the journal's clock",
					skew, wake.Sub(before).Round(time.Millisecond), slept.Round(time.Millisecond))
			}
		})

		t.Run(fmt.Sprintf("clocks: a worker %v off times an await out after the timeout by the journal's clock", skew), func(t *testing.T) {
			j := open(t)
			e := engine(j, skew)
			id := newRunID(t)
			const timeout = 1500 * time.Millisecond
			before := journalNow(t, j)
			if res, err := e.Start(ctx, id, ApproveFlow, Gate{TimeoutMS: int(timeout / time.Millisecond)}); !errors.Is(err, resume.ErrRunWaiting) {
				t.Fatalf("Start = %+v, %v; want the run awaiting its event", res, err)
			}
			res := finish(t, e, id)
			if res.Status != resume.StatusSucceeded || string(res.Output) != `"timeout"` {
				t.Fatalf("run %s: %+v; want succeeded with the timeout's outcome", id, res)
			}
			after := seen.timesOf(id, "Nap:after")
			if len(after) != 1 {
				t.Fatalf("Nap after executed %d times, want once", len(after))
			}
			if waited := after[0].Sub(before); waited < timeout {
				t.Errorf("the await timed out %v after it began, by the journal's clock: the %v timeout was cut short", waited.Round(time.Millisecond), timeout)
			} else {
				t.Logf("a worker %v off: the %v await timed out %v after it began, by the journal's clock", skew, timeout, waited.Round(time.Millisecond))
			}
		})
	}

	t.Run("clocks: a run's deadline is the journal's: an engine an hour fast does not stop a run early, one an hour slow stops it on time", func(t *testing.T) {
		j := open(t)
		// An hour fast: a deadline a minute away has passed by its clock.
		fast := newRunID(t)
		res, err := engine(j, time.Hour).Start(resume.WithRunTimeout(ctx, time.Minute), fast, Chain, Plan{Loop: 2})
		if err != nil || res.Status != resume.StatusSucceeded {
			t.Errorf("a run with a minute to its deadline, on an engine an hour fast: %s %q, %v; want succeeded", res.Status, res.Error, err)
		}
		// An hour slow: a deadline 500ms away is an hour away by its clock.
		slow := newRunID(t)
		done := make(chan resume.Result, 1)
		go func() {
			res, _ := engine(j, -time.Hour).Start(resume.WithRunTimeout(ctx, 500*time.Millisecond), slow, Trip, TripPlan{Wait: "slow"})
			done <- res
		}()
		select {
		case res = <-done:
		case <-time.After(30 * time.Second):
			t.Fatal("a run past its deadline, on an engine an hour slow, still ran 30s later")
		}
		if res.Status != resume.StatusFailed || !strings.Contains(res.Error, "deadline") {
			t.Fatalf("a run past its deadline, on an engine an hour slow: %s %q; want failed past its deadline", res.Status, res.Error)
		}
		r, steps, err := j.LoadRun(ctx, slow)
		if err != nil {
			t.Fatal(err)
		}
		stopped := false
		for _, s := range steps {
			if s.StepKey != "Slow" {
				continue
			}
			stopped = true
			if s.FinishedAt.Before(r.Deadline) {
				t.Errorf("Slow was stopped at %v, before the deadline %v by the journal's clock",
					s.FinishedAt.Format(time.RFC3339Nano), r.Deadline.Format(time.RFC3339Nano))
			}
		}
		if !stopped {
			t.Errorf("Slow has no row: the deadline did not stop it while it executed")
		}
	})

	t.Run("clocks: a scheduler a day fast starts no tick early, and a day slow does not silence the schedule", func(t *testing.T) {
		j := open(t)
		s := tockSchedule(resume.SkipMissed, 0)
		s.Every = time.Second
		known := map[string]bool{}
		// created lists the schedule's runs created since its last call.
		created := func() []string {
			runs, err := j.ListRuns(ctx, journal.RunFilter{IDContains: s.Name + "@"})
			if err != nil {
				t.Fatal(err)
			}
			var out []string
			for _, r := range runs {
				if !known[r.RunID] {
					known[r.RunID] = true
					out = append(out, r.RunID)
				}
			}
			return out
		}
		// tickOf reads the tick from a run id NAME@TICK.
		tickOf := func(id string) time.Time {
			tick, err := time.Parse(time.RFC3339, strings.TrimPrefix(id, s.Name+"@"))
			if err != nil {
				t.Fatalf("run id %s: %v", id, err)
			}
			return tick
		}
		schedule := func(skew time.Duration, d time.Duration) {
			t.Helper()
			sctx, cancel := context.WithTimeout(ctx, d)
			defer cancel()
			if err := engine(j, skew).Schedule(sctx, s); err != nil {
				t.Fatalf("a scheduler %v off: %v", skew, err)
			}
		}

		began := journalNow(t, j)
		schedule(24*time.Hour, 2500*time.Millisecond)
		fast := created()
		end := journalNow(t, j)
		for _, id := range fast {
			if tick := tickOf(id); tick.After(end) {
				t.Errorf("a scheduler a day fast started tick %s, %v before it is due by the journal's clock", id, tick.Sub(end).Round(time.Second))
			}
		}
		if len(fast) == 0 {
			t.Errorf("a scheduler a day fast started no tick in 2.5s of 1s ticks")
		}
		row, err := j.LoadSchedule(ctx, s.Name)
		if err != nil {
			t.Fatal(err)
		}
		if row.NextTick.After(end.Add(2 * time.Second)) {
			t.Errorf("a scheduler a day fast moved the next tick to %v, %v ahead of the journal's clock",
				row.NextTick.Format(time.RFC3339), row.NextTick.Sub(end).Round(time.Second))
		}

		// The honest scheduler carries on: the ticks due since start.
		schedule(0, 2500*time.Millisecond)
		honest := created()
		if len(honest) == 0 {
			t.Errorf("after the fast scheduler, an honest one started no tick in 2.5s of 1s ticks (next tick %v)", row.NextTick.Format(time.RFC3339))
		}

		// A slow one starts the ticks due by the journal's clock, not
		// yesterday's.
		mid := journalNow(t, j)
		schedule(-24*time.Hour, 2500*time.Millisecond)
		slow := created()
		if len(slow) == 0 {
			t.Errorf("a scheduler a day slow started no tick in 2.5s of 1s ticks: it silenced the schedule")
		}
		for _, id := range slow {
			if tick := tickOf(id); tick.Before(mid.Add(-2 * time.Second)) {
				t.Errorf("a scheduler a day slow started tick %s, %v before it began, by the journal's clock", id, mid.Sub(tick).Round(time.Second))
			}
		}
		t.Logf("ticks started from %s: a day fast %d, then honest %d, then a day slow %d",
			began.UTC().Format(time.RFC3339), len(fast), len(honest), len(slow))
	})

	t.Run("clocks: workers hours apart share runs, and no step executes twice", func(t *testing.T) {
		j := open(t)
		var ids []string
		for range 6 {
			id := newRunID(t)
			if _, err := resume.NewEngine(j).Enqueue(ctx, id, Chain, Plan{Loop: 4, SlowLoop: 20 * time.Millisecond}); err != nil {
				t.Fatal(err)
			}
			ids = append(ids, id)
		}
		var stops []func() error
		for _, skew := range []time.Duration{-3 * time.Hour, 0, 3 * time.Hour} {
			stops = append(stops, startWorker(ctx, engine(j, skew, resume.WithLease(500*time.Millisecond)),
				resume.WorkerOptions{Concurrency: 2, PollInterval: 10 * time.Millisecond}))
		}
		waitFor(t, j, len(ids), journal.StatusSucceeded)
		for _, stop := range stops {
			if err := stop(); err != nil {
				t.Errorf("work: %v", err)
			}
		}
		for _, id := range ids {
			if f, l := seen.count(id, "Fetch"), seen.count(id, "Loop"); f != 1 || l != 4 {
				t.Errorf("run %s: Fetch %d, Loop %d; want 1 and 4", id, f, l)
			}
		}
	})

	t.Run("clocks: an engine whose clock disagrees with the journal's says so loudly, with both times", func(t *testing.T) {
		j := open(t)
		logs := &records{}
		e := engine(j, time.Hour, resume.WithLogger(slog.New(logs)))
		for range 3 {
			if _, err := e.Start(ctx, newRunID(t), Chain, Plan{Loop: 1}); err != nil {
				t.Fatal(err)
			}
		}
		warned := logs.matching(slog.LevelWarn, "clock")
		if len(warned) != 1 {
			t.Fatalf("an engine an hour off logged %d clock warnings over three runs, want one (then one at intervals): %v", len(warned), warned)
		}
		w := warned[0]
		for _, key := range []string{"engine_time", "journal_time", "offset"} {
			if w[key] == "" {
				t.Errorf("the clock warning %v lacks %s", w, key)
			}
		}
		if off, err := time.ParseDuration(w["offset"]); err != nil || off > -59*time.Minute || off < -61*time.Minute {
			t.Errorf("the clock warning's offset is %q, want about -1h (the journal's clock minus the engine's)", w["offset"])
		}

		honest := &records{}
		e = resume.NewEngine(j, resume.WithLogger(slog.New(honest)))
		if _, err := e.Start(ctx, newRunID(t), Chain, Plan{Loop: 1}); err != nil {
			t.Fatal(err)
		}
		if w := honest.matching(slog.LevelWarn, "clock"); len(w) != 0 {
			t.Errorf("an engine on the journal's host's clock warned about its clock: %v", w)
		}
	})
}
