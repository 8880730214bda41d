package resume

import (
	"strconv"

	"github.com/resumegen/resumegen/runtime/journal"
)

// What a user of the engine touches from package journal, the contract
// between the engine and a journal: these are the same types, values and
// errors, not copies, so errors.Is and type identity hold across both
// packages. Journal implementers use package journal itself.

// Journal stores runs and their steps durably: what [NewEngine] runs
// workflows on and [Engine.Journal] returns. Programs get one from
// sqlitejournal.Open or pgjournal.Open; see [journal.Journal] for the
// contract an implementation meets.
type Journal = journal.Journal

// Status is the state of a run, as in [Result.Status].
type Status = journal.Status

// Run statuses, as stored in resume_runs.status.
const (
	StatusPending        = journal.StatusPending
	StatusRunning        = journal.StatusRunning
	StatusSucceeded      = journal.StatusSucceeded
	StatusFailed         = journal.StatusFailed
	StatusNeedsAttention = journal.StatusNeedsAttention
	StatusCancelled      = journal.StatusCancelled
	StatusWaiting        = journal.StatusWaiting
)

// Why a run needs attention, as in [Result.AttentionKind]; see
// [journal.AttentionKindStep] and the others for what each means.
const (
	AttentionKindStep    = journal.AttentionKindStep
	AttentionKindVersion = journal.AttentionKindVersion
	AttentionKindResult  = journal.AttentionKindResult
	AttentionKindJournal = journal.AttentionKindJournal
	AttentionKindChild   = journal.AttentionKindChild
)

// Resolution is a person's decision about an in_flight step, for
// [Engine.Resolve].
type Resolution = journal.Resolution

// CancelOptions tunes [Engine.Cancel].
type CancelOptions = journal.CancelOptions

// Errors of the engine's operations that come from the journal; test for
// them with errors.Is.
var (
	ErrRunNotFound    = journal.ErrRunNotFound
	ErrStepNotFound   = journal.ErrStepNotFound
	ErrNotInFlight    = journal.ErrNotInFlight
	ErrRunBusy        = journal.ErrRunBusy
	ErrLeaseLost      = journal.ErrLeaseLost
	ErrRunConflict    = journal.ErrRunConflict
	ErrNotFailed      = journal.ErrNotFailed
	ErrNotVersionStop = journal.ErrNotVersionStop
	ErrRunFinished    = journal.ErrRunFinished
)

// preview quotes b, cut to a length that reads in one line.
func preview(b []byte) string {
	const max = 60
	if len(b) > max {
		return strconv.Quote(string(b[:max])) + "..."
	}
	return strconv.Quote(string(b))
}
