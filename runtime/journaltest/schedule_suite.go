package journaltest

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/resumegen/resumegen/runtime/journal"
	"github.com/resumegen/resumegen/runtime/resume"
	"github.com/resumegen/resumegen/runtime/resumetest"
)

// TockIn is the input of Tock, the workflow the suite's schedules start.
type TockIn struct {
	Schedule string
	Tick     time.Time
}

// tocks counts Tock's executions by run id (NAME@TICK).
var tocks = struct {
	sync.Mutex
	n map[string]int
}{n: map[string]int{}}

// Tock records that it ran for its tick.
func Tock(ctx context.Context, in TockIn) (string, error) {
	tocks.Lock()
	defer tocks.Unlock()
	id := in.Schedule + "@" + in.Tick.UTC().Format(time.RFC3339)
	tocks.n[id]++
	return id, nil
}

var tockDef = &resume.WorkflowDef{
	Package: "github.com/resumegen/resumegen/runtime/journaltest", Name: "Tock", Version: "tock-v1",
	Run: func(ctx context.Context, args resume.Args) (any, error) {
		var in TockIn
		if err := args.Decode(&in); err != nil {
			return nil, err
		}
		return Tock(ctx, in)
	},
}

func init() { resume.Register(Tock, tockDef) }

// creations records the runs a journal created, in order, across the
// processes of a test.
type creations struct {
	mu  sync.Mutex
	ids []string
}

func (c *creations) list() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.ids...)
}

// recording is a journal that records the runs it creates. die, if set,
// makes the next UpdateSchedule call it and fail, as a process that dies
// there would: before the update (dieAfter false: the tick's run is
// enqueued, the row not moved past it) or just after it committed.
type recording struct {
	journal.Journal
	rec      *creations
	die      atomic.Pointer[func()]
	dieAfter bool
}

func (r *recording) CreateRun(ctx context.Context, run journal.RunRecord) (journal.RunRecord, bool, error) {
	stored, created, err := r.Journal.CreateRun(ctx, run)
	if created {
		r.rec.mu.Lock()
		r.rec.ids = append(r.rec.ids, run.RunID)
		r.rec.mu.Unlock()
	}
	return stored, created, err
}

func (r *recording) UpdateSchedule(ctx context.Context, s journal.ScheduleRecord) (journal.ScheduleRecord, error) {
	die := r.die.Swap(nil)
	if die == nil {
		return r.Journal.UpdateSchedule(ctx, s)
	}
	if r.dieAfter {
		if _, err := r.Journal.UpdateSchedule(ctx, s); err != nil {
			panic(err)
		}
	}
	(*die)()
	return s, errors.New("the process died")
}

// scheduler is one process running a schedule.
type scheduler struct {
	e      *resume.Engine
	j      *recording
	cancel context.CancelFunc
	done   chan error
}

// startScheduler runs s on a new engine over j until stopped. Its
// workers hold 10 s leases: no test here waits one out, and a lease that
// lapsed under a loaded machine's stall lets a second worker execute a
// body the first is still in (Tock, a body without steps, counts its
// executions, and may run again after a takeover, as any body may).
func startScheduler(j *recording, clock resume.Clock, s resume.Schedule) *scheduler {
	ctx, cancel := context.WithCancel(context.Background())
	sc := &scheduler{e: resume.NewEngine(j, resume.WithClock(clock), resume.WithLease(10*time.Second)),
		j: j, cancel: cancel, done: make(chan error, 1)}
	go func() { sc.done <- sc.e.Schedule(ctx, s) }()
	return sc
}

// jumpingClock is a test clock that jumps to a time of its own at the
// n-th reading: a jump at any point of a scheduler's step.
type jumpingClock struct {
	*resumetest.Clock
	to   time.Time
	left atomic.Int64 // readings before the jump; 0 once it happened
}

func (c *jumpingClock) Now() time.Time {
	if c.left.Load() > 0 && c.left.Add(-1) == 0 {
		c.Clock.Set(c.to)
	}
	return c.Clock.Now()
}

// stop ends the scheduler and returns what Schedule returned.
func (sc *scheduler) stop(t *testing.T) error {
	t.Helper()
	sc.cancel()
	return sc.result(t)
}

