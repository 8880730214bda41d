package rolling

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/resumegen/resumegen/runtime/journal"
)

// slot is one of a rolling deploy's worker places: the version it runs
// and its current process.
type slot struct {
	label string
	p     *proc
}

// supervise keeps the slots' workers running for dur, restarting a killed
// one on its slot's version (itself killed at a random point while the
// budget of kills lasts).
func (d *deploy) supervise(slots []*slot, budget *int, dur time.Duration) {
	d.t.Helper()
	for end := time.Now().Add(dur); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		for _, s := range slots {
			if !s.p.alive() {
				s.p = d.start(s.label, d.maybeCrash(s.label, budget), 3)
			}
		}
	}
}

// maybeCrash returns a random kill point half of the time while the budget
// lasts, and "" (no kill) otherwise.
func (d *deploy) maybeCrash(label string, budget *int) string {
	if *budget <= 0 || d.rng.IntN(2) == 0 {
		return ""
	}
	*budget--
	return d.crash(label)
}

// untilDone supervises the slots until no run is pending or running.
func (d *deploy) untilDone(j journal.Journal, slots []*slot, budget *int) {
	d.t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for {
		n, err := unfinished(j)
		if err != nil {
			d.t.Fatal(err)
		}
		if n == 0 {
			return
		}
		if time.Now().After(deadline) {
			d.t.Fatalf("%d runs still unfinished after 90s", n)
		}
		d.supervise(slots, budget, 200*time.Millisecond)
	}
}

// superviseUntil supervises the slots until done is true of the number
// of succeeded runs.
func (d *deploy) superviseUntil(j journal.Journal, slots []*slot, budget *int, done func(succeeded int) bool) {
	d.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		list, err := j.ListRuns(context.Background(), journal.RunFilter{Statuses: []journal.Status{journal.StatusSucceeded}})
		if err != nil {
			d.t.Fatal(err)
		}
		if done(len(list)) {
			return
		}
		if time.Now().After(deadline) {
			d.t.Fatalf("only %d runs succeeded after 60s", len(list))
		}
		d.supervise(slots, budget, 50*time.Millisecond)
	}
}

// stopSlots stops the slots' workers: with SIGKILL (a kill at a random
// point of whatever they execute) when kill is true, with SIGTERM otherwise.
func stopSlots(slots []*slot, kill func() bool) {
	for _, s := range slots {
		sig := syscall.SIGTERM
		if kill() {
			sig = syscall.SIGKILL
		}
		s.p.stop(sig)
	}
}

// receipt is the workflow's output.
type receipt struct {
	ID    string
	Trail []string
}

// references runs runs r-000..r-(n-1) uninterrupted on every version:
// refs[version][run id] is the output.
func references(n int) (map[string]map[string]receipt, error) {
	refs := map[string]map[string]receipt{}
	for label, bin := range bins {
		out, err := exec.Command(bin, "reference", "-n", fmt.Sprint(n)).Output()
		if err != nil {
			return nil, fmt.Errorf("%s reference: %v", label, err)
		}
		m := map[string]receipt{}
		if err := json.Unmarshal(out, &m); err != nil {
			return nil, fmt.Errorf("%s reference: %v", label, err)
		}
		refs[hashes[label]] = m
	}
	return refs, nil
}

// expectParks lists the unfinished runs that deploying v3 must park: those
// that journaled the changed middle step or a step after it (any row, any
// status). Every other unfinished run continues. n counts the unfinished
// runs.
func expectParks(all map[string]loaded) (parks map[string]bool, n int) {
	past := steps["v2"][slices.Index(steps["v2"], middle):]
	parks = map[string]bool{}
	for id, l := range all {
		if l.run.Status.Finished() || l.run.Status == journal.StatusNeedsAttention {
			continue
		}
		n++
		for _, s := range l.steps {
			if slices.Contains(past, journal.StepName(s.StepKey)) {
				parks[id] = true
			}
		}
	}
	return parks, n
}

// effect is one step execution, as the worker recorded it.
type effect struct {
	run, key, binary, version string
	pid                       int
	at                        time.Time
}

