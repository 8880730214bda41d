package resume

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/resumegen/resumegen/runtime/journal"
)

// Schedule starts a workflow on every tick of a cron spec or an interval,
// from any number of processes: see [Engine.Schedule].
type Schedule struct {
	// Name identifies the schedule in the journal and in its runs' ids:
	// letters, digits, '.', '_' and '-', starting with a letter or digit,
	// at most 100 characters.
	Name string
	// Cron is a standard cron spec (5 fields, minute first, as
	// github.com/robfig/cron/v3's ParseStandard reads it) or one of its
	// descriptors (@hourly, @daily, @weekly, @monthly, @yearly,
	// @every 1h30m). Ticks are in UTC unless the spec starts with
	// CRON_TZ=Zone (an IANA zone name), which computes them in that
	// zone's local time: a local time that a daylight-saving change skips
	// has no tick that day, and one that it repeats has two (two UTC
	// instants, two runs).
	Cron string
	// Every is an interval, a whole number of seconds: the ticks are its
	// multiples since the zero time (January 1, year 1, UTC), so
	// Every: time.Hour ticks on the hour, 15*time.Minute at :00, :15, :30
	// and :45 UTC. Set Cron or Every, not both.
	Every time.Duration
	// Workflow is the registered workflow function each tick starts.
	Workflow any
	// Args returns the workflow's arguments (after its context) for the
	// tick; nil means no arguments. It is called once when the schedule
	// starts, to check them against the workflow, then once per tick.
	Args func(tick time.Time) []any
	// Missed is what happens to ticks no scheduler started at their time
	// (no process ran the schedule then): see [MissedPolicy].
	Missed MissedPolicy
	// CatchUpLimit is, for [CatchUpMissed], how many due ticks one
	// wake-up starts at most (0: [DefaultCatchUpLimit]). It must be 0 for
	// [SkipMissed].
	CatchUpLimit int
}

// MissedPolicy says what a schedule does with ticks that passed while no
// scheduler ran it. When a scheduler wakes up, the due ticks are every
// tick from the schedule's next tick (as stored in the journal) up to the
// scheduler's clock; in the normal course there is one, the tick it woke
// up for.
type MissedPolicy int

const (
	// SkipMissed starts only the latest due tick (the one whose time
	// passed last, however late) and skips every older one: after a
	// gap, the schedule starts one run, then carries on at its next tick.
	// The skipped ticks are logged (how many, the first and the last).
	SkipMissed MissedPolicy = iota
	// CatchUpMissed starts every due tick, oldest first, up to
	// CatchUpLimit of them: the latest CatchUpLimit due ticks are started
	// and any older ones are skipped and logged.
	CatchUpMissed
)

// DefaultCatchUpLimit is the CatchUpLimit of a [CatchUpMissed] schedule
// that sets none.
const DefaultCatchUpLimit = 100

// String is the policy as the journal stores it: "skip" or "catch_up".
func (m MissedPolicy) String() string {
	switch m {
	case SkipMissed:
		return "skip"
	case CatchUpMissed:
		return "catch_up"
	}
	return fmt.Sprintf("MissedPolicy(%d)", int(m))
}

// maxScheduleWait bounds one wait of a scheduler: it reads its row again
// at least this often, so that a clock jump or a changed row is noticed.
const maxScheduleWait = time.Minute

// scheduleRetry is how long a scheduler waits after a journal error.
const scheduleRetry = time.Second

