package resume

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/resumegen/resumegen/runtime/journal"
)

// manualClock is a Clock that moves only when told.
type manualClock struct{ now time.Time }

func (c *manualClock) Now() time.Time                { return c.now }
func (c *manualClock) At(time.Time) <-chan time.Time { return make(chan time.Time) }

// slowClockJournal is a journal that tells its clock, offset from the
// engine's by offset, in a read that takes rtt of the engine's clock (and
// of real time's, when real is set).
type slowClockJournal struct {
	journal.Journal
	engine *manualClock
	real   *manualClock
	offset time.Duration
	rtt    time.Duration
	reads  int
	fail   error
}

func (j *slowClockJournal) Now(context.Context) (time.Time, error) {
	j.reads++
	if j.fail != nil {
		return time.Time{}, j.fail
	}
	for _, c := range []*manualClock{j.engine, j.real} {
		if c != nil {
			c.now = c.now.Add(j.rtt / 2)
		}
	}
	read := j.engine.now.Add(j.offset)
	for _, c := range []*manualClock{j.engine, j.real} {
		if c != nil {
			c.now = c.now.Add(j.rtt / 2)
		}
	}
	return read, nil
}

// TestJournalNowBrackets: the journal's time is bracketed by the round
// trip of its reading, and counted on by the engine's clock: a wake-up counts from the latest it may be (hi), a due time from
// the earliest (lo). A reading is reused until it is clockRefresh old or
// the engine's clock parts from real time by more than clockDrift, and a
// failed one is an error, never a guess. (Here the journal keeps the
// engine's clock, as a test's shared fake clock does.)
func TestJournalNowBrackets(t *testing.T) {
	ctx := context.Background()
	base := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	engineClock, realClock := &manualClock{now: base}, &manualClock{now: base}
	j := &slowClockJournal{engine: engineClock, real: realClock, offset: -time.Hour, rtt: 20 * time.Millisecond}
	var logs bytes.Buffer
	e := NewEngine(j, WithClock(engineClock), WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	e.clock.real = realClock.Now

	lo, hi, err := e.journalNow(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// Read at base+10ms (journal: base+10ms-1h), returned at base+20ms.
	read := base.Add(10*time.Millisecond - time.Hour)
	if want := read; !lo.Equal(want) {
		t.Errorf("lo = %v, want %v: the reading plus the engine's time since it returned (none)", lo, want)
	}
	if want := read.Add(20 * time.Millisecond); !hi.Equal(want) {
		t.Errorf("hi = %v, want %v: the reading plus the engine's time since it was sent", hi, want)
	}
	engineClock.now = engineClock.now.Add(5 * time.Second)
	realClock.now = realClock.now.Add(5 * time.Second)
	lo2, hi2, err := e.journalNow(ctx)
	if err != nil || j.reads != 1 {
		t.Fatalf("a second journalNow within clockRefresh, both clocks 5s on: %v, %d reads; want the reading reused", err, j.reads)
	}
	if lo2.Sub(lo) != 5*time.Second || hi2.Sub(hi) != 5*time.Second {
		t.Errorf("5s of both clocks later: lo moved %v, hi %v; want 5s each", lo2.Sub(lo), hi2.Sub(hi))
	}
	if got := logs.String(); !strings.Contains(got, "disagrees with the journal's") || !strings.Contains(got, "offset=-1h0m0s") {
		t.Errorf("an hour's disagreement logged %q, want a warning with offset=-1h0m0s", got)
	}
	if got := e.clockNow(); !got.Equal(lo2) {
		t.Errorf("clockNow = %v, want the reading's lo %v", got, lo2)
	}

	// Within clockDrift of real time the engine's clock is counted on:
	// a shared fake clock stays exact.
	engineClock.now = engineClock.now.Add(clockDrift / 2)
	lo3, hi3, err := e.journalNow(ctx)
	if err != nil || j.reads != 1 {
		t.Fatalf("the engine's clock %v ahead of real time: %v, %d reads; want the reading reused", clockDrift/2, err, j.reads)
	}
	if lo3.Sub(lo2) != clockDrift/2 || hi3.Sub(hi2) != clockDrift/2 {
		t.Errorf("the engine's clock %v on: lo moved %v, hi %v; want %[1]v each", clockDrift/2, lo3.Sub(lo2), hi3.Sub(hi2))
	}

	// A fake clock moved on alone: the journal's clock is read again.
	engineClock.now = engineClock.now.Add(time.Minute)
	lo4, _, err := e.journalNow(ctx)
	if err != nil || j.reads != 2 {
		t.Fatalf("the engine's clock a minute ahead of real time: %v, %d reads; want a new reading", err, j.reads)
	}
	if want := engineClock.now.Add(-10*time.Millisecond - time.Hour); !lo4.Equal(want) {
		t.Errorf("lo after the new reading = %v, want %v", lo4, want)
	}

	// A reading that fails is an error: nothing durable is guessed.
	e.clock.taken = time.Time{}
	j.fail = errors.New("connection refused")
	if _, _, err := e.journalNow(ctx); err == nil || !strings.Contains(err.Error(), "connection refused") {
		t.Errorf("journalNow with the journal's clock unreadable = %v, want its error", err)
	}
}

// serverClockJournal is a journal whose clock, like a database server's,
// keeps real time, offset by offset, in a read that takes rtt of real
// time and of the engine's clock alike; midRead, when set, runs halfway.
type serverClockJournal struct {
	journal.Journal
	engine, real *manualClock
	offset, rtt  time.Duration
	midRead      func()
	reads        int
}

func (j *serverClockJournal) Now(context.Context) (time.Time, error) {
	j.reads++
	j.engine.now, j.real.now = j.engine.now.Add(j.rtt/2), j.real.now.Add(j.rtt/2)
	if j.midRead != nil {
		j.midRead()
		j.midRead = nil
	}
	read := j.real.now.Add(j.offset)
	j.engine.now, j.real.now = j.engine.now.Add(j.rtt/2), j.real.now.Add(j.rtt/2)
	return read, nil
}

// TestJournalClockSurvivesEngineClock: over a journal whose clock keeps
// real time, an engine clock that stops, steps (between readings or
// during one), runs slow or runs fast never puts the journal's time
// further than clockDrift outside the bracket: a wake-up counted from hi
// is never early by more (a sleep never shorter), a time due by lo never
// before it is by more (a tick or deadline never earlier). Before, the
// engine counted on by its clock alone until the reading was 30 s old.
func TestJournalClockSurvivesEngineClock(t *testing.T) {
	ctx := context.Background()
	base := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name string
		// move moves the clocks between the reading and the decision;
		// midRead, if set, moves them during the reading.
		move, midRead func(engine, real *manualClock)
		reads         int // readings in all, the first (and its retry) included
	}{
		{name: "engine clock stopped, within clockDrift", reads: 1,
			move: func(_, real *manualClock) { real.now = real.now.Add(clockDrift * 9 / 10) }},
		{name: "engine clock stopped for 10s", reads: 2,
			move: func(_, real *manualClock) { real.now = real.now.Add(10 * time.Second) }},
		{name: "engine clock at half speed for 20s", reads: 2,
			move: func(engine, real *manualClock) {
				engine.now, real.now = engine.now.Add(10*time.Second), real.now.Add(20*time.Second)
			}},
		{name: "engine clock fast, within clockDrift", reads: 1,
			move: func(engine, real *manualClock) {
				engine.now, real.now = engine.now.Add(time.Second+clockDrift*9/10), real.now.Add(time.Second)
			}},
		{name: "engine clock an hour ahead", reads: 2,
			move: func(engine, _ *manualClock) { engine.now = engine.now.Add(time.Hour) }},
		{name: "engine clock stepped back an hour", reads: 2,
			move: func(engine, real *manualClock) {
				engine.now, real.now = engine.now.Add(-time.Hour), real.now.Add(time.Second)
			}},
		{name: "engine clock stepped back an hour during the reading", reads: 2,
			midRead: func(engine, _ *manualClock) { engine.now = engine.now.Add(-time.Hour) },
			move:    func(_, real *manualClock) { real.now = real.now.Add(clockDrift / 2) }},
		{name: "engine clock stepped on an hour during the reading", reads: 2,
			midRead: func(engine, _ *manualClock) { engine.now = engine.now.Add(time.Hour) },
			move:    func(engine, _ *manualClock) { engine.now = engine.now.Add(clockDrift / 2) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			engineClock, realClock := &manualClock{now: base}, &manualClock{now: base}
			j := &serverClockJournal{engine: engineClock, real: realClock, offset: 3 * time.Second, rtt: 100 * time.Microsecond}
			e := NewEngine(j, WithClock(engineClock), WithLogger(slog.New(slog.DiscardHandler)))
			e.clock.real = realClock.Now
			truth := func() time.Time { return realClock.now.Add(j.offset) }
			check := func(what string, lo, hi time.Time) {
				t.Helper()
				if now := truth(); lo.Add(-clockDrift).After(now) || hi.Add(clockDrift).Before(now) {
					t.Errorf("%s: the journal's clock reads %v, further than %v outside [%v, %v] (lo %v after, hi %v before)",
						what, now.Format(time.StampMicro), clockDrift, lo.Format(time.StampMicro), hi.Format(time.StampMicro), lo.Sub(now), now.Sub(hi))
				}
			}
			if tc.midRead != nil {
				j.midRead = func() { tc.midRead(engineClock, realClock) }
			}
			lo, hi, err := e.journalNow(ctx)
			if err != nil {
				t.Fatal(err)
			}
			check("just read", lo, hi)
			tc.move(engineClock, realClock)
			lo, hi, err = e.journalNow(ctx)
			if err != nil {
				t.Fatal(err)
			}
			check("journalNow after the clocks moved", lo, hi)
			// Never wider than the round trip and the drift allowed: a
			// sleep no longer than asked by more than that.
			if w := hi.Sub(lo); w > j.rtt+clockDrift {
				t.Errorf("the bracket is %v wide, want at most %v", w, j.rtt+clockDrift)
			}
			if j.reads != tc.reads {
				t.Errorf("%d readings of the journal's clock, want %d", j.reads, tc.reads)
			}
			earliest, ok := e.journalEarliest(ctx)
			check("journalEarliest", earliest, latest(earliest, truth()))
			if !ok {
				t.Errorf("journalEarliest: no reading")
			}
			if got := e.clockNow(); got.Add(-clockDrift).After(truth()) {
				t.Errorf("clockNow = %v, after the journal's clock %v", got, truth())
			}
		})
	}
}

// TestJournalEarliestReadsAgainWhenClocksPart: a run's deadline, checked
// at each step without a round trip, is read from the journal's clock
// again once the engine's clock has parted from real time: an engine
// clock an hour fast does not stop a run early.
func TestJournalEarliestReadsAgainWhenClocksPart(t *testing.T) {
	ctx := context.Background()
	base := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	engineClock, realClock := &manualClock{now: base}, &manualClock{now: base}
	j := &serverClockJournal{engine: engineClock, real: realClock, rtt: 2 * time.Millisecond}
	e := NewEngine(j, WithClock(engineClock), WithLogger(slog.New(slog.DiscardHandler)))
	e.clock.real = realClock.Now
	if _, ok := e.journalEarliest(ctx); ok {
		t.Fatal("journalEarliest before any reading: ok, want only the journal's word")
	}
	if _, _, err := e.journalNow(ctx); err != nil {
		t.Fatal(err)
	}
	deadline := realClock.now.Add(30 * time.Minute)
	engineClock.now = engineClock.now.Add(time.Hour)
	now, ok := e.journalEarliest(ctx)
	if !ok || !now.Before(deadline) || j.reads != 2 {
		t.Errorf("journalEarliest an hour ahead on the engine's clock = %v, %v after %d readings; want a new reading, before the deadline %v", now, ok, j.reads, deadline)
	}
}

// TestClockWarningRepeatsAtIntervals: a disagreement is logged once, again
// only clockWarnEvery later while it lasts, and its end is said.
func TestClockWarningRepeatsAtIntervals(t *testing.T) {
	ctx := context.Background()
	engineClock := &manualClock{now: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	j := &slowClockJournal{engine: engineClock, offset: 5 * time.Second}
	var logs bytes.Buffer
	e := NewEngine(j, WithClock(engineClock), WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	read := func() {
		t.Helper()
		e.clock.taken = time.Time{} // stale: read again
		if _, _, err := e.journalNow(ctx); err != nil {
			t.Fatal(err)
		}
	}
	read()
	read()
	if n := strings.Count(logs.String(), "disagrees"); n != 1 {
		t.Fatalf("two readings 5s off logged %d warnings, want 1:\n%s", n, logs.String())
	}
	e.clock.warned = time.Now().Add(-clockWarnEvery)
	read()
	if n := strings.Count(logs.String(), "disagrees"); n != 2 {
		t.Fatalf("a reading %v after the warning logged %d warnings in all, want 2:\n%s", clockWarnEvery, n, logs.String())
	}
	j.offset = 0
	read()
	if !strings.Contains(logs.String(), "agrees with the journal's again") {
		t.Errorf("the end of the disagreement was not logged:\n%s", logs.String())
	}
	// Within the bound (tuned): no warning.
	logs.Reset()
	j.offset = 3 * time.Second
	e = NewEngine(j, WithClock(engineClock), WithClockSkewBound(5*time.Second), WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	read()
	if strings.Contains(logs.String(), "disagrees") {
		t.Errorf("3s off with a 5s bound warned:\n%s", logs.String())
	}
}

// TestJournalWithoutClock: a journal that tells no clock leaves the
// engine's clock in charge.
func TestJournalWithoutClock(t *testing.T) {
	engineClock := &manualClock{now: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	type plain struct{ journal.Journal }
	e := NewEngine(plain{}, WithClock(engineClock))
	lo, hi, err := e.journalNow(context.Background())
	if err != nil || !lo.Equal(engineClock.now) || !hi.Equal(engineClock.now) {
		t.Errorf("journalNow over a journal without a clock = %v, %v, %v; want the engine's clock", lo, hi, err)
	}
}