func (d *deploy) readEffects() []effect {
	d.t.Helper()
	f, err := os.Open(d.effects)
	if err != nil {
		d.t.Fatal(err)
	}
	defer f.Close()
	var out []effect
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		w := strings.Fields(sc.Text())
		if len(w) != 6 {
			d.t.Fatalf("effects: malformed line %q", sc.Text())
		}
		pid, _ := strconv.Atoi(w[4])
		ns, _ := strconv.ParseInt(w[5], 10, 64)
		out = append(out, effect{w[0], w[1], w[2], w[3], pid, time.Unix(0, ns)})
	}
	if err := sc.Err(); err != nil {
		d.t.Fatal(err)
	}
	return out
}

// figures are what a deploy is judged by.
type figures struct {
	Runs, Succeeded, Moved, Executions int
	// Parked counts the runs parked by a version change, Expected those
	// the continuation rule must park; CouldContinue the parked runs it
	// would have continued, Missed the runs it must park that were not.
	Parked, Expected, CouldContinue, Missed int
	// WrongVersion counts step executions by a version the run was not
	// pinned or moved to at that time; Duplicates the step keys executed
	// again other than after a kill; WrongOutput the succeeded runs whose
	// output is not an uninterrupted run's on their version.
	WrongVersion, Duplicates, WrongOutput int
	// Repeated counts the at-least-once re-executions after a kill.
	Repeated int
	// EarlyMoves counts the moves made while a worker of the run's
	// version was running (it advertised the version): such a run was
	// the old worker's to execute.
	EarlyMoves int
	// Prefix counts the moves of runs that had journaled steps (an
	// unchanged prefix), by versions; the other moves re-pinned runs
	// that had journaled none.
	Prefix map[string]int
	// Moves counts the moves by versions ("v1->v2").
	Moves map[string]int
}

func (f figures) String() string {
	return fmt.Sprintf("runs %d (succeeded %d, moved %d), step executions %d (%d repeated after a kill); "+
		"parked by the version change %d of %d expected; parked that could have continued %d; not parked that should have %d; "+
		"executions by a version not pinned or moved to %d; moves while a worker of the run's version ran %d; duplicate executions not at a kill %d; wrong outputs %d; moves %v, of which with journaled steps %v",
		f.Runs, f.Succeeded, f.Moved, f.Executions, f.Repeated, f.Parked, f.Expected, f.CouldContinue, f.Missed,
		f.WrongVersion, f.EarlyMoves, f.Duplicates, f.WrongOutput, f.Moves, f.Prefix)
}

// audit judges the journal's runs and the recorded executions against
// the continuation rule, expect being the runs it must park.
func (d *deploy) audit(all map[string]loaded, expect map[string]bool, refs map[string]map[string]receipt) figures {
	d.t.Helper()
	f := figures{Runs: len(all), Expected: len(expect), Moves: map[string]int{}, Prefix: map[string]int{}}
	for id, l := range all {
		d.auditRun(&f, id, l, expect[id], refs)
	}
	d.auditEffects(&f, all)
	return f
}

