package journaltest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/resumegen/resumegen/runtime/journal"
	"github.com/resumegen/resumegen/runtime/resume"
)

// runLiveness proves that a run is taken from its owner before its lease
// expires only when the owner's liveness signal says its process ended,
// never by a pid; that a claim holds a live lease however long it waited;
// and that the crash path and a refused claim read the journal once, or
// not at all.
func runLiveness(t *testing.T, h Harness, open func(t *testing.T) journal.Journal) {
	ctx := context.Background()

	t.Run("a live owner of another process is not taken for dead, whatever its pid", func(t *testing.T) {
		if h.OpenAgain == nil {
			t.Skip("the harness has no OpenAgain")
		}
		j := open(t)
		e := resume.NewEngine(j, resume.WithLease(time.Hour))
		id := newRunID(t)
		if _, err := e.Enqueue(ctx, id, Chain, Plan{Loop: 1}); err != nil {
			t.Fatal(err)
		}
		// Another process, whose pid as this host sees it names no process
		// (it runs in another PID namespace): pids are never read.
		host, _ := os.Hostname()
		other := openAgain(t, h)
		owner := fmt.Sprintf("%s/%d/live", host, 1<<22+1)
		if err := other.(journal.Liveness).KeepAlive(ctx, owner); err != nil {
			t.Fatal(err)
		}
		if _, _, err := other.Claim(ctx, journal.ClaimRequest{RunID: id, Owner: owner, Lease: time.Hour}); err != nil {
			t.Fatal(err)
		}
		if gone, err := j.(journal.Liveness).OwnerGone(ctx, owner); err != nil || gone {
			t.Errorf("OwnerGone(live owner) = %v, %v; want false", gone, err)
		}
		if _, err := e.Resume(ctx, id); !errors.Is(err, journal.ErrRunBusy) {
			t.Errorf("resuming a run a live process holds: %v, want ErrRunBusy", err)
		}
		stop := startWorker(ctx, e, resume.WorkerOptions{PollInterval: 5 * time.Millisecond})
		time.Sleep(100 * time.Millisecond)
		if err := stop(); err != nil {
			t.Fatal(err)
		}
		if n := seen.count(id, "Fetch"); n != 0 {
			t.Fatalf("Fetch executed %d times while a live process held the run", n)
		}
		// Its process ends: the run is taken over at once.
		other.Close()
		waitGone(t, j, owner)
		if res, err := e.Resume(ctx, id); err != nil || res.Status != journal.StatusSucceeded {
			t.Fatalf("resuming the run of an ended process: %v, %v", res.Status, err)
		}
		if n := seen.count(id, "Fetch"); n != 1 {
			t.Errorf("Fetch executed %d times, want 1", n)
		}
	})

	t.Run("a run its own live worker lost track of is taken back by that worker, and only when it does not execute it", func(t *testing.T) {
		// A claim committed whose journal read then failed (or a finish
		// that could not be written): the run is running under a live
		// owner that does not execute it. No other live owner may take
		// it; its own owner does, once the lease lapses.
		j := open(t)
		id := newRunID(t)
		e := resume.NewEngine(j, resume.WithOwner("forgetful"), resume.WithLease(50*time.Millisecond))
		if _, err := e.Enqueue(ctx, id, Chain, Plan{Loop: 1}); err != nil {
			t.Fatal(err)
		}
		if err := j.(journal.Liveness).KeepAlive(ctx, "forgetful"); err != nil {
			t.Fatal(err)
		}
		req := journal.ClaimNextRequest{Owner: "forgetful", Lease: 50 * time.Millisecond, Workflows: []string{chainDef.QualifiedName()}}
		if _, _, err := j.ClaimNext(ctx, req); err != nil {
			t.Fatal(err)
		}
		time.Sleep(80 * time.Millisecond) // the lease lapses
		held := req
		held.Holding = []string{id}
		if r, _, err := j.ClaimNext(ctx, held); !errors.Is(err, journal.ErrNoRunReady) {
			t.Fatalf("a run its owner executes was claimed again: %s, %v", r.RunID, err)
		}
		stop := startWorker(ctx, e, resume.WorkerOptions{PollInterval: 5 * time.Millisecond})
		waitSucceeded(t, j, id, 10*time.Second, "the worker never took back its own lost run")
		if err := stop(); err != nil {
			t.Fatal(err)
		}
		if n := seen.count(id, "Fetch"); n != 1 {
			t.Errorf("Fetch executed %d times, want 1", n)
		}
	})

	t.Run("a claim whose journal read failed is claimed again by its worker at once, not after its lease", func(t *testing.T) {
		// The connection lost after the claim committed (a server
		// restart): before, the run waited out its lease (30 s by
		// default; TestServerRestart once took 31 s so). The first
		// claims again fail as the journal is still away, then one
		// commits.
		j := &unreadClaim{Journal: open(t)}
		j.claimsDown.Store(3)
		id := newRunID(t)
		e := resume.NewEngine(j, resume.WithOwner("unread"), resume.WithLease(time.Minute))
		if _, err := e.Enqueue(ctx, id, Chain, Plan{Loop: 1}); err != nil {
			t.Fatal(err)
		}
		for _, conc := range []int{1, 2} { // ClaimNext, then ClaimBatch
			if conc == 2 {
				id = newRunID(t)
				j.unread.Store(false)
				j.claimsDown.Store(3)
				if _, err := e.Enqueue(ctx, id, Chain, Plan{Loop: 1}); err != nil {
					t.Fatal(err)
				}
			}
			began := time.Now()
			stop := startWorker(ctx, e, resume.WorkerOptions{Concurrency: conc, PollInterval: 5 * time.Millisecond})
			waitSucceeded(t, j, id, 20*time.Second, fmt.Sprintf("concurrency %d: the run whose claim's journal read failed is not done (its lease is a minute)", conc))
			if err := stop(); err != nil {
				t.Fatal(err)
			}
			if !j.unread.Load() || j.claimsDown.Load() != 0 {
				t.Fatalf("concurrency %d: the fault did not happen (read failed %v, %d claims still to fail)", conc, j.unread.Load(), j.claimsDown.Load())
			}
			if n := seen.count(id, "Fetch"); n != 1 {
				t.Errorf("concurrency %d: Fetch executed %d times, want 1", conc, n)
			}
			t.Logf("concurrency %d: done %v after the worker started", conc, time.Since(began).Round(time.Millisecond))
		}
	})

	t.Run("a dead owner's run taken over, its journal unread, is claimed again at once", func(t *testing.T) {
		if h.OpenAgain == nil {
			t.Skip("the harness has no OpenAgain")
		}
		j := &unreadClaim{Journal: open(t)}
		j.unread.Store(true) // ClaimNext answers whole
		j.unreadTakeOver.Store(true)
		id := newRunID(t)
		e := resume.NewEngine(j, resume.WithOwner("heir"), resume.WithLease(time.Minute))
		if _, err := e.Enqueue(ctx, id, Chain, Plan{Loop: 1}); err != nil {
			t.Fatal(err)
		}
		other := openAgain(t, h)
		if err := other.(journal.Liveness).KeepAlive(ctx, "dead-owner"); err != nil {
			t.Fatal(err)
		}
		if _, _, err := other.Claim(ctx, journal.ClaimRequest{RunID: id, Owner: "dead-owner", Lease: time.Hour}); err != nil {
			t.Fatal(err)
		}
		other.Close()
		waitGone(t, j.Journal, "dead-owner")
		stop := startWorker(ctx, e, resume.WorkerOptions{PollInterval: 5 * time.Millisecond})
		waitSucceeded(t, j, id, 20*time.Second, "the dead owner's run, taken over unread, is not done (the heir's lease is a minute)")
		if err := stop(); err != nil {
			t.Fatal(err)
		}
		if j.unreadTakeOver.Load() {
			t.Fatal("the takeover's journal read never failed")
		}
		if n := seen.count(id, "Fetch"); n != 1 {
			t.Errorf("Fetch executed %d times, want 1", n)
		}
	})

	t.Run("an owner that never held a liveness signal has its lease waited out", func(t *testing.T) {
		j := open(t)
		e := resume.NewEngine(j)
		id := newRunID(t)
		if _, err := e.Enqueue(ctx, id, Chain, Plan{Loop: 1}); err != nil {
			t.Fatal(err)
		}
		// A worker of an older version, or on a journal without liveness.
		if _, _, err := j.Claim(ctx, journal.ClaimRequest{RunID: id, Owner: "older-worker", Lease: time.Hour}); err != nil {
			t.Fatal(err)
		}
		if l, ok := j.(journal.Liveness); ok {
			if gone, err := l.OwnerGone(ctx, "older-worker"); err != nil || gone {
				t.Errorf("OwnerGone(never registered) = %v, %v; want false", gone, err)
			}
		}
		if _, err := e.Resume(ctx, id); !errors.Is(err, journal.ErrRunBusy) {
			t.Errorf("resuming: %v, want ErrRunBusy", err)
		}
		if n := seen.count(id, "Fetch"); n != 0 {
			t.Errorf("Fetch executed %d times", n)
		}
	})

	t.Run("a refused claim reads one row and no step", func(t *testing.T) {
		j := open(t)
		e := resume.NewEngine(j)
		id := newRunID(t)
		if _, err := e.Start(ctx, id, Chain, Plan{Loop: 50}); err != nil {
			t.Fatal(err)
		}
		before := j.Counters()
		run, steps, err := j.Claim(ctx, journal.ClaimRequest{RunID: id, Owner: "late", Lease: time.Minute, TakeOverDead: true})
		if !errors.Is(err, journal.ErrRunBusy) || run.Status != journal.StatusSucceeded {
			t.Fatalf("claiming a finished run: %v, %v; want ErrRunBusy", run.Status, err)
		}
		if steps != nil {
			t.Errorf("a refused claim returned %d steps, want none read", len(steps))
		}
		if got := j.Counters().Reads - before.Reads; got != 1 {
			t.Errorf("a refused claim made %d reads, want 1", got)
		}
		before = j.Counters()
		if res, err := e.Start(ctx, id, Chain, Plan{Loop: 50}); err != nil || res.Status != journal.StatusSucceeded {
			t.Fatalf("re-attaching: %v, %v", res.Status, err)
		}
		if got := j.Counters().Reads - before.Reads; got > 1 {
			t.Errorf("re-attaching to a finished run made %d reads, want at most 1 (its row)", got)
		}
	})

	t.Run("the crash path takes the run over at once with one read of its journal", func(t *testing.T) {
		if h.OpenAgain == nil {
			t.Skip("the harness has no OpenAgain")
		}
		j := open(t)
		id := newRunID(t)
		other := openAgain(t, h)
		dying := resume.NewEngine(other, resume.WithLease(time.Hour), resume.WithOwner("dying-"+id),
			resume.WithFault(resume.Fault{Step: "Loop#10", Point: resume.FaultBefore}),
			resume.WithFaultAction(func() { panic(crash{}) }))
		func() {
			defer func() {
				if r := recover(); r == nil {
					t.Fatal("the dying engine did not die")
				}
			}()
			dying.Start(ctx, id, Chain, Plan{Loop: 20})
		}()
		other.Close() // its process ends
		waitGone(t, j, "dying-"+id)
		e := resume.NewEngine(j, resume.WithLease(time.Hour))
		before := j.Counters()
		began := time.Now()
		res, err := e.Resume(ctx, id)
		if err != nil || res.Status != journal.StatusSucceeded {
			t.Fatalf("resuming after the crash: %v, %v", res.Status, err)
		}
		if d := time.Since(began); d > 10*time.Second {
			t.Errorf("took %v: the lease was waited out", d)
		}
		if got := j.Counters().Reads - before.Reads; got != 1 {
			t.Errorf("the takeover made %d reads, want 1 (the claim with the journal)", got)
		}
		if n := seen.count(id, "Loop"); n != 20 {
			t.Errorf("Loop executed %d times, want 20", n)
		}
	})

	t.Run("a claim that waited longer than the lease still holds a live lease", func(t *testing.T) {
		j := open(t)
		const lease = 300 * time.Millisecond
		slow := &slowJournal{Journal: j, before: 2 * lease, claimed: make(chan struct{})}
		e := resume.NewEngine(slow, resume.WithLease(lease))
		id := newRunID(t)
		if _, err := e.Enqueue(ctx, id, Chain, Plan{Loop: 3, SlowLoop: 50 * time.Millisecond}); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() {
			_, err := e.Resume(ctx, id)
			done <- err
		}()
		var thefts atomic.Int64
		<-slow.claimed // from here on the run is held
		for running := true; running; {
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("resume: %v", err)
				}
				running = false
			case <-time.After(10 * time.Millisecond):
				if _, _, err := j.ClaimNext(ctx, journal.ClaimNextRequest{Owner: "thief", Lease: time.Hour, Workflows: []string{chainDef.QualifiedName()}}); err == nil {
					thefts.Add(1)
				}
			}
		}
		if n := thefts.Load(); n != 0 {
			t.Errorf("another worker claimed the run %d times while it executed", n)
		}
		if n := seen.count(id, "Loop"); n != 3 {
			t.Errorf("Loop executed %d times, want 3", n)
		}
	})

	t.Run("a step never starts on a lease about to expire", func(t *testing.T) {
		const lease = 300 * time.Millisecond
		for _, stolen := range []bool{false, true} {
			t.Run(fmt.Sprintf("taken meanwhile=%v", stolen), func(t *testing.T) {
				j := open(t)
				// The claim's answer arrives after the lease expired (a
				// slow network, a paused process); meanwhile another
				// worker may claim the run.
				slow := &slowJournal{Journal: j, after: lease + 100*time.Millisecond, steal: stolen}
				e := resume.NewEngine(slow, resume.WithLease(lease))
				id := newRunID(t)
				if _, err := e.Enqueue(ctx, id, Chain, Plan{Loop: 1}); err != nil {
					t.Fatal(err)
				}
				res, err := e.Resume(ctx, id)
				if stolen {
					if !errors.Is(err, journal.ErrLeaseLost) {
						t.Errorf("resume of a run taken while its claim answered: %v, want ErrLeaseLost", err)
					}
					if n := seen.count(id, "Fetch"); n != 0 {
						t.Errorf("Fetch executed %d times on a lease another worker held", n)
					}
					return
				}
				if err != nil || res.Status != journal.StatusSucceeded {
					t.Fatalf("resume: %v, %v; want the lease renewed, then the run", res.Status, err)
				}
				if n := seen.count(id, "Fetch"); n != 1 {
					t.Errorf("Fetch executed %d times, want 1", n)
				}
			})
		}
	})
}

