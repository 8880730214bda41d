package journal

import (
	"context"
	"errors"
	"fmt"
	"strconv"
)

// ForkRequest is a fork of a run (see [Forker]): a new run that holds the
// original's journal up to a step and executes from there.
type ForkRequest struct {
	// From is the original run's id; Step the key of the step the fork
	// executes from (the original journaled it).
	From, Step string
	// Run is the new run, as [Journal.CreateRun] takes it: pending, no
	// lease, no parent, pinned to the original's workflow and version.
	Run RunRecord
	// Steps are the rows the new run starts with: the original's settled
	// rows (succeeded, or failed final) journaled before Step, with their
	// RunID set to Run.RunID. A sealed journal (resume.WithCodec) gives
	// them sealed for the new run's id.
	Steps []StepRecord
	// By is who forked (its Actor, Origin and Via; Action and Detail are
	// the journal's): the journal records the fork on both runs with it.
	By ActionRecord
}

// Forker is an optional interface of a [Journal] that forks runs
// (resume.Engine.Fork, resumectl runs fork).
type Forker interface {
	// ForkRun creates f.Run with f.Steps as its journal and records the
	// fork on both runs (resume_actions: [ForkedTo] on f.From,
	// [ForkedFrom] on the new run), in one transaction that holds the
	// original's row locked. A run with f.Run.RunID that exists already
	// is returned as stored, created false, and nothing is written: it is
	// the same fork when its workflow is f.Run's and it was forked from
	// f.From at f.Step, and otherwise the call is refused with
	// [ErrRunConflict]. Of two concurrent forks with one id, one creates
	// the run and the other returns it. An unknown f.From is refused with
	// [ErrRunNotFound].
	ForkRun(ctx context.Context, f ForkRequest) (RunRecord, bool, error)
}

// ActionFork is the action name of a fork in resume_actions, on both runs.
const ActionFork = "fork"

// ForkedTo is the detail of the fork's action on the original run.
func ForkedTo(id, step string) string { return "forked to " + id + " from " + step }

// ForkedFrom is the detail of the fork's action on the new run.
func ForkedFrom(id, step string) string { return "forked from " + id + " at " + step }

// ForkID is the default id of the n-th fork of run id: id~fork<n>.
func ForkID(id string, n int) string { return id + "~fork" + strconv.Itoa(n) }

// ErrForkStep is returned when forking a run from a step it did not
// journal.
var ErrForkStep = errors.New("the run did not journal that step")

// PlanFork returns the rows a fork of run (with its journal steps) from
// step copies for run newID: the settled rows (succeeded, or failed
// final) journaled before step, by seq, their RunID newID. Rows before
// step that are not settled (in flight, waiting, failed with budget left)
// are not copied: the fork executes them. A step the run did not journal
// is refused with [ErrForkStep], naming the run and the step; so is a row
// that cannot be used as stored.
func PlanFork(run RunRecord, steps []StepRecord, step, newID string) ([]StepRecord, error) {
	var at *StepRecord
	for i := range steps {
		if steps[i].StepKey == step {
			at = &steps[i]
		}
	}
	if at == nil {
		return nil, fmt.Errorf("run %s, step %s: fork: %w (runs show %s lists its steps)", run.RunID, step, ErrForkStep, run.RunID)
	}
	var out []StepRecord
	for _, s := range steps {
		if s.Seq >= at.Seq || !(s.Status == StepSucceeded || s.Status == StepFailed && s.Final) {
			continue
		}
		if p := s.Problem(); p != "" {
			return nil, fmt.Errorf("run %s, step %s: fork: its row cannot be copied: %s", run.RunID, s.StepKey, p)
		}
		s.RunID = newID
		out = append(out, s)
	}
	return out, nil
}
