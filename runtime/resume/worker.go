package resume

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/resumegen/resumegen/runtime/journal"
)

// WorkerOptions tunes [Engine.Work].
type WorkerOptions struct {
	// Concurrency is how many runs the worker executes at once (default 1).
	Concurrency int
	// PollInterval is how long an idle worker waits before looking for runs
	// again (default 1s). With a journal that signals new work
	// ([journal.WorkNotifier]: the PostgreSQL journal does) a worker wakes as soon
	// as a run becomes claimable, and the interval only bounds how late it
	// notices runs whose lease expired.
	PollInterval time.Duration
	// ShutdownGrace is how long, once ctx is done, steps that are executing
	// may take to finish before their context is cancelled (default 30s).
	ShutdownGrace time.Duration
}

// Work claims runs of the workflows registered in this program, pending or
// abandoned (their lease expired, or, checked when the worker starts, their
// owner's process ended: see [journal.Liveness]), and executes up to opts.Concurrency of
// them at once, until ctx is done. Any number of workers, in any number of
// processes sharing the journal, may work at once; a run is executed by one
// of them at a time, and every journal write is fenced by its lease. Work
// first stores the manifest of every registered workflow
// ([Engine.SaveManifests]), so operators can see the new version's steps as
// soon as a worker running it starts.
//
// When ctx is done (for instance on SIGTERM, with signal.NotifyContext) the
// worker stops claiming; runs stop before their next step; steps already
// executing may finish for up to opts.ShutdownGrace, after which their
// context is cancelled. Every run still held is then released, pending, for
// another worker to resume. Work returns nil after a clean drain,
// including when ctx is done before it has claimed anything.
func (e *Engine) Work(ctx context.Context, opts WorkerOptions) error {
	if opts.Concurrency < 1 {
		opts.Concurrency = 1
	}
	if opts.PollInterval <= 0 {
		opts.PollInterval = time.Second
	}
	if opts.ShutdownGrace <= 0 {
		opts.ShutdownGrace = 30 * time.Second
	}
	versions := e.runnableVersions()
	if len(versions) == 0 {
		return errors.New("resume: no workflow is registered in this program: nothing to work on")
	}
	older := e.olderVersions(versions)
	workflows := workflowsOf(versions)
	queues, queuer, err := e.checkQueues()
	if err != nil {
		return fmt.Errorf("resume: worker: %w", err)
	}
	if err := e.retryStart(ctx, "save the manifests", e.SaveManifests); err != nil {
		if ctx.Err() != nil {
			// Stopped while starting (a SIGTERM right after launch): nothing
			// was claimed, so this is a clean drain, not a failure.
			return nil
		}
		return fmt.Errorf("resume: worker: %w", err)
	}
	// Read the journal's clock now: a host whose clock is wrong is said
	// so at once, not at its first sleep.
	if _, _, err := e.journalNow(ctx); err != nil && ctx.Err() == nil {
		e.logger.Warn("reading the journal's clock failed", "err", err)
	}
	var stopAdvertising func()
	err = e.retryStart(ctx, "advertise", func(ctx context.Context) (err error) {
		stopAdvertising, err = e.advertise(ctx, versions)
		return err
	})
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("resume: worker: %w", err)
	}
	defer stopAdvertising()
	if queuer != nil {
		err = e.retryStart(ctx, "configure queues", func(ctx context.Context) (err error) {
			queues, err = e.storeQueues(ctx, queuer, queues)
			return err
		})
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("resume: worker: %w", err)
		}
	}
	if len(e.retention.policies) > 0 {
		// Retention (WithRetention): purged beside the claims, stopped
		// with them.
		purgeCtx, stopPurging := context.WithCancel(ctx)
		purged := make(chan struct{})
		go func() { defer close(purged); e.purgeLoop(purgeCtx) }()
		defer func() { stopPurging(); <-purged }()
	}

	// Runs held by a process that ended (typically this worker's previous
	// incarnation, restarted after a crash) are taken over first: their
	// lease need not be waited out.
	orphans, err := e.deadOwnerRuns(ctx, versions)
	if err != nil && ctx.Err() == nil {
		e.logger.Warn("looking for runs of dead workers failed", "err", err)
	}

	notifier, _ := e.journal.(journal.WorkNotifier)
	var notifyFailed bool // logged once, not at every poll

	slots := make(chan struct{}, opts.Concurrency)
	drain := make(chan struct{})
	// Runs outlive ctx by the grace period: they get their own context.
	runCtx, cancelRuns := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelRuns()
	var running sync.WaitGroup
	// freed wakes an idle claim loop when a run of this worker ends: a
	// queue at its limit has a slot again, which no notification says.
	freed := make(chan struct{}, 1)

	batcher, _ := e.journal.(journal.BatchClaimer) // not Find: a decorator that does not pass it through hides it
	// release gives back n slots taken for runs that were not claimed.
	release := func(n int) {
		for range n {
			<-slots
		}
	}