// Schedule runs schedule s until ctx ends, then returns nil: at each tick
// it enqueues a run of s.Workflow (pending, for a worker, [Engine.Work],
// to execute) with the id NAME@TICK, TICK in UTC RFC 3339
// (report@2026-11-30T13:00:00Z). The run id is the tick's idempotency key:
// any number of processes may run the same schedule, and a tick's run is
// created once whichever of them gets there first.
//
// The schedule's state lives in the journal (the resume_schedules row of
// its name: spec, workflow, policy, last tick started, next tick), so a
// restarted process carries on where the schedule stopped; ticks that
// passed while no process ran it follow s.Missed. The row is advanced by
// compare-and-set: a process enqueues the due ticks' runs, then moves the
// row past them, and one that finds the row moved reads it again.
//
// The first process to run a schedule stores it; its first tick is the
// first one after that moment. A process that runs a schedule whose
// stored definition differs (another spec, workflow, policy or limit)
// replaces it: with the same spec, ticks carry on from the stored next
// tick under the new workflow or policy; with another spec, the next tick
// is the new spec's first tick after that moment, and the due ticks of
// the old spec not yet started are not started. A process that then finds
// its own schedule replaced by another process's returns an error: it
// stops scheduling instead of fighting over the row (run one definition
// per name: a deploy's new processes replace the old ones').
//
// Schedule refuses, before anything is stored, an invalid s: a name
// outside its charset, not exactly one of Cron and Every, a cron spec the
// parser refuses (with its message) or that never fires, an interval that
// is not a whole number of seconds, an unknown policy or a negative limit,
// a function that is not a registered workflow, and arguments that do not
// fit it (checked as [Engine.Enqueue] checks them, with Args of the first
// tick). Journal errors while it runs are logged and retried.
//
// Ticks start when the journal's clock passes them (journal.Clock; the
// engine's, see [WithClock], for a journal that tells none), whatever the
// clock of the process that runs the schedule says: a scheduler whose
// clock is fast starts no tick early, nor moves the next tick ahead, and
// one whose clock is slow does not hold the schedule back.
func (e *Engine) Schedule(ctx context.Context, s Schedule) error {
	p, err := e.schedulePlan(s)
	if err != nil {
		return err
	}
	if _, err := e.ensureSchedule(ctx, p); err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("schedule %s: %w", s.Name, err)
	}
	for {
		next, err := e.scheduleStep(ctx, p)
		var stop *scheduleStop
		switch {
		case ctx.Err() != nil:
			return nil
		case errors.As(err, &stop):
			return err
		case err != nil:
			e.logger.Warn("schedule: journal failed; trying again", "schedule", s.Name, "err", err)
			next = e.now().Add(scheduleRetry)
		}
		if next.IsZero() {
			continue
		}
		select {
		case <-ctx.Done():
			return nil
		case <-e.at(earliest(next, e.now().Add(maxScheduleWait))):
		}
	}
}