func (d *deploy) auditRun(f *figures, id string, l loaded, mustPark bool, refs map[string]map[string]receipt) {
	r := l.run
	if len(r.Moves) > 0 {
		f.Moved++
		d.checkMoves(r)
		for _, m := range r.Moves {
			f.Moves[hashes[m.From]+"->"+hashes[m.To]]++
			if m.Why != "no step journaled" {
				f.Prefix[hashes[m.From]+"->"+hashes[m.To]]++
			}
			if p := d.runningAt(hashes[m.From], m.At); p != nil {
				f.EarlyMoves++
				d.t.Errorf("run %s moved %s -> %s at %s by %s while %s worker %d ran", id, hashes[m.From], hashes[m.To], m.At.Format(time.StampMicro), m.By, p.label, p.cmd.Process.Pid)
			}
		}
	}
	switch {
	case r.Status == journal.StatusSucceeded:
		f.Succeeded++
		var got receipt
		if err := json.Unmarshal(r.Output, &got); err != nil || !reflect.DeepEqual(got, refs[r.Version][id]) {
			f.WrongOutput++
			d.t.Errorf("run %s (version %s): output %s, an uninterrupted run gives %+v", id, hashes[r.Version], r.Output, refs[r.Version][id])
		}
	case r.Status == journal.StatusNeedsAttention && r.AttentionKind == journal.AttentionKindVersion:
		f.Parked++
		if !mustPark {
			f.CouldContinue++
			d.t.Errorf("run %s parked, but its journal is an unchanged prefix of the new version: %s", id, r.Error)
		}
	default:
		d.t.Errorf("run %s ended %s (%s): %s", id, r.Status, r.AttentionKind, r.Error)
	}
	if mustPark && r.Status != journal.StatusNeedsAttention {
		f.Missed++
		d.t.Errorf("run %s journaled %s or a later step of version %s and was not parked by v3 (status %s, version %s)", id, middle, hashes[pinnedBefore(r)], r.Status, hashes[r.Version])
	}
}

// checkMoves checks that a run's moves chain from its first version to
// its current one, forwards only, by the engine.
func (d *deploy) checkMoves(r journal.RunRecord) {
	v := r.Moves[0].From
	for _, m := range r.Moves {
		if m.From != v || hashes[m.To] <= hashes[m.From] || !strings.HasPrefix(m.By, "engine ") || m.Why == "" {
			d.t.Errorf("run %s: move %+v does not continue from %s forwards", r.RunID, m, v)
		}
		v = m.To
	}
	if v != r.Version {
		d.t.Errorf("run %s: pinned to %s, its moves end at %s", r.RunID, r.Version, v)
	}
}

// runningAt returns a worker of version label that ran at t, surely
// advertising its version: started a second before (a worker advertises
// once it saved its manifests) and ended 300 ms after (it withdraws before
// it exits).
func (d *deploy) runningAt(label string, t time.Time) *proc {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, p := range d.procs {
		if p.label == label && p.started.Add(time.Second).Before(t) && (p.ended.IsZero() || t.Before(p.ended.Add(-300*time.Millisecond))) {
			return p
		}
	}
	return nil
}

// pinnedBefore is the version a run was first pinned to.
func pinnedBefore(r journal.RunRecord) string {
	if len(r.Moves) > 0 {
		return r.Moves[0].From
	}
	return r.Version
}

// pinnedAt is the version a run was pinned to at t, by its moves.
func pinnedAt(r journal.RunRecord, t time.Time) string {
	v := pinnedBefore(r)
	for _, m := range r.Moves {
		if !m.At.After(t) {
			v = m.To
		}
	}
	return v
}

func (d *deploy) auditEffects(f *figures, all map[string]loaded) {
	byKey := map[string][]effect{}
	for _, e := range d.readEffects() {
		f.Executions++
		l, ok := all[e.run]
		if !ok {
			d.t.Errorf("an execution of unknown run %s", e.run)
			continue
		}
		if want := pinnedAt(l.run, e.at); e.version != want || hashes[e.binary] != e.version {
			f.WrongVersion++
			d.t.Errorf("run %s step %s executed by %s (pid %d) at %s while pinned to %s", e.run, e.key, e.binary, e.pid, e.at.Format(time.StampMicro), hashes[want])
		}
		byKey[e.run+" "+e.key] = append(byKey[e.run+" "+e.key], e)
	}
	for k, es := range byKey {
		for i, e := range es {
			if i == len(es)-1 || d.killed[e.pid] {
				if i < len(es)-1 {
					f.Repeated++
				}
				continue
			}
			f.Duplicates++
			d.t.Errorf("%s executed %d times, the first by %s pid %d, which was not killed", k, len(es), e.binary, e.pid)
		}
	}
	for id, l := range all {
		for _, s := range l.steps {
			if s.Status == journal.StepSucceeded && len(byKey[id+" "+s.StepKey]) == 0 {
				d.t.Errorf("run %s: step %s journaled succeeded but never executed", id, s.StepKey)
			}
		}
	}
}
