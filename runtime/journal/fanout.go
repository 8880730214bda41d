package journal

import "context"

// WaitChildren is what a run that fanned out child runs (resume.Map)
// waits for: every child run it started (parent_run_id) to be done, that
// is, none pending, running or waiting. WakeAt is a due time the run is
// woken at all the same, in case the wake-up of the last child was lost.
const WaitChildren = "children"

// FanOut is what a journal offers for a fan-out (resume.Map): child runs
// that any worker may claim, and a parent that waits for all of them
// without holding a worker. A journal that does not implement it runs a
// fan-out's children one after another, inside the parent.
type FanOut interface {
	// Detach makes child run runID, created waiting to start
	// ([WaitStart]) by its parent, pending and claimable by ClaimNext like
	// a run of its own (parent_run_id stays set: cancelling the parent
	// cancels it, and the parent receives its outcome). It is idempotent;
	// a run already detached, or that started, is left as it is.
	Detach(ctx context.Context, runID string) error
	// WakeParent makes run parentID pending if it waits for its children
	// ([WaitChildren]) and none of them is pending, running or waiting any
	// more, and then its ancestors that wait for it ([WaitChild]). A
	// worker calls it after a child run's entry ended.
	WakeParent(ctx context.Context, parentID string) error
	// Detached returns those of runIDs that are detached child runs, so
	// that a worker takes over the ones a dead process held, as it does
	// runs of their own, rather than leave them to their parent.
	Detached(ctx context.Context, runIDs []string) (map[string]bool, error)
}
