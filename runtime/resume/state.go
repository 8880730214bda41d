package resume

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"
)

// runState is one entry of one run: the journal read when the run was
// claimed, and what the body executed since. The durable body finds it in
// its context.
type runState struct {
	e       *Engine
	def     *WorkflowDef
	run     RunRecord
	lease   Lease
	journal map[string]StepRecord // by step key, as read at entry

	mu    sync.Mutex
	occur map[string]int  // executions per step name so far
	keyed map[string]bool // Name[key] step keys executed so far
	seq   int64           // highest Seq in the journal
	// stop, once set, makes every later step return it without executing:
	// the run parked, lost its lease or could not write its journal.
	stop error
	// attention is the step key that parked the run, if any.
	attention string
	// drain, when closed, stops the run before its next step.
	drain <-chan struct{}
}

// errDraining stops a run whose worker is shutting down.
var errDraining = errors.New("worker shutting down: run released before its next step")

type stateKey struct{}

func stateFrom(ctx context.Context) *runState {
	st, _ := ctx.Value(stateKey{}).(*runState)
	return st
}

func newRunState(e *Engine, def *WorkflowDef, run RunRecord, steps []StepRecord) *runState {
	st := &runState{
		e:       e,
		def:     def,
		run:     run,
		lease:   Lease{RunID: run.RunID, Owner: run.LeaseOwner, Epoch: run.Epoch},
		journal: make(map[string]StepRecord, len(steps)),
		occur:   map[string]int{},
		keyed:   map[string]bool{},
	}
	for _, s := range steps {
		st.journal[s.StepKey] = s
		st.seq = max(st.seq, s.Seq)
	}
	return st
}

// stopf records why the run cannot go on and returns that error.
func (st *runState) stopf(format string, args ...any) error {
	err := fmt.Errorf(format, args...)
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.stop == nil {
		st.stop = err
	}
	return st.stop
}

func (st *runState) stopped() error {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.stop
}

// nextKey names this execution of the step named name: name[key] for a
// keyed call site, else by occurrence: name, name#2, ... An empty key, or a
// key seen before in this run, is an error.
func (st *runState) nextKey(name string, key stepKey) (string, error) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if key.set {
		if key.value == "" {
			return "", fmt.Errorf("run %s: step %s: its key= value is empty", st.run.RunID, name)
		}
		k := name + "[" + key.value + "]"
		if st.keyed[k] {
			return "", fmt.Errorf("run %s: step %s executed twice: its key= values must differ within a run", st.run.RunID, k)
		}
		st.keyed[k] = true
		return k, nil
	}
	st.occur[name]++
	if n := st.occur[name]; n > 1 {
		return name + "#" + strconv.Itoa(n), nil
	}
	return name, nil
}

func (st *runState) nextSeq() int64 {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.seq++
	return st.seq
}

// step runs one step execution: it replays a succeeded row, or executes body
// under the step's policy and retry budget. replayed reports that raw came
// from the journal.
func (st *runState) step(ctx context.Context, def *StepDef, callKey stepKey, body func(context.Context) (json.RawMessage, error)) (raw json.RawMessage, replayed bool, err error) {
	if err := st.stopped(); err != nil {
		return nil, false, err
	}
	select {
	case <-st.drain:
		return nil, false, st.stopf("run %s: %w", st.run.RunID, errDraining)
	default:
	}
	key, err := st.nextKey(def.Name, callKey)
	if err != nil {
		return nil, false, Permanent(err)
	}
	prev, seen := st.journal[key]
	if seen {
		switch prev.Status {
		case StepSucceeded:
			return prev.Result, true, nil
		case StepInFlight:
			// The engine parks such runs before the body starts; meeting
			// one here means the row appeared since, so stop all the same.
			return nil, false, st.park(key, prev)
		}
	}
	if err := ctx.Err(); err != nil {
		// Shutting down: start nothing new.
		return nil, false, err
	}
	if prev.Attempt-prev.AttemptBase >= def.attempts() {
		// The budget was spent before a crash: the step failed for good.
		return nil, false, fmt.Errorf("run %s, step %s: failed after %d attempts: %s", st.run.RunID, key, prev.Attempt-prev.AttemptBase, prev.Error)
	}
	st.e.fault(key, def.Name, FaultBefore)
	rec := StepRecord{
		RunID: st.run.RunID, StepKey: key, Name: def.Name,
		Attempt: prev.Attempt, AttemptBase: prev.AttemptBase,
	}
	for {
		rec.Attempt++
		rec.Seq = st.nextSeq()
		rec.StartedAt = st.e.now()
		raw, err := st.attempt(ctx, def, &rec, body)
		if err == nil {
			return raw, false, nil
		}
		if stop := st.stopped(); stop != nil {
			return nil, false, stop
		}
		n := rec.Attempt - rec.AttemptBase
		if IsPermanent(err) || n >= def.attempts() || ctx.Err() != nil {
			return nil, false, err
		}
		if err := sleep(ctx, backoff(def, n)); err != nil {
			return nil, false, err
		}
	}
}

