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
// engine's by offset, in a read that takes rtt of the engine's clock.
type slowClockJournal struct {
	journal.Journal
	engine *manualClock
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
	j.engine.now = j.engine.now.Add(j.rtt / 2)
	read := j.engine.now.Add(j.offset)
	j.engine.now = j.engine.now.Add(j.rtt / 2)
	return read, nil
}

// TestJournalNowBrackets: the journal's time is bracketed by the round
// trip of its reading, and counted on by the engine's clock: a wake-up
// counts from the latest it may be (hi), a due time from the earliest
// (lo). A reading is reused until it is clockRefresh old, and a failed
// one is an error, never a guess.
func TestJournalNowBrackets(t *testing.T) {
	ctx := context.Background()
	base := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	engineClock := &manualClock{now: base}
	j := &slowClockJournal{engine: engineClock, offset: -time.Hour, rtt: 20 * time.Millisecond}
	var logs bytes.Buffer
	e := NewEngine(j, WithClock(engineClock), WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))

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
	lo2, hi2, err := e.journalNow(ctx)
	if err != nil || j.reads != 1 {
		t.Fatalf("a second journalNow within clockRefresh: %v, %d reads; want the reading reused", err, j.reads)
	}
	if lo2.Sub(lo) != 5*time.Second || hi2.Sub(hi) != 5*time.Second {
		t.Errorf("5s of the engine's clock later: lo moved %v, hi %v; want 5s each", lo2.Sub(lo), hi2.Sub(hi))
	}
	if got := logs.String(); !strings.Contains(got, "disagrees with the journal's") || !strings.Contains(got, "offset=-1h0m0s") {
		t.Errorf("an hour's disagreement logged %q, want a warning with offset=-1h0m0s", got)
	}
	if got := e.clockNow(); !got.Equal(lo2) {
		t.Errorf("clockNow = %v, want the reading's lo %v", got, lo2)
	}

	// A reading that fails is an error: nothing durable is guessed.
	e.clock.taken = time.Time{}
	j.fail = errors.New("connection refused")
	if _, _, err := e.journalNow(ctx); err == nil || !strings.Contains(err.Error(), "connection refused") {
		t.Errorf("journalNow with the journal's clock unreadable = %v, want its error", err)
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
