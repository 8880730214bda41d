package journal

import (
	"context"
	"fmt"
	"time"
)

// DefaultPurgeBatch is how many top-level runs one [Purger.Purge] call
// deletes at most when [PurgeRequest.Limit] is zero: one short
// transaction, so that workers writing beside it wait for no more than a
// few milliseconds.
const DefaultPurgeBatch = 200

// PurgeRequest selects finished runs to delete (see [Purger]).
type PurgeRequest struct {
	// Statuses are the statuses purged: any of succeeded, failed,
	// cancelled and needs_attention (a parked run nobody settled). None is
	// an error: a purge says what it deletes.
	Statuses []Status
	// OlderThan: only runs whose last change (their finish, for a finished
	// run) is at least this long ago by the journal's clock. Negative is an
	// error.
	OlderThan time.Duration
	// Workflow, if set, purges only runs of this workflow (qualified
	// name); Except, if set, skips the runs of these workflows (a default
	// policy beside per-workflow ones).
	Workflow string
	Except   []string
	// Limit is how many top-level runs one call deletes at most (with
	// their child runs), in one transaction; 0 is [DefaultPurgeBatch].
	// A dry run ignores it: it counts every run that qualifies now.
	Limit int
	// DryRun counts what would be deleted, and deletes nothing.
	DryRun bool
}

// Check says what makes r unusable, or nil.
func (r PurgeRequest) Check() error {
	if len(r.Statuses) == 0 {
		return fmt.Errorf("purge: no status given (succeeded, failed, cancelled, needs_attention)")
	}
	for _, s := range r.Statuses {
		if !Purgeable(s) {
			return fmt.Errorf("purge: status %q is not purgeable: only succeeded, failed, cancelled and needs_attention runs are (a pending, running or waiting run still executes)", s)
		}
	}
	if r.OlderThan < 0 {
		return fmt.Errorf("purge: negative age %s", r.OlderThan)
	}
	if r.Limit < 0 {
		return fmt.Errorf("purge: negative limit %d", r.Limit)
	}
	return nil
}

// Batch is r.Limit, or [DefaultPurgeBatch] when it is zero.
func (r PurgeRequest) Batch() int {
	if r.Limit > 0 {
		return r.Limit
	}
	return DefaultPurgeBatch
}

// Purgeable reports whether runs in status s may be purged: finished
// ones, and runs parked for a person (needs_attention), whom a policy may
// give up on; never a run that still executes.
func Purgeable(s Status) bool {
	return s.Finished() || s == StatusNeedsAttention
}

// PurgeResult counts what a purge deleted (a dry run: would delete).
type PurgeResult struct {
	// Runs counts the top-level runs; Children the child runs deleted with
	// them.
	Runs, Children int
	// Steps and Signals count the deleted step rows and signals (a dry
	// run leaves them 0).
	Steps, Signals int
}

// Add sums two results.
func (r PurgeResult) Add(o PurgeResult) PurgeResult {
	return PurgeResult{Runs: r.Runs + o.Runs, Children: r.Children + o.Children, Steps: r.Steps + o.Steps, Signals: r.Signals + o.Signals}
}

// Purger is an optional interface of a [Journal] that deletes old runs
// (retention: resume.WithRetention, resumectl runs purge).
//
// Purge deletes, in one short transaction, up to req.Batch() top-level
// runs that qualify, oldest first, each with its child runs (all their
// rows: run, steps, signals); operators' actions (resume_actions) are
// kept, as the audit outlives the run. A run qualifies when:
//
//   - its status is one of req.Statuses and its last change is at least
//     req.OlderThan ago by the journal's clock, and it matches
//     req.Workflow / req.Except;
//   - it is a top-level run (a child run goes with its parent, never
//     alone: a parent that replays or retries needs it), or one whose
//     parent row is gone;
//   - every run below it (a child run's id is its parent's, a slash, its
//     step key) is finished: nothing below it executes or waits for a
//     person any more;
//   - no run of its tree that is failed or needs a person (a retry or a
//     resolution executes it again) holds a signal no await consumed yet;
//   - it is not a schedule's run (NAME@TICK) for the schedule's last tick
//     started or a later one: the schedule row records ticks after their
//     runs are enqueued, and a scheduler that reads the row again starts
//     the ticks after LastTick anew unless their runs exist.
//
// Runs another transaction holds are skipped (PostgreSQL: FOR UPDATE SKIP
// LOCKED), so a purge never waits for a worker, and a worker waits at most
// for one batch (SQLite's single writer). A purged run's id is free
// again: starting it anew executes a new run. Callers loop while a batch
// is full.
type Purger interface {
	Purge(ctx context.Context, req PurgeRequest) (PurgeResult, error)
}
