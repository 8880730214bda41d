package resume

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/resumegen/resumegen/runtime/journal"
)

// ForkOptions tunes [Engine.Fork].
type ForkOptions struct {
	// ID is the new run's id. "" picks the original's id followed by
	// "~fork" and the first n from 1 that no run has (see journal.ForkID).
	// A given id is idempotent: forking again with it returns the run the
	// first fork created.
	ID string
	// Input, if set, replaces the run's input: the workflow's arguments as
	// a JSON array, checked as any run's input. The copied steps stay: they
	// replay what they journaled for the original's input.
	Input json.RawMessage
}

// ErrForkStep is returned by [Engine.Fork] for a step the original run did
// not journal.
var ErrForkStep = journal.ErrForkStep

// Fork starts a new run from run runID's journal up to step: the rows the
// original journaled before step (by their order of execution) that are
// settled, succeeded or failed for good, are copied to the new run, which
// replays them, and executes step and what follows as any run. The new
// run is created pending, pinned to the original's version (so that its
// journal replays), and Fork does not execute it: [Engine.Resume] or a
// worker does. The copy, the new run and the fork's record on both runs
// (resume_actions: "forked to ID from STEP" on the original, "forked from
// ID at STEP" on the new run, with who did it when ctx carries a
// journal.WithAction) commit in one transaction; of two concurrent forks
// with one id, one creates the run and both return it.
//
// A step the original did not journal is refused with [ErrForkStep],
// naming the run and the step; so is a version of the workflow this
// program registers the workflow without, and an id used by another run
// ([ErrRunConflict]). On a sealed journal ([WithCodec]) the copied values
// are opened and sealed again for the new run's id.
func (e *Engine) Fork(ctx context.Context, runID, step string, opts ForkOptions) (Result, error) {
	fk, ok := journal.Find[journal.Forker](e.journal)
	if !ok {
		return Result{}, fmt.Errorf("run %s: fork: this journal cannot fork runs (journal.Forker)", runID)
	}
	run, steps, err := e.journal.LoadRun(ctx, runID)
	if err != nil {
		return Result{}, fmt.Errorf("run %s: fork: %w", runID, err)
	}
	if p := run.Problem(); p != "" {
		return Result{}, fmt.Errorf("run %s: fork: the run's row cannot be used as stored: %s", runID, p)
	}
	if _, known := Lookup(run.Workflow); known {
		if _, ok := lookupVersion(run.Workflow, run.Version); !ok {
			return Result{}, fmt.Errorf("run %s: fork: this program does not have version %s of %s, which the fork is pinned to so that its journal replays: fork from a program that has it",
				runID, run.Version, run.Workflow)
		}
	}
	input := run.Input
	if opts.Input != nil {
		if input, err = checkForkInput(runID, opts.Input); err != nil {
			return Result{}, err
		}
	}
	id := opts.ID
	if id == "" {
		if id, err = e.freeForkID(ctx, runID); err != nil {
			return Result{}, err
		}
	}
	if err := journal.CheckRunID(id); err != nil {
		return Result{}, fmt.Errorf("run %s: fork: the new run's id: %w", runID, err)
	}
	copied, err := journal.PlanFork(run, steps, step, id)
	if err != nil {
		return Result{}, err
	}
	if journal.IsSealed(input) {
		return Result{}, fmt.Errorf("run %s: fork: its values are sealed (resume.WithCodec): fork it from a program that has the codec's key, which seals the copy for the new run", runID)
	}
	for _, s := range copied {
		if journal.IsSealed(s.Result) || journal.IsSealed(s.ErrorDetail) {
			return Result{}, fmt.Errorf("run %s, step %s: fork: its values are sealed (resume.WithCodec): fork it from a program that has the codec's key", runID, s.StepKey)
		}
	}
	now, _, err := e.journalNow(ctx)
	if err != nil {
		return Result{}, fmt.Errorf("run %s: fork: %w", runID, err)
	}
	by, _ := journal.ActionOf(ctx)
	if by.Via == "" {
		by.Via = "api"
	}
	stored, created, err := fk.ForkRun(ctx, journal.ForkRequest{
		From: runID, Step: step, Steps: copied, By: by,
		Run: journal.RunRecord{RunID: id, Workflow: run.Workflow, Version: run.Version, Status: StatusPending,
			Input: input, CreatedAt: now, UpdatedAt: now, Queue: run.Queue, QueueKey: run.QueueKey, Priority: run.Priority},
	})
	if err != nil {
		return Result{}, fmt.Errorf("run %s, step %s: fork to %s: %w", runID, step, id, err)
	}
	if !created && !bytes.Equal(compactJSON(stored.Input), compactJSON(input)) {
		return resultOf(stored), fmt.Errorf("run %s: fork to %s: %w: the fork exists with other input", runID, id, ErrRunConflict)
	}
	return resultOf(stored), nil
}

// checkForkInput checks a fork's replacement input as a run's: valid JSON
// holding an array of arguments, within the journal's limits.
func checkForkInput(runID string, in json.RawMessage) (json.RawMessage, error) {
	t := bytes.TrimSpace(in)
	if len(t) == 0 || t[0] != '[' || !json.Valid(t) {
		return nil, fmt.Errorf("run %s: fork: the input %s is not a JSON array of the workflow's arguments", runID, preview(in))
	}
	if err := journal.CheckValue("input", t); err != nil {
		return nil, fmt.Errorf("run %s: fork: %w", runID, err)
	}
	return json.RawMessage(t), nil
}

// freeForkID returns the first id runID~fork<n> no run has.
func (e *Engine) freeForkID(ctx context.Context, runID string) (string, error) {
	for n := 1; ; n++ {
		id := journal.ForkID(runID, n)
		_, _, err := e.journal.LoadRun(ctx, id)
		if errors.Is(err, journal.ErrRunNotFound) {
			return id, nil
		}
		if err != nil {
			return "", fmt.Errorf("run %s: fork: is %s free: %w", runID, id, err)
		}
	}
}