// earliest is the earlier of a and b.
func earliest(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// scheduleNow is the journal's clock in UTC, the earliest it may read
// now, as schedules compute which ticks are due.
func (e *Engine) scheduleNow(ctx context.Context) (time.Time, error) {
	now, _, err := e.journalNow(ctx)
	return now.UTC(), err
}

// schedulePlan is a validated schedule: its parsed ticks and the row it
// keeps in the journal.
type schedulePlan struct {
	s     Schedule
	def   *WorkflowDef
	ticks cron.Schedule
	spec  string // as stored
	limit int
}

var scheduleName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$`)

// schedulePlan validates s.
func (e *Engine) schedulePlan(s Schedule) (*schedulePlan, error) {
	fail := func(format string, args ...any) (*schedulePlan, error) {
		return nil, fmt.Errorf("resume: schedule %q: %s", s.Name, fmt.Sprintf(format, args...))
	}
	if !scheduleName.MatchString(s.Name) {
		return fail("the name must be 1 to 100 letters, digits, '.', '_' or '-', starting with a letter or digit (it starts the runs' ids, NAME@TICK)")
	}
	p := &schedulePlan{s: s, limit: s.CatchUpLimit}
	var err error
	switch {
	case s.Cron != "" && s.Every != 0:
		return fail("set Cron or Every, not both")
	case s.Cron != "":
		p.spec = s.Cron
		if p.ticks, err = parseCron(s.Cron); err != nil {
			return fail("cron spec %q: %v", s.Cron, err)
		}
	case s.Every != 0:
		if s.Every < time.Second || s.Every%time.Second != 0 {
			return fail("Every is %v: it must be a whole number of seconds, at least one (ticks are named to the second)", s.Every)
		}
		p.spec, p.ticks = "every "+s.Every.String(), alignedEvery(s.Every)
	default:
		return fail("set Cron (a cron spec, such as \"0 * * * *\" or \"@hourly\") or Every (an interval)")
	}
	// Whether the spec fires at all: the engine's clock is good enough.
	first := p.ticks.Next(e.now().UTC())
	if first.IsZero() {
		return fail("cron spec %q never fires", s.Cron)
	}
	switch {
	case s.Missed != SkipMissed && s.Missed != CatchUpMissed:
		return fail("Missed is %v: want SkipMissed or CatchUpMissed", s.Missed)
	case s.CatchUpLimit < 0:
		return fail("CatchUpLimit is %d: it must not be negative", s.CatchUpLimit)
	case s.Missed == SkipMissed && s.CatchUpLimit != 0:
		return fail("CatchUpLimit is %d: it is for CatchUpMissed (SkipMissed starts one due tick)", s.CatchUpLimit)
	case s.Missed == SkipMissed:
		p.limit = 1
	case s.CatchUpLimit == 0:
		p.limit = DefaultCatchUpLimit
	}
	if p.def, err = lookupFunc(s.Workflow); err != nil {
		return fail("%v", err)
	}
	if err := p.checkArgs(first); err != nil {
		return fail("%v", err)
	}
	return p, nil
}

// parseCron parses spec with the cron library (standard 5 fields and
// descriptors); a spec without CRON_TZ= (or TZ=) is in UTC, not the
// process's local zone. The library panics on a zone prefix without a
// spec after it: that is a refusal too.
func parseCron(spec string) (sched cron.Schedule, err error) {
	defer func() {
		if r := recover(); r != nil {
			sched, err = nil, fmt.Errorf("the parser cannot read it (%v): write CRON_TZ=Zone, a space, then the spec", r)
		}
	}()
	sched, err = cron.ParseStandard(spec)
	if err != nil {
		return nil, err
	}
	zoned := strings.HasPrefix(spec, "CRON_TZ=") || strings.HasPrefix(spec, "TZ=")
	if ss, ok := sched.(*cron.SpecSchedule); ok && !zoned {
		ss.Location = time.UTC
	}
	return sched, nil
}

// alignedEvery ticks at the multiples of d since the zero time.
type alignedEvery time.Duration

func (d alignedEvery) Next(t time.Time) time.Time {
	return t.UTC().Truncate(time.Duration(d)).Add(time.Duration(d))
}

// args returns the workflow's arguments for tick.
func (p *schedulePlan) args(tick time.Time) []any {
	if p.s.Args == nil {
		return nil
	}
	return p.s.Args(tick)
}

// checkArgs checks the arguments of tick against the workflow, as
// Enqueue would.
func (p *schedulePlan) checkArgs(tick time.Time) error {
	args := p.args(tick)
	if err := checkArgs(p.s.Workflow, args); err != nil {
		return fmt.Errorf("workflow %s, arguments of tick %s: %w", p.def.QualifiedName(), tickText(tick), err)
	}
	if _, err := encodeArgs(args); err != nil {
		return fmt.Errorf("workflow %s, arguments of tick %s: %w", p.def.QualifiedName(), tickText(tick), err)
	}
	return nil
}

// record is the schedule's row as this process defines it, first stored
// at now.
func (p *schedulePlan) record(now time.Time) journal.ScheduleRecord {
	return journal.ScheduleRecord{
		Name: p.s.Name, Workflow: p.def.QualifiedName(), Spec: p.spec, Missed: p.s.Missed.String(),
		CatchUpLimit: p.limit, NextTick: p.ticks.Next(now), CreatedAt: now, UpdatedAt: now,
	}
}

// matches reports whether the stored row defines this schedule.
func (p *schedulePlan) matches(r journal.ScheduleRecord) bool {
	return r.Workflow == p.def.QualifiedName() && r.Spec == p.spec && r.Missed == p.s.Missed.String() && r.CatchUpLimit == p.limit
}

// tickText is a tick as run ids name it.
func tickText(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// tickRunID is the id of the run schedule name starts at tick.
func tickRunID(name string, tick time.Time) string { return name + "@" + tickText(tick) }

// ensureSchedule stores the schedule's row, or replaces a stored one that
// defines it otherwise (see Engine.Schedule).
func (e *Engine) ensureSchedule(ctx context.Context, p *schedulePlan) (journal.ScheduleRecord, error) {
	for {
		now, err := e.scheduleNow(ctx)
		if err != nil {
			return journal.ScheduleRecord{}, err
		}
		want := p.record(now)
		row, created, err := e.journal.CreateSchedule(ctx, want)
		if err != nil || created || p.matches(row) {
			return row, err
		}
		upd := row
		upd.Workflow, upd.Missed, upd.CatchUpLimit, upd.UpdatedAt = want.Workflow, want.Missed, want.CatchUpLimit, want.UpdatedAt
		if row.Spec != p.spec {
			upd.Spec, upd.NextTick = p.spec, want.NextTick
		}
		stored, err := e.journal.UpdateSchedule(ctx, upd)
		if errors.Is(err, journal.ErrScheduleMoved) {
			continue
		}
		if err == nil {
			e.logger.Info("schedule replaced", "schedule", p.s.Name, "old_spec", row.Spec, "spec", p.spec,
				"old_workflow", row.Workflow, "workflow", upd.Workflow, "missed", upd.Missed, "next_tick", tickText(stored.NextTick))
		}
		return stored, err
	}
}

// scheduleStop is an error that ends a scheduler.
type scheduleStop struct{ msg string }

func (s *scheduleStop) Error() string { return s.msg }

// scheduleStep reads the schedule's row, starts its due ticks and moves
// the row past them. It returns when, by the engine's clock, to take the
// next step, or the zero time for at once.
//
// That instant is the engine's clock read before the journal's, plus the
// wait until the next tick by the journal's: a wait counted from a
// reading of the engine's clock taken after would be shifted by any jump
// of that clock in between (a test harness's, an NTP step), and a
// scheduler whose clock jumped ahead past the next tick would sleep a
// whole interval past it. Read first, it can only make the step early,
// and an early step waits again.
func (e *Engine) scheduleStep(ctx context.Context, p *schedulePlan) (time.Time, error) {
	row, err := e.journal.LoadSchedule(ctx, p.s.Name)
	if errors.Is(err, journal.ErrScheduleNotFound) {
		// A person deleted the row: store it again, as a first start.
		e.logger.Warn("schedule: its row is gone from the journal; storing it again", "schedule", p.s.Name)
		row, err = e.ensureSchedule(ctx, p)
	}
	if err != nil {
		return time.Time{}, err
	}
	if !p.matches(row) {
		return time.Time{}, &scheduleStop{fmt.Sprintf("schedule %s: another process replaced it (spec %q, workflow %s, missed %s, limit %d; this one has spec %q, workflow %s): this scheduler stops",
			p.s.Name, row.Spec, row.Workflow, row.Missed, row.CatchUpLimit, p.spec, p.def.QualifiedName())}
	}
	local := e.now()
	now, err := e.scheduleNow(ctx)
	if err != nil {
		return time.Time{}, err
	}
	if row.NextTick.After(now) {
		return local.Add(row.NextTick.Sub(now)), nil
	}
	due := dueTicks(p.ticks, row.NextTick, now, p.limit)
	if due.next.IsZero() {
		return time.Time{}, &scheduleStop{fmt.Sprintf("schedule %s: cron spec %q fires no more after %s", p.s.Name, p.spec, tickText(due.start[len(due.start)-1]))}
	}
	for _, t := range due.start {
		if err := e.startTick(ctx, p, t); err != nil {
			return time.Time{}, err
		}
	}
	upd := row
	upd.LastTick, upd.NextTick, upd.UpdatedAt = due.start[len(due.start)-1], due.next, now
	if _, err := e.journal.UpdateSchedule(ctx, upd); errors.Is(err, journal.ErrScheduleMoved) {
		return time.Time{}, nil // another scheduler moved it first: read it again
	} else if err != nil {
		return time.Time{}, err
	}
	if due.skipped > 0 {
		e.logger.Warn("schedule skipped missed ticks", "schedule", p.s.Name, "missed", row.Missed, "skipped", due.skipped,
			"first_skipped", tickText(due.firstSkipped), "last_skipped", tickText(due.lastSkipped), "started", len(due.start))
	}
	return time.Time{}, nil
}

// startTick enqueues the run of tick. A tick whose arguments do not fit
// the workflow is skipped, logged; a run id that exists with other input
// (a scheduler with other Args started it) counts as started.
func (e *Engine) startTick(ctx context.Context, p *schedulePlan, tick time.Time) error {
	id := tickRunID(p.s.Name, tick)
	if err := p.checkArgs(tick); err != nil {
		e.logger.Error("schedule: tick not started", "schedule", p.s.Name, "run", id, "err", err)
		return nil
	}
	_, err := e.Enqueue(ctx, id, p.s.Workflow, p.args(tick)...)
	if errors.Is(err, ErrRunConflict) {
		e.logger.Warn("schedule: the tick's run exists with other input; not started again", "schedule", p.s.Name, "run", id)
		return nil
	}
	if err != nil {
		return fmt.Errorf("schedule %s, tick %s: %w", p.s.Name, tickText(tick), err)
	}
	return nil
}

// dueSet is what one wake-up of a scheduler does: the ticks it starts,
// oldest first, the older due ticks it skips, and the next tick after.
type dueSet struct {
	start                     []time.Time
	skipped                   int
	firstSkipped, lastSkipped time.Time
	next                      time.Time
}

// dueTicks lists the ticks of sched from from (a tick) up to now: the
// latest limit of them are started, the older ones skipped.
func dueTicks(sched cron.Schedule, from, now time.Time, limit int) dueSet {
	var d dueSet
	t := from
	for !t.After(now) {
		if len(d.start) == limit {
			if d.skipped == 0 {
				d.firstSkipped = d.start[0]
			}
			d.lastSkipped = d.start[0]
			d.skipped++
			d.start = d.start[1:]
		}
		d.start = append(d.start, t.UTC())
		if t = sched.Next(t); t.IsZero() {
			break
		}
	}
	d.next = t.UTC()
	return d
}
