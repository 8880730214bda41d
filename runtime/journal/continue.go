package journal

import "context"

// Continuer is an optional interface of a [Journal] that ends a run and
// starts the next run of the same workflow in one commit: continue-as-new
// (resume.ContinueAsNew), so that a poller or an entity that runs for ever
// keeps a bounded journal per run. A journal that does not implement it
// cannot continue runs: the engine fails a run whose body asks to.
type Continuer interface {
	// ContinueRun, fenced by lease l, records the end of run l.RunID as
	// succeeded with r.Output and its ContinuedAs set to next.RunID,
	// releases its lease, and creates run next.RunID (next.Workflow,
	// next.Version, next.Input, next.Deadline as given: the engine reads
	// it off the journal's clock) pending, unleased, with ContinuedFrom
	// set to l.RunID, its CreatedAt the journal's clock, and the
	// CancelRequested of the old run (a chain asked to stop stops); a
	// start key whose last run was l.RunID ([KeyedStarter]) names
	// next.RunID from then on, so that a singleton's chain holds its key.
	// All of it happens in one commit, or none does: a lost lease is
	// refused with ErrLeaseLost, and a next.RunID that exists already
	// with ErrRunConflict, writing nothing. It returns the next run as
	// stored.
	ContinueRun(ctx context.Context, l Lease, r RunRecord, next RunRecord) (RunRecord, error)
}