// attempt executes body once under def's policy and journals the outcome.
// A journal write that fails stops the run: its outcome is then unknown to
// the journal, and only a resume can settle it.
func (st *runState) attempt(ctx context.Context, def *StepDef, rec *StepRecord, body func(context.Context) (json.RawMessage, error)) (json.RawMessage, error) {
	sctx := context.WithValue(ctx, stepInfoKey{}, StepInfo{
		RunID: st.run.RunID, Workflow: st.run.Workflow, StepKey: rec.StepKey,
		Name: def.Name, Policy: def.Policy, Attempt: rec.Attempt,
	})
	if def.Timeout > 0 {
		var cancel context.CancelFunc
		sctx, cancel = context.WithTimeout(sctx, def.Timeout)
		defer cancel()
	}
	var tx StepTx
	switch def.Policy {
	case PolicyOnce:
		rec.Status = StepInFlight
		if err := st.write(ctx, *rec); err != nil {
			return nil, err
		}
	case PolicyTx:
		var err error
		if tx, err = st.e.journal.BeginStep(ctx, st.lease); err != nil {
			return nil, st.stopf("run %s, step %s: begin transaction: %w", st.run.RunID, rec.StepKey, err)
		}
		defer tx.Rollback()
		sctx = context.WithValue(sctx, txKey{}, tx.Handle())
	}

	raw, err := body(sctx)
	if err != nil {
		if tx != nil {
			if rbErr := tx.Rollback(); rbErr != nil {
				return nil, st.stopf("run %s, step %s: roll back: %w", st.run.RunID, rec.StepKey, rbErr)
			}
		}
		rec.Status, rec.Result, rec.Error = StepFailed, nil, err.Error()
		rec.FinishedAt = st.e.now()
		if werr := st.write(ctx, *rec); werr != nil {
			return nil, werr
		}
		return nil, err
	}

	st.e.fault(rec.StepKey, def.Name, FaultEffect)
	rec.Status, rec.Result, rec.Error = StepSucceeded, raw, ""
	rec.FinishedAt = st.e.now()
	if tx != nil {
		if err := tx.Commit(context.WithoutCancel(ctx), *rec); err != nil {
			return nil, st.stopf("run %s, step %s: commit: %w", st.run.RunID, rec.StepKey, err)
		}
	} else if err := st.write(ctx, *rec); err != nil {
		return nil, err
	}
	st.e.fault(rec.StepKey, def.Name, FaultAfter)
	return raw, nil
}

// write journals rec. The write is not cancelled with ctx: an effect that
// happened must be recorded even when the run is being shut down.
func (st *runState) write(ctx context.Context, rec StepRecord) error {
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), st.e.writeTimeout)
	defer cancel()
	if err := st.e.journal.WriteStep(wctx, st.lease, rec); err != nil {
		return st.stopf("run %s, step %s: journal %s: %w", st.run.RunID, rec.StepKey, rec.Status, err)
	}
	return nil
}

// park stops the run for a person: step key's outcome is unknown.
func (st *runState) park(key string, rec StepRecord) error {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.stop == nil {
		st.attention = key
		st.stop = &RunError{
			RunID: st.run.RunID, Status: StatusNeedsAttention, Step: key,
			Msg: fmt.Sprintf("step %s (once) was in flight since %s, attempt %d, and its outcome is unknown: resolve it as done or redo",
				key, rec.StartedAt.UTC().Format(time.RFC3339), rec.Attempt),
		}
	}
	return st.stop
}

// RunError reports a run that did not succeed: it failed, needs a person,
// or was cancelled. errors.Is matches it against ErrRunFailed,
// ErrNeedsAttention and ErrRunCancelled by status.
type RunError struct {
	RunID  string
	Status Status
	Step   string // the step a person must look at, if any
	Msg    string
}

// Error returns the run, its status and why.
func (e *RunError) Error() string {
	return fmt.Sprintf("run %s %s: %s", e.RunID, e.Status, e.Msg)
}

// Is matches the status sentinels.
func (e *RunError) Is(target error) bool {
	switch target {
	case ErrRunFailed:
		return e.Status == StatusFailed
	case ErrNeedsAttention:
		return e.Status == StatusNeedsAttention
	case ErrRunCancelled:
		return e.Status == StatusCancelled
	}
	return false
}

// Outcome sentinels, matched by [RunError] values.
var (
	ErrRunFailed      = errors.New("run failed")
	ErrNeedsAttention = errors.New("run needs attention")
	ErrRunCancelled   = errors.New("run cancelled")
)