// deadOwner makes run id held for an hour by an owner whose process
// ended: another journal of j's database holds the owner's liveness
// signal, claims the run, and is closed; j sees the owner gone.
func deadOwner(t *testing.T, h Harness, j journal.Journal, id string) string {
	t.Helper()
	ctx := context.Background()
	other := openAgain(t, h)
	owner := "dead-" + id
	if err := other.(journal.Liveness).KeepAlive(ctx, owner); err != nil {
		t.Fatal(err)
	}
	if _, _, err := other.Claim(ctx, journal.ClaimRequest{RunID: id, Owner: owner, Lease: time.Hour}); err != nil {
		t.Fatal(err)
	}
	other.Close()
	waitGone(t, j, owner)
	return owner
}

// waitGone waits until j sees owner as gone: a server ends a closed
// session a moment after its client left (as it does for a killed one).
func waitGone(tb testing.TB, j journal.Journal, owner string) {
	tb.Helper()
	for end := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		gone, err := j.(journal.Liveness).OwnerGone(context.Background(), owner)
		if err != nil {
			tb.Fatal(err)
		}
		if gone {
			return
		}
		if time.Now().After(end) {
			tb.Fatalf("owner %s is still alive 10s after its journal closed", owner)
		}
	}
}

func openAgain(t *testing.T, h Harness) journal.Journal {
	t.Helper()
	j := h.OpenAgain(t)
	t.Cleanup(func() { j.Close() })
	if _, ok := j.(journal.Liveness); !ok {
		t.Fatalf("%T does not implement journal.Liveness", j)
	}
	return j
}