claiming:
	for {
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
			break claiming
		}
		// Every slot free now is asked for in one claim: slots freed
		// while a claim was under way make the next one a batch, so
		// that claims keep up with runs that finish faster than one
		// claim's round trip.
		free := 1
	grab:
		for free < opts.Concurrency {
			select {
			case slots <- struct{}{}:
				free++
			default:
				break grab
			}
		}
		var claimed []journal.ClaimedRun
		var err error
		var wake <-chan struct{} // nil: poll only
		if err := e.keepAlive(ctx); err != nil {
			// Holding a run without the liveness signal would let other
			// workers take this one for dead: claim nothing for now.
			release(free)
			if ctx.Err() != nil {
				break claiming
			}
			e.logger.Warn("claiming paused", "err", err)
			if waitForWork(ctx, nil, nil, opts.PollInterval) != nil {
				break claiming
			}
			continue
		}
		sent := time.Now()
		if len(orphans) > 0 {
			release(free - 1) // one at a time, by run id
			free = 1
			o := orphans[0]
			orphans = orphans[1:]
			// The claim checks the owner's liveness again, atomically.
			run, steps, err := e.journal.Claim(ctx, journal.ClaimRequest{RunID: o.RunID, Owner: e.owner, Lease: e.lease, TakeOverDead: true})
			if err != nil && run.RunID != "" && !errors.Is(err, ErrRunBusy) && !errors.Is(err, journal.ErrRunNotFound) {
				// Claimed, its journal unread: claimed again below.
				claimed, err = []journal.ClaimedRun{{Run: run, Steps: steps, Err: err}}, nil
			}
			if err != nil {
				// Another worker took it first (ErrRunBusy), or the journal
				// failed: ClaimNext finds it later if it is still claimable.
				release(1)
				if ctx.Err() != nil {
					break claiming
				}
				if !errors.Is(err, ErrRunBusy) {
					e.logger.Warn("taking over a dead worker's run failed", "run", o.RunID, "err", err)
				}
				continue
			}
			if claimed == nil {
				claimed = []journal.ClaimedRun{{Run: run, Steps: steps}}
			}
		} else {
			// Subscribe before looking, so that a run made claimable
			// after the look still wakes the worker.
			if notifier != nil {
				var nerr error
				if wake, nerr = notifier.NotifyWork(ctx); nerr != nil && !notifyFailed && ctx.Err() == nil {
					if errors.Is(nerr, journal.ErrNoNotify) {
						e.logger.Info("the journal sends no work notifications; polling", "every", opts.PollInterval, "why", nerr.Error())
					} else {
						e.logger.Warn("work notifications unavailable; polling", "every", opts.PollInterval, "err", nerr)
					}
				}
				notifyFailed = nerr != nil
			}
			req := journal.ClaimNextRequest{
				Owner: e.owner, Lease: e.lease, Workflows: workflows, Holding: e.holding(),
				Versions: versions, Older: older, AdvertisedWithin: 3 * e.lease, Queues: queues,
			}
			if batcher != nil && free > 1 {
				claimed, err = batcher.ClaimBatch(ctx, req, free)
			} else {
				var run journal.RunRecord
				var steps []journal.StepRecord
				run, steps, err = e.journal.ClaimNext(ctx, req)
				if err == nil || run.RunID != "" && !errors.Is(err, journal.ErrNoRunReady) {
					// A run returned with an error is claimed all the
					// same (journal.ClaimedRun.Err).
					claimed, err = []journal.ClaimedRun{{Run: run, Steps: steps, Err: err}}, nil
				}
			}
		}
		if err != nil {
			release(free)
			if ctx.Err() != nil {
				break claiming
			}
			idle := opts.PollInterval
			if !errors.Is(err, journal.ErrNoRunReady) {
				e.logger.Warn("claim next run failed", "err", err)
			} else {
				idle = e.idleWait(ctx, workflows, idle)
			}
			var slotFreed <-chan struct{} // nil: no queue, no wake
			if len(queues) > 0 {
				slotFreed = freed
			}
			if waitForWork(ctx, wake, slotFreed, idle) != nil {
				break claiming
			}
			continue
		}
		release(free - len(claimed))
		for _, c := range claimed {
			if c.Err != nil {
				e.logger.Warn("claim next run failed", "run", c.Run.RunID, "err", c.Err)
				if errors.Is(c.Err, ErrTampered) {
					// Its rows do not open, and would not the next time:
					// its lease lapses (see journal.ClaimNextRequest.Holding).
					release(1)
					continue
				}
			}
			run, steps := c.Run, c.Steps
			run.LeaseUntil = heldUntil(sent, e.lease)
			var unhold func()
			if c.Err == nil {
				unhold = e.hold(run.RunID) // from the claim on, not from the entry
			}
			running.Add(1)
			go func() {
				defer running.Done()
				defer func() {
					if unhold != nil {
						unhold()
					}
				}()
				defer func() {
					<-slots
					select {
					case freed <- struct{}{}:
					default:
					}
				}()
				if c.Err != nil {
					var ok bool
					if run, steps, ok = e.retake(runCtx, drain, run); !ok {
						return
					}
					unhold = e.hold(run.RunID)
				}
				defer func() {
					// The engine recovers the run's panics; one of its own must
					// not end the process either. The run's lease expires, and
					// it is taken over.
					if v := recover(); v != nil {
						p := e.recovered(v)
						e.logger.Error("run stopped by a panic", "run", run.RunID, "panic", fmt.Sprint(p.Value), "stack", p.Stack)
					}
				}()
				if _, err := e.runClaimed(runCtx, run, steps, drain); err != nil && !errors.Is(err, errDraining) {
					var runErr *RunError
					if !errors.As(err, &runErr) {
						e.logger.Warn("run stopped", "run", run.RunID, "err", err)
					}
				}
			}()
		}
	}

	close(drain)
	finished := make(chan struct{})
	go func() {
		running.Wait()
		close(finished)
	}()
	select {
	case <-finished:
	case <-time.After(opts.ShutdownGrace):
		cancelRuns()
		<-finished
	}
	return nil
}

