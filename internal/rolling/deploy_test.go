package rolling

import (
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
		s.p.stop(syscall.SIGTERM)
		s.label, s.p = "v2", d.start("v2", d.maybeCrash("v2", &budget), 3)
		if i == 0 {
			d.enqueue("v2", 100, 50) // v2 runs, which no v1 worker may take
		}
	}
	d.untilDone(j, slots, &budget)
	stopSlots(slots, func() bool { return false })
	one := d.audit(d.runs(j), nil, refs)
	t.Logf("v1 -> v2, 4 workers, %s: %v", time.Since(start).Round(100*time.Millisecond), one)

	start = time.Now()
	d.enqueue("v2", 150, 60)
	budget = 4
	for _, s := range slots {
		s.p = d.start("v2", d.maybeCrash("v2", &budget), 3)
	}
	d.supervise(slots, &budget, time.Duration(200+d.rng.IntN(300))*time.Millisecond)
	stopSlots(slots, func() bool { return d.rng.IntN(2) == 0 })
	expect := expectParks(d.runs(j))
	budget = 4
	for _, s := range slots {
		s.label, s.p = "v3", d.start("v3", d.maybeCrash("v3", &budget), 3)
	}
	d.untilDone(j, slots, &budget)
	stopSlots(slots, func() bool { return false })
	two := d.audit(d.runs(j), expect, refs)
	t.Logf("v2 -> v3, 4 workers, %s: %v", time.Since(start).Round(100*time.Millisecond), two)
	if two.Expected == 0 {
		t.Errorf("no run had journaled %s when v3 deployed: the test proved nothing about the middle-step change", middle)
	}
}