// slowJournal delays its claims: before them, as a claim that waits for
// the database's lock does, or after them, as an answer that arrives late
// does (and, with steal, another worker claims the run meanwhile).
type slowJournal struct {
	journal.Journal
	before, after time.Duration
	steal         bool
	claimed       chan struct{} // if not nil, closed once the claim returned
}

func (s *slowJournal) Claim(ctx context.Context, c journal.ClaimRequest) (journal.RunRecord, []journal.StepRecord, error) {
	time.Sleep(s.before)
	r, steps, err := s.Journal.Claim(ctx, c)
	if s.claimed != nil {
		close(s.claimed)
	}
	time.Sleep(s.after)
	if s.steal && err == nil {
		if _, _, err := s.Journal.Claim(ctx, journal.ClaimRequest{RunID: c.RunID, Owner: "thief", Lease: time.Hour}); err != nil {
			return r, steps, fmt.Errorf("the thief could not claim the expired lease: %w", err)
		}
	}
	return r, steps, err
}

// waitSucceeded waits up to within for run id to succeed, and fails t
// with what and the run as it stands otherwise.
func waitSucceeded(t *testing.T, j journal.Journal, id string, within time.Duration, what string) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		r, _, err := j.LoadRun(context.Background(), id)
		if err == nil && r.Status == journal.StatusSucceeded {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s after %v: %+v, %v", what, within, r, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// unreadClaim is a journal whose first claim of a worker commits but
// does not read the run's journal (the connection lost after the
// claim), whose next claimsDown claims by run id fail without reaching
// it, and, while unreadTakeOver is set, whose first takeover of a dead
// owner's run commits unread.
type unreadClaim struct {
	journal.Journal
	unread         atomic.Bool
	claimsDown     atomic.Int32
	unreadTakeOver atomic.Bool
}

func (u *unreadClaim) Unwrap() journal.Journal { return u.Journal }

var errConnLost = errors.New("unexpected EOF: the connection was lost")

func (u *unreadClaim) ClaimNext(ctx context.Context, c journal.ClaimNextRequest) (journal.RunRecord, []journal.StepRecord, error) {
	r, steps, err := u.Journal.ClaimNext(ctx, c)
	if err == nil && u.unread.CompareAndSwap(false, true) {
		return r, nil, fmt.Errorf("run %s: read journal: %w", r.RunID, errConnLost)
	}
	return r, steps, err
}

func (u *unreadClaim) ClaimBatch(ctx context.Context, c journal.ClaimNextRequest, max int) ([]journal.ClaimedRun, error) {
	bc, ok := u.Journal.(journal.BatchClaimer)
	if !ok {
		return journal.ClaimedOne(u.ClaimNext(ctx, c))
	}
	runs, err := bc.ClaimBatch(ctx, c, max)
	if len(runs) > 0 && runs[0].Err == nil && u.unread.CompareAndSwap(false, true) {
		runs[0].Steps, runs[0].Err = nil, fmt.Errorf("run %s: read journal: %w", runs[0].Run.RunID, errConnLost)
	}
	return runs, err
}

func (u *unreadClaim) Claim(ctx context.Context, c journal.ClaimRequest) (journal.RunRecord, []journal.StepRecord, error) {
	if u.claimsDown.Load() > 0 {
		u.claimsDown.Add(-1)
		return journal.RunRecord{}, nil, fmt.Errorf("run %s: claim: %w", c.RunID, errConnLost)
	}
	r, steps, err := u.Journal.Claim(ctx, c)
	if err == nil && c.TakeOverDead && u.unreadTakeOver.CompareAndSwap(true, false) {
		return r, nil, fmt.Errorf("run %s: read journal: %w", r.RunID, errConnLost)
	}
	return r, steps, err
}