// waitForWork waits for wake to close, or for d, or for ctx to be done.
func waitForWork(ctx context.Context, wake, freed <-chan struct{}, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-wake:
		return nil
	case <-freed:
		return nil
	case <-t.C:
		return nil
	}
}

// deadOwnerRuns lists the running runs pinned to versions whose lease
// owner's process ended, by the journal's liveness signal. A run of
// another version is left to ClaimNext, which knows whether a live process
// has its version.
func (e *Engine) deadOwnerRuns(ctx context.Context, versions []journal.WorkflowVersion) ([]journal.RunRecord, error) {
	if _, ok := livenessOf(e.journal); !ok {
		return nil, nil
	}
	runs, err := e.journal.ListRuns(ctx, journal.RunFilter{Statuses: []Status{StatusRunning}})
	if err != nil {
		return nil, err
	}
	known := make(map[journal.WorkflowVersion]bool, len(versions))
	for _, v := range versions {
		known[v] = true
	}
	detached, err := e.detachedOf(ctx, runs)
	if err != nil {
		return nil, err
	}
	var dead []journal.RunRecord
	gone := map[string]bool{} // by owner: one check each
	for _, r := range runs {
		if !known[journal.WorkflowVersion{Workflow: r.Workflow, Version: r.Version}] || r.Parent != "" && !detached[r.RunID] {
			continue // a child run is left to its parent, which resumes it
		}
		g, checked := gone[r.LeaseOwner]
		if !checked {
			g = e.ownerGone(ctx, r.LeaseOwner)
			gone[r.LeaseOwner] = g
		}
		if g {
			dead = append(dead, r)
		}
	}
	return dead, nil
}

// runnableVersions lists the workflow versions this engine can execute,
// current and old, each under the workflow's identity and its aliases, and
// logs each method workflow it was not given a receiver for: its runs are
// left to workers that were.
func (e *Engine) runnableVersions() []journal.WorkflowVersion {
	var out []journal.WorkflowVersion
	for _, def := range registered() {
		if err := e.canRun(def); err != nil {
			e.logger.Warn("not working on a workflow", "version", def.Version, "why", err.Error())
			continue
		}
		for _, name := range append([]string{def.QualifiedName()}, def.Aliases...) {
			out = append(out, journal.WorkflowVersion{Workflow: name, Version: def.Version})
		}
	}
	slices.SortFunc(out, func(a, b journal.WorkflowVersion) int {
		return cmp.Or(cmp.Compare(a.Workflow, b.Workflow), cmp.Compare(a.Version, b.Version))
	})
	return out
}

// olderVersions lists the versions that the versions this engine can
// execute descend from (their Lineage), under each identity and alias,
// leaving out those it executes itself: a worker may claim their runs
// when no live process advertises them (see
// journal.ClaimNextRequest.Older).
func (e *Engine) olderVersions(runnable []journal.WorkflowVersion) []journal.WorkflowVersion {
	own := make(map[journal.WorkflowVersion]bool, len(runnable))
	for _, v := range runnable {
		own[v] = true
	}
	seen := map[journal.WorkflowVersion]bool{}
	var out []journal.WorkflowVersion
	for _, def := range registered() {
		for _, name := range append([]string{def.QualifiedName()}, def.Aliases...) {
			if !own[journal.WorkflowVersion{Workflow: name, Version: def.Version}] {
				continue // a workflow this engine does not work on
			}
			for _, old := range def.Lineage {
				v := journal.WorkflowVersion{Workflow: name, Version: old}
				if !own[v] && !seen[v] {
					seen[v] = true
					out = append(out, v)
				}
			}
		}
	}
	slices.SortFunc(out, func(a, b journal.WorkflowVersion) int {
		return cmp.Or(cmp.Compare(a.Workflow, b.Workflow), cmp.Compare(a.Version, b.Version))
	})
	return out
}