// result waits for Schedule to return.
func (sc *scheduler) result(t *testing.T) error {
	t.Helper()
	select {
	case err := <-sc.done:
		return err
	case <-time.After(30 * time.Second):
		t.Fatal("the scheduler did not return within 30s")
		return nil
	}
}

// waitRow waits until the schedule's row satisfies ok.
func waitRow(t *testing.T, j journal.Journal, name, what string, ok func(journal.ScheduleRecord) bool) journal.ScheduleRecord {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		row, err := j.LoadSchedule(context.Background(), name)
		if err == nil && ok(row) {
			return row
		}
		if time.Now().After(deadline) {
			t.Fatalf("schedule %s: %s: not within 30s (row %+v, err %v)", name, what, row, err)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// waitTick waits until the schedule's last tick started is tick.
func waitTick(t *testing.T, j journal.Journal, name string, tick time.Time) journal.ScheduleRecord {
	t.Helper()
	return waitRow(t, j, name, "last tick "+tick.Format(time.RFC3339), func(r journal.ScheduleRecord) bool { return r.LastTick.Equal(tick) })
}

var scheduleSeq atomic.Int64

// tockSchedule is a schedule of Tock every minute under a name of its own.
func tockSchedule(missed resume.MissedPolicy, limit int) resume.Schedule {
	name := fmt.Sprintf("tock%d", scheduleSeq.Add(1))
	return resume.Schedule{Name: name, Every: time.Minute, Workflow: Tock, Missed: missed, CatchUpLimit: limit,
		Args: func(tick time.Time) []any { return []any{TockIn{Schedule: name, Tick: tick}} }}
}

// ids names the runs of schedule name at the ticks base + i minutes, for
// i in is.
func ids(name string, base time.Time, is ...int) []string {
	out := []string{}
	for _, i := range is {
		out = append(out, name+"@"+base.Add(time.Duration(i)*time.Minute).UTC().Format(time.RFC3339))
	}
	return out
}

func span(from, to int) []int {
	var out []int
	for i := from; i <= to; i++ {
		out = append(out, i)
	}
	return out
}

func sameIDs(t *testing.T, what string, got, want []string) {
	t.Helper()
	if len(got) == 0 {
		got = []string{}
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s: runs created %v, want %v", what, got, want)
	}
}

// runSchedules proves schedules: each tick's run is created once however
// many processes run the schedule, the schedule carries on across
// restarts, missed ticks follow the policy, and a bad schedule is refused
// before anything is stored.
func runSchedules(t *testing.T, h Harness, open func(t *testing.T) journal.Journal) {
	// second returns another process's journal on the database of j.
	second := func(t *testing.T, j journal.Journal) journal.Journal {
		if h.OpenAgain == nil {
			return j
		}
		j2 := h.OpenAgain(t)
		t.Cleanup(func() { j2.Close() })
		return j2
	}
	base := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC) // tick 0

	t.Run("schedules: rows are created once and advanced by compare-and-set", func(t *testing.T) {
		scheduleRows(t, open(t), base)
	})

	t.Run("schedules: two schedulers on one schedule create each tick's run once, and workers execute it once", func(t *testing.T) {
		j := open(t)
		rec := &creations{}
		a, b := &recording{Journal: j, rec: rec}, &recording{Journal: second(t, j), rec: rec}
		clock := resumetest.NewClock(base.Add(30 * time.Second))
		s := tockSchedule(resume.SkipMissed, 0)
		sa, sb := startScheduler(a, clock, s), startScheduler(b, clock, s)
		wctx, stopWork := context.WithCancel(context.Background())
		var work sync.WaitGroup
		for _, sc := range []*scheduler{sa, sb} {
			work.Add(1)
			go func() {
				defer work.Done()
				_ = sc.e.Work(wctx, resume.WorkerOptions{Concurrency: 2, PollInterval: 5 * time.Millisecond})
			}()
		}
		defer func() { stopWork(); work.Wait() }()
		waitRow(t, j, s.Name, "stored", func(journal.ScheduleRecord) bool { return true })
		const n = 40
		for i := 1; i <= n; i++ {
			clock.Set(base.Add(time.Duration(i)*time.Minute + time.Second))
			waitTick(t, j, s.Name, base.Add(time.Duration(i)*time.Minute))
		}
		if err := errors.Join(sa.stop(t), sb.stop(t)); err != nil {
			t.Fatalf("schedulers: %v", err)
		}
		// Each scheduler records a creation after its insert returned, so
		// two may record in either order (the insert of tick 5 committed
		// before tick 6's, the record of it came later): compared as a
		// set, in which a duplicate still shows.
		created := rec.list()
		slices.Sort(created)
		sameIDs(t, "two schedulers", created, ids(s.Name, base, span(1, n)...))
		deadline := time.Now().Add(20 * time.Second)
		for {
			runs, err := j.ListRuns(context.Background(), journal.RunFilter{Statuses: []journal.Status{journal.StatusSucceeded}})
			if err != nil {
				t.Fatal(err)
			}
			if len(runs) == n {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%d of %d runs succeeded within 20s", len(runs), n)
			}
			time.Sleep(5 * time.Millisecond)
		}
		tocks.Lock()
		defer tocks.Unlock()
		for _, id := range ids(s.Name, base, span(1, n)...) {
			if tocks.n[id] != 1 {
				t.Errorf("run %s executed %d times, want once", id, tocks.n[id])
			}
		}
	})

	t.Run("schedules: a restarted scheduler carries on from the journal; a death between enqueue and advance starts nothing twice", func(t *testing.T) {
		j := open(t)
		rec := &creations{}
		clock := resumetest.NewClock(base.Add(30 * time.Second))
		s := tockSchedule(resume.SkipMissed, 0)
		a := &recording{Journal: j, rec: rec}
		sa := startScheduler(a, clock, s)
		first := waitRow(t, j, s.Name, "stored", func(journal.ScheduleRecord) bool { return true })
		for i := 1; i <= 3; i++ {
			clock.Set(base.Add(time.Duration(i) * time.Minute))
			waitTick(t, j, s.Name, base.Add(time.Duration(i)*time.Minute))
		}
		// Tick 4: the process enqueues its run, then dies before moving
		// the row past it; tick 5: it dies just after moving the row.
		died := make(chan struct{})
		die := func() { sa.cancel(); close(died) }
		a.die.Store(&die)
		clock.Set(base.Add(4 * time.Minute))
		<-died
		if err := sa.result(t); err != nil {
			t.Fatalf("a scheduler whose context ended returned %v, want nil", err)
		}
		sameIDs(t, "before the restart", rec.list(), ids(s.Name, base, 1, 2, 3, 4))
		if row, _ := j.LoadSchedule(context.Background(), s.Name); !row.LastTick.Equal(base.Add(3 * time.Minute)) {
			t.Fatalf("the dead process moved the row to %v", row.LastTick)
		}
		b := &recording{Journal: second(t, j), rec: rec, dieAfter: true}
		sb := startScheduler(b, clock, s)
		waitTick(t, j, s.Name, base.Add(4*time.Minute))
		died = make(chan struct{})
		die = func() { sb.cancel(); close(died) }
		b.die.Store(&die)
		clock.Set(base.Add(5 * time.Minute))
		<-died
		if err := sb.result(t); err != nil {
			t.Fatalf("a scheduler whose context ended returned %v, want nil", err)
		}
		sc := startScheduler(&recording{Journal: j, rec: rec}, clock, s)
		waitTick(t, j, s.Name, base.Add(5*time.Minute))
		clock.Set(base.Add(6 * time.Minute))
		waitTick(t, j, s.Name, base.Add(6*time.Minute))
		if err := sc.stop(t); err != nil {
			t.Fatal(err)
		}
		sameIDs(t, "across the restart", rec.list(), ids(s.Name, base, span(1, 6)...))
		last, _ := j.LoadSchedule(context.Background(), s.Name)
		if !last.CreatedAt.Equal(first.CreatedAt) || last.Revision != first.Revision+6 || !last.NextTick.Equal(base.Add(7*time.Minute)) {
			t.Fatalf("row after 6 ticks: %+v (first %+v): want the same row, 6 revisions on, next tick 7", last, first)
		}
	})

	t.Run("schedules: missed ticks after a gap follow the policy", func(t *testing.T) {
		for _, c := range []struct {
			missed        resume.MissedPolicy
			limit, gapEnd int
			want          []int
		}{
			{resume.SkipMissed, 0, 12, []int{12}},
			{resume.CatchUpMissed, 3, 12, []int{10, 11, 12}},
			{resume.CatchUpMissed, 0, 7, []int{3, 4, 5, 6, 7}},
		} {
			j := open(t)
			rec := &creations{}
			clock := resumetest.NewClock(base.Add(30 * time.Second))
			s := tockSchedule(c.missed, c.limit)
			sa := startScheduler(&recording{Journal: j, rec: rec}, clock, s)
			waitRow(t, j, s.Name, "stored", func(journal.ScheduleRecord) bool { return true })
			for i := 1; i <= 2; i++ {
				clock.Set(base.Add(time.Duration(i) * time.Minute))
				waitTick(t, j, s.Name, base.Add(time.Duration(i)*time.Minute))
			}
			if err := sa.stop(t); err != nil {
				t.Fatal(err)
			}
			// No scheduler runs from tick 3 to past tick gapEnd.
			clock.Set(base.Add(time.Duration(c.gapEnd)*time.Minute + 30*time.Second))
			sb := startScheduler(&recording{Journal: second(t, j), rec: rec}, clock, s)
			waitTick(t, j, s.Name, base.Add(time.Duration(c.gapEnd)*time.Minute))
			clock.Set(base.Add(time.Duration(c.gapEnd+1) * time.Minute))
			waitTick(t, j, s.Name, base.Add(time.Duration(c.gapEnd+1)*time.Minute))
			if err := sb.stop(t); err != nil {
				t.Fatal(err)
			}
			want := append(append([]int{1, 2}, c.want...), c.gapEnd+1)
			sameIDs(t, fmt.Sprintf("%v, limit %d, gap to tick %d", c.missed, c.limit, c.gapEnd), rec.list(), ids(s.Name, base, want...))
		}
	})

	t.Run("schedules: a changed spec replaces the row; the scheduler of the old one stops", func(t *testing.T) {
		j := open(t)
		rec := &creations{}
		clock := resumetest.NewClock(base.Add(30 * time.Second))
		s := tockSchedule(resume.SkipMissed, 0)
		sa := startScheduler(&recording{Journal: j, rec: rec}, clock, s)
		waitRow(t, j, s.Name, "stored", func(journal.ScheduleRecord) bool { return true })
		for i := 1; i <= 2; i++ {
			clock.Set(base.Add(time.Duration(i) * time.Minute))
			waitTick(t, j, s.Name, base.Add(time.Duration(i)*time.Minute))
		}
		clock.Set(base.Add(2*time.Minute + 10*time.Second))
		s5 := s
		s5.Every = 5 * time.Minute
		sb := startScheduler(&recording{Journal: second(t, j), rec: rec}, clock, s5)
		waitRow(t, j, s.Name, "replaced", func(r journal.ScheduleRecord) bool {
			return r.Spec == "every 5m0s" && r.NextTick.Equal(base.Add(5*time.Minute)) && r.LastTick.Equal(base.Add(2*time.Minute))
		})
		clock.Set(base.Add(5 * time.Minute))
		waitTick(t, j, s.Name, base.Add(5*time.Minute))
		if err := sa.result(t); err == nil || !strings.Contains(err.Error(), "another process replaced it") {
			t.Fatalf("the old scheduler returned %v, want it to stop, saying why", err)
		}
		if err := sb.stop(t); err != nil {
			t.Fatal(err)
		}
		sameIDs(t, "after the change", rec.list(), ids(s.Name, base, 1, 2, 5))
	})

	t.Run("schedules: a zoned cron spec across daylight-saving changes ticks by local time, each UTC instant once", func(t *testing.T) {
		if _, err := time.LoadLocation("America/New_York"); err != nil {
			t.Skip("no zone database:", err)
		}
		for _, c := range []struct {
			spec     string
			from, to time.Time
			want     []string
		}{
			// 2:30 does not exist on 2026-03-08 in New York: no tick that day.
			{"CRON_TZ=America/New_York 30 2 * * *", time.Date(2026, 3, 6, 0, 0, 0, 0, time.UTC), time.Date(2026, 3, 11, 12, 0, 0, 0, time.UTC),
				[]string{"2026-03-06T07:30:00Z", "2026-03-07T07:30:00Z", "2026-03-09T06:30:00Z", "2026-03-10T06:30:00Z", "2026-03-11T06:30:00Z"}},
			// 1:30 happens twice on 2026-11-01: two ticks, an hour apart.
			{"CRON_TZ=America/New_York 30 1 * * *", time.Date(2026, 10, 30, 0, 0, 0, 0, time.UTC), time.Date(2026, 11, 2, 12, 0, 0, 0, time.UTC),
				[]string{"2026-10-30T05:30:00Z", "2026-10-31T05:30:00Z", "2026-11-01T05:30:00Z", "2026-11-01T06:30:00Z", "2026-11-02T06:30:00Z"}},
			// Without a zone, ticks are UTC: the change is nothing.
			{"30 2 * * *", time.Date(2026, 3, 7, 0, 0, 0, 0, time.UTC), time.Date(2026, 3, 9, 12, 0, 0, 0, time.UTC),
				[]string{"2026-03-07T02:30:00Z", "2026-03-08T02:30:00Z", "2026-03-09T02:30:00Z"}},
		} {
			j := open(t)
			rec := &creations{}
			clock := resumetest.NewClock(c.from)
			s := tockSchedule(resume.CatchUpMissed, 0)
			s.Every, s.Cron = 0, c.spec
			sc := startScheduler(&recording{Journal: j, rec: rec}, clock, s)
			waitRow(t, j, s.Name, "stored", func(journal.ScheduleRecord) bool { return true })
			clock.Set(c.to)
			last, _ := time.Parse(time.RFC3339, c.want[len(c.want)-1])
			waitTick(t, j, s.Name, last)
			if err := sc.stop(t); err != nil {
				t.Fatal(err)
			}
			var want []string
			for _, w := range c.want {
				want = append(want, s.Name+"@"+w)
			}
			sameIDs(t, c.spec, rec.list(), want)
		}
	})

	t.Run("schedules: a clock that jumps past a tick at any point of a step leaves no due tick waiting", func(t *testing.T) {
		// The clock jumps from 30 s before tick 1 to 30 s after it at its
		// n-th reading, for each n through the scheduler's first steps,
		// or, past the readings of those steps, while it sleeps: wherever
		// the jump falls, the scheduler starts tick 1 without the clock
		// moving again (a wait armed from a reading taken after the jump
		// slept until 30 s past tick 2).
		for n := int64(1); n <= 8; n++ {
			j := open(t)
			rec := &creations{}
			clock := &jumpingClock{Clock: resumetest.NewClock(base.Add(30 * time.Second)), to: base.Add(90 * time.Second)}
			clock.left.Store(n)
			s := tockSchedule(resume.SkipMissed, 0)
			sc := startScheduler(&recording{Journal: j, rec: rec}, clock, s)
			waitRow(t, j, s.Name, "stored", func(journal.ScheduleRecord) bool { return true })
			for settle := time.Now().Add(time.Second); clock.left.Load() > 0 && time.Now().Before(settle); {
				time.Sleep(2 * time.Millisecond)
			}
			if clock.left.Swap(0) > 0 { // asleep, its readings done: the jump comes now
				clock.Clock.Set(clock.to)
			}
			waitRow(t, j, s.Name, fmt.Sprintf("jump at reading %d: no due tick left", n), func(r journal.ScheduleRecord) bool {
				return r.NextTick.After(clock.Clock.Now())
			})
			if err := sc.stop(t); err != nil {
				t.Fatal(err)
			}
			if got := rec.list(); len(got) > 1 || len(got) == 1 && got[0] != ids(s.Name, base, 1)[0] {
				t.Fatalf("jump at reading %d: runs created %v, want at most tick 1's", n, got)
			}
		}
	})

	t.Run("schedules: a row deleted by hand is stored again; ticks go on from then", func(t *testing.T) {
		if h.Exec == nil {
			t.Skip("the harness has no Exec")
		}
		j := open(t)
		rec := &creations{}
		clock := resumetest.NewClock(base.Add(30 * time.Second))
		s := tockSchedule(resume.SkipMissed, 0)
		sc := startScheduler(&recording{Journal: j, rec: rec}, clock, s)
		waitRow(t, j, s.Name, "stored", func(journal.ScheduleRecord) bool { return true })
		clock.Set(base.Add(time.Minute))
		waitTick(t, j, s.Name, base.Add(time.Minute))
		if err := h.Exec(context.Background(), `DELETE FROM resume_schedules`); err != nil {
			t.Fatal(err)
		}
		clock.Set(base.Add(3*time.Minute + 30*time.Second)) // the scheduler wakes at tick 2, finds no row
		waitRow(t, j, s.Name, "stored again", func(r journal.ScheduleRecord) bool { return r.NextTick.Equal(base.Add(4 * time.Minute)) })
		clock.Set(base.Add(4 * time.Minute))
		waitTick(t, j, s.Name, base.Add(4*time.Minute))
		if err := sc.stop(t); err != nil {
			t.Fatal(err)
		}
		sameIDs(t, "around the deletion", rec.list(), ids(s.Name, base, 1, 4))
	})

	t.Run("schedules: on the system clock, each tick starts once it is due", func(t *testing.T) {
		j := open(t)
		rec := &creations{}
		name := fmt.Sprintf("second%d", scheduleSeq.Add(1))
		e := resume.NewEngine(&recording{Journal: j, rec: rec})
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			done <- e.Schedule(ctx, resume.Schedule{Name: name, Every: time.Second, Workflow: Tock,
				Args: func(tick time.Time) []any { return []any{TockIn{Schedule: name, Tick: tick}} }})
		}()
		first := waitRow(t, j, name, "stored", func(journal.ScheduleRecord) bool { return true }).NextTick
		waitTick(t, j, name, first.Add(time.Second))
		cancel()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		sameIDs(t, "every second", rec.list(), []string{name + "@" + first.Format(time.RFC3339), name + "@" + first.Add(time.Second).Format(time.RFC3339)})
		for _, id := range rec.list() {
			run, _, err := j.LoadRun(context.Background(), id)
			tick, _ := time.Parse(time.RFC3339, id[len(name)+1:])
			if err != nil || run.CreatedAt.Before(tick) {
				t.Errorf("run %s created at %v (%v): before its tick", id, run.CreatedAt, err)
			}
			t.Logf("run %s created %v after its tick", id, run.CreatedAt.Sub(tick))
		}
	})

	t.Run("schedules: a bad schedule is refused before anything is stored; a workflow of no arguments needs no Args", func(t *testing.T) {
		j := open(t)
		rec := &creations{}
		clock := resumetest.NewClock(base.Add(30 * time.Second))
		e := resume.NewEngine(&recording{Journal: j, rec: rec}, resume.WithClock(clock))
		for _, c := range []struct {
			s    resume.Schedule
			want string
		}{
			{resume.Schedule{Name: "bad", Cron: "61 * * * *", Workflow: Mark}, "end of range (61) above maximum (59)"},
			{resume.Schedule{Name: "bad", Cron: "CRON_TZ=Europe/Paris", Workflow: Mark}, "CRON_TZ=Zone, a space, then the spec"},
			{resume.Schedule{Name: "bad", Every: time.Minute, Workflow: Tock}, "takes 1 arguments after its context, not 0"},
			{resume.Schedule{Name: "bad@x", Every: time.Minute, Workflow: Mark}, "the name must be"},
		} {
			err := e.Schedule(context.Background(), c.s)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%+v: %v, want an error containing %q", c.s, err, c.want)
			}
		}
		if all, err := j.ListSchedules(context.Background()); err != nil || len(all) != 0 {
			t.Fatalf("schedules stored by refused calls: %+v (%v)", all, err)
		}
		sc := startScheduler(&recording{Journal: j, rec: rec}, clock, resume.Schedule{Name: "mark", Cron: "@hourly", Workflow: Mark})
		waitRow(t, j, "mark", "stored", func(journal.ScheduleRecord) bool { return true })
		clock.Set(base.Add(time.Hour))
		waitTick(t, j, "mark", base.Add(time.Hour))
		if err := sc.stop(t); err != nil {
			t.Fatal(err)
		}
		sameIDs(t, "mark", rec.list(), []string{"mark@2026-11-30T13:00:00Z"})
		run, _, err := j.LoadRun(context.Background(), "mark@2026-11-30T13:00:00Z")
		if err != nil || string(run.Input) != "[]" || run.Status != journal.StatusPending {
			t.Fatalf("the tick's run: %+v (%v), want pending with input []", run, err)
		}
		all, err := j.ListSchedules(context.Background())
		if err != nil || len(all) != 1 || all[0].Spec != "@hourly" || all[0].Missed != "skip" || all[0].CatchUpLimit != 1 ||
			all[0].Workflow != "github.com/resumegen/resumegen/runtime/journaltest.Mark" || !all[0].NextTick.Equal(base.Add(2*time.Hour)) {
			t.Fatalf("stored schedules: %+v (%v)", all, err)
		}
	})
}

