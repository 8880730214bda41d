package rolling

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/resumegen/resumegen/internal/pgtest"
)

// TestRollingDeployPostgres deploys v2 over v1 worker by worker, four
// workers sharing one PostgreSQL journal, killed at random points and
// restarted; then v3 over runs of v2 stopped at random points. No run
// parks that could continue, no step executes on a version its run was
// not pinned or moved to, v3 parks exactly the runs that journaled its
// changed middle step or a later one, and every other run's output is an
// uninterrupted run's.
func TestRollingDeployPostgres(t *testing.T) {
	t.Parallel()
	d := newDeploy(t, pgtest.FreshDatabase(t))
	refs, err := references(210)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	d.enqueue("v1", 0, 100)
	j := d.open()
	budget := 6
	slots := make([]*slot, 4)
	for i := range slots {
		slots[i] = &slot{label: "v1", p: d.start("v1", d.maybeCrash("v1", &budget), 3)}
	}
	for i, s := range slots {
		d.supervise(slots, &budget, 300*time.Millisecond)
		// A replaced worker drains (SIGTERM) or dies mid-run (SIGKILL); the
		// last v1 worker dies, leaving v1 runs with journaled steps that
		// only v2 workers can continue.
		sig := syscall.SIGTERM
		if i == len(slots)-1 || d.rng.IntN(2) == 0 {
			sig = syscall.SIGKILL
		}
		s.p.stop(sig)
		s.label, s.p = "v2", d.start("v2", d.maybeCrash("v2", &budget), 3)
		if i == 0 {
			d.enqueue("v2", 100, 50) // v2 runs, which no v1 worker may take
		}
	}
	d.untilDone(j, slots, &budget)
	stopSlots(slots, func() bool { return false })
	one := d.audit(d.runs(j), nil, refs)
	t.Logf("v1 -> v2, 4 workers, %s, %d SIGKILLs: %v", time.Since(start).Round(100*time.Millisecond), d.kills(), one)
	kills := d.kills()

	start = time.Now()
	d.enqueue("v2", 150, 60)
	budget = 4
	for _, s := range slots {
		s.p = d.start("v2", d.maybeCrash("v2", &budget), 3)
	}
	// Stopped once a third of them succeeded: the other runs are at every
	// step, or not started.
	d.superviseUntil(j, slots, &budget, func(succeeded int) bool { return succeeded >= 100+50+20 })
	stopSlots(slots, func() bool { return d.rng.IntN(2) == 0 })
	expect, n := expectParks(d.runs(j))
	budget = 4
	for _, s := range slots {
		s.label, s.p = "v3", d.start("v3", d.maybeCrash("v3", &budget), 3)
	}
	d.untilDone(j, slots, &budget)
	stopSlots(slots, func() bool { return false })
	two := d.audit(d.runs(j), expect, refs)
	t.Logf("v2 -> v3, 4 workers, %s, %d SIGKILLs: %d runs unfinished at the deploy; %v", time.Since(start).Round(100*time.Millisecond), d.kills()-kills, n, two)
	if two.Expected == 0 {
		t.Errorf("no run had journaled %s when v3 deployed: the test proved nothing about the middle-step change", middle)
	}
}

// TestRollingDeploySQLite holds the same rules on SQLite with one process
// per deploy: a v1 worker killed at a random moment, a v2 worker that
// resumes (and starts runs of its own) killed at another, then v3.
func TestRollingDeploySQLite(t *testing.T) {
	t.Parallel()
	d := newDeploy(t, filepath.Join(t.TempDir(), "runs.db"))
	refs, err := references(60)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	d.enqueue("v1", 0, 40)
	j := d.open()
	d.killAfter(d.start("v1", "", 3), 300+d.rng.IntN(1200))
	// v2 waits out v1's advertisement (3 leases), takes v1's runs over and
	// dies past the middle step of one of them: that run must park on v3.
	d.mustDie(d.start("v2", d.pastMiddle(), 3))
	d.enqueue("v2", 40, 20) // v2 runs no v2 worker started: v3 re-pins them
	all := d.runs(j)
	expect, n := expectParks(all)
	p := d.start("v3", "", 3)
	d.untilDone(j, nil, nil)
	p.stop(syscall.SIGTERM)
	f := d.audit(d.runs(j), expect, refs)
	t.Logf("v1 -> v2 -> v3, one process each, %s: %d runs unfinished at the v3 deploy; %v", time.Since(start).Round(100*time.Millisecond), n, f)
	if f.Expected == 0 {
		t.Errorf("no run had journaled %s when v3 deployed: the test proved nothing about the middle-step change", middle)
	}
}

// pastMiddle is a random kill point of v2 that a run reaches only once it
// journaled the middle step.
func (d *deploy) pastMiddle() string {
	for {
		c := d.crash("v2")
		if step, point, _ := strings.Cut(c, ":"); step != "Fetch" && step != "Price" && (step != middle || point == "after") {
			return c
		}
	}
}

// mustDie waits for p, which its fault must kill.
func (d *deploy) mustDie(p *proc) {
	d.t.Helper()
	select {
	case <-p.done:
	case <-time.After(60 * time.Second):
		p.stop(syscall.SIGKILL)
		d.t.Fatalf("the %s worker did not reach its kill point in 60s", p.label)
	}
	if !p.killed {
		d.t.Fatalf("the %s worker ended without its kill: %v\n%s", p.label, p.err, p.stderr.String())
	}
	d.t.Logf("%s worker killed at %s", p.label, p.crash)
}

// killAfter kills p with SIGKILL after ms milliseconds: at whatever
// point of whatever runs it executes then.
func (d *deploy) killAfter(p *proc, ms int) {
	d.t.Helper()
	select {
	case <-p.done:
		d.t.Fatalf("the %s worker ended before its kill: %v\n%s", p.label, p.err, p.stderr.String())
	case <-time.After(time.Duration(ms) * time.Millisecond):
	}
	p.stop(syscall.SIGKILL)
	d.t.Logf("%s worker killed after %dms", p.label, ms)
}