// workflowsOf lists the workflows of versions, once each.
func workflowsOf(versions []journal.WorkflowVersion) []string {
	var out []string
	for _, v := range versions {
		if !slices.Contains(out, v.Workflow) {
			out = append(out, v.Workflow)
		}
	}
	return out
}

// retryStart runs a write a worker makes before it claims anything, again
// after a failure (a database restarting while the worker starts) with a
// growing pause, for up to the engine's write timeout: a worker started
// during a short outage waits for the journal instead of exiting.
func (e *Engine) retryStart(ctx context.Context, what string, write func(context.Context) error) error {
	deadline := time.Now().Add(e.writeTimeout)
	pause := 50 * time.Millisecond
	for {
		err := write(ctx)
		if err == nil || ctx.Err() != nil || time.Now().Add(pause).After(deadline) {
			return err
		}
		e.logger.Warn("worker start: journal write failed; retrying", "write", what, "err", err)
		select {
		case <-ctx.Done():
			return err
		case <-time.After(pause):
		}
		pause = min(2*pause, 2*time.Second)
	}
}

// advertise tells the journal which versions this worker executes, then
// again every third of a lease while ctx lasts, so that other workers leave
// runs pinned to them to this one (see journal.ClaimNextRequest.Versions).
// stop ends the refreshes and withdraws the advertisement.
func (e *Engine) advertise(ctx context.Context, versions []journal.WorkflowVersion) (stop func(), err error) {
	if err := e.journal.Advertise(ctx, e.owner, versions); err != nil {
		return nil, fmt.Errorf("advertise the versions this worker executes: %w", err)
	}
	actx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(e.lease / 3)
		defer t.Stop()
		for {
			select {
			case <-actx.Done():
				return
			case <-t.C:
				if err := e.journal.Advertise(actx, e.owner, versions); err != nil && actx.Err() == nil {
					e.logger.Warn("advertising the versions this worker executes failed", "err", err)
				}
			}
		}
	}()
	return func() {
		cancel()
		<-done
		wctx, wcancel := context.WithTimeout(context.WithoutCancel(ctx), e.writeTimeout)
		defer wcancel()
		if err := e.journal.Advertise(wctx, e.owner, nil); err != nil {
			e.logger.Warn("withdrawing the versions this worker executes failed", "err", err)
		}
	}, nil
}

// retake claims again run, which this worker claimed but whose journal
// the claim could not read (the connection lost after the claim
// committed): the run is this owner's and nobody executes it, so it is
// taken from this owner's own lease (journal.ClaimRequest.Abandoned)
// rather than left to wait the lease out. It asks until a claim
// commits, the lease bound run.LeaseUntil passes or the worker drains;
// a claim refused (the lease lapsed and another worker took the run) or
// one that commits without its journal again leaves the run to its
// lease, as before, and ok is false. The retaken run's lease bound is
// counted from its own claim.
func (e *Engine) retake(ctx context.Context, drain <-chan struct{}, run journal.RunRecord) (r journal.RunRecord, steps []journal.StepRecord, ok bool) {
	wait := 10 * time.Millisecond
	for {
		select {
		case <-drain:
			return r, nil, false
		default:
		}
		sent := time.Now()
		if ctx.Err() != nil || !sent.Before(run.LeaseUntil) {
			return r, nil, false
		}
		var err error
		r, steps, err = e.journal.Claim(ctx, journal.ClaimRequest{RunID: run.RunID, Owner: e.owner, Lease: e.lease,
			Abandoned: &journal.Lease{RunID: run.RunID, Owner: e.owner, Epoch: run.Epoch}})
		switch {
		case err == nil:
			r.LeaseUntil = heldUntil(sent, e.lease)
			e.logger.Info("run claimed again after its journal could not be read", "run", run.RunID)
			return r, steps, true
		case errors.Is(err, journal.ErrRunBusy), errors.Is(err, journal.ErrRunNotFound), r.RunID != "":
			e.logger.Warn("claiming a run again after its journal could not be read failed; it waits out its lease", "run", run.RunID, "err", err)
			return r, nil, false
		}
		// Nothing committed (the journal is still unreachable): ask
		// again.
		select {
		case <-ctx.Done():
		case <-drain:
		case <-time.After(wait):
		}
		wait = min(2*wait, time.Second)
	}
}