// scheduleRows proves the journal's side of schedules: a row is created
// once, and an update from a stale revision changes nothing.
func scheduleRows(t *testing.T, j journal.Journal, base time.Time) {
	ctx := context.Background()
	r := journal.ScheduleRecord{Name: "rows", Workflow: "w", Spec: "every 1m0s", Missed: "skip", CatchUpLimit: 1,
		NextTick: base.Add(time.Minute), CreatedAt: base, UpdatedAt: base}
	stored, created, err := j.CreateSchedule(ctx, r)
	if err != nil || !created || stored.Revision != 1 || !stored.NextTick.Equal(r.NextTick) || !stored.LastTick.IsZero() || stored.Spec != r.Spec {
		t.Fatalf("create: %+v %v %v", stored, created, err)
	}
	other := r
	other.Spec, other.Workflow = "@hourly", "v"
	again, created, err := j.CreateSchedule(ctx, other)
	if err != nil || created || again != stored {
		t.Fatalf("create again: %+v %v %v; want the first row %+v, not created", again, created, err, stored)
	}
	next := stored
	next.LastTick, next.NextTick, next.UpdatedAt = base.Add(time.Minute), base.Add(2*time.Minute), base.Add(time.Minute)
	moved, err := j.UpdateSchedule(ctx, next)
	if err != nil || moved.Revision != 2 || !moved.LastTick.Equal(next.LastTick) || !moved.NextTick.Equal(next.NextTick) || !moved.CreatedAt.Equal(base) {
		t.Fatalf("update: %+v %v", moved, err)
	}
	stale := next // still revision 1
	stale.LastTick, stale.NextTick = base.Add(5*time.Minute), base.Add(6*time.Minute)
	if _, err := j.UpdateSchedule(ctx, stale); !errors.Is(err, journal.ErrScheduleMoved) {
		t.Fatalf("update from a stale revision: %v, want ErrScheduleMoved", err)
	}
	if now, err := j.LoadSchedule(ctx, "rows"); err != nil || now != moved {
		t.Fatalf("after a refused update: %+v %v, want %+v", now, err, moved)
	}
	if _, err := j.LoadSchedule(ctx, "none"); !errors.Is(err, journal.ErrScheduleNotFound) {
		t.Fatalf("load of no schedule: %v", err)
	}
	missing := next
	missing.Name = "none"
	if _, err := j.UpdateSchedule(ctx, missing); !errors.Is(err, journal.ErrScheduleNotFound) {
		t.Fatalf("update of no schedule: %v", err)
	}
	// Many writers from one revision: exactly one wins.
	var wins atomic.Int64
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w := moved
			w.LastTick = base.Add(time.Duration(10+i) * time.Minute)
			if _, err := j.UpdateSchedule(ctx, w); err == nil {
				wins.Add(1)
			} else if !errors.Is(err, journal.ErrScheduleMoved) {
				t.Errorf("concurrent update: %v", err)
			}
		}()
	}
	wg.Wait()
	if all, err := j.ListSchedules(ctx); wins.Load() != 1 || err != nil || len(all) != 1 || all[0].Revision != 3 {
		t.Fatalf("8 writers from revision 2: %d won; rows %+v (%v); want 1 winner, revision 3", wins.Load(), all, err)
	}
}
