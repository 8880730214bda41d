package resume

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/resumegen/resumegen/runtime/journal"
)

// runState is one entry of one run: the journal read when the run was
// claimed, and what the body executed since. The durable body finds it in
// its context.
type runState struct {
	e       *Engine
	def     *WorkflowDef
	run     journal.RunRecord
	lease   journal.Lease
	journal map[string]journal.StepRecord // by step key, as read at entry

	mu    sync.Mutex
	occur map[string]int  // executions per step name so far
	keyed map[string]bool // Name[key] step keys executed so far
	seq   int64           // highest Seq in the journal
	// stop, once set, makes every later step return it without executing:
	// the run parked, lost its lease or could not write its journal.
	stop error
	// attention is the step key that parked the run, if any.
	attention string
	// lastFailed is the step whose failure is the last outcome the body
	// received, "" if that outcome was a success (see delivered).
	lastFailed string
	// drain, when closed, stops the run before its next step.
	drain <-chan struct{}
	// leaseUntil is when the lease, as this process last took or renewed
	// it, expires by this process's clock: journal writes are retried
	// until then.
	leaseUntil time.Time
	// running counts the step attempts whose code executes now, and
	// runningKey names the last one started (see executing).
	running    int
	runningKey string

	// haltReason, once set (StopCancelled, StopDeadline), makes every
	// later step call that is not deferred return a *StopError instead of
	// executing (see stop.go); haltAt is when the stop was asked, or the
	// deadline. unwindBy bounds the deferred steps that execute since.
	haltReason string
	haltAt     time.Time
	unwindBy   time.Time
	// cancelAttempt ends the context of the step attempt executing now, if
	// any, with the *StopError as its cause, when the run must stop.
	cancelAttempt context.CancelCauseFunc
	// stopDelivered is the reason of the run's own stop the body received.
	stopDelivered string
	// child is the id of the child run a step executes now, if any.
	child string
}

// errDying is what a step call returns while a panic standing for the
// process's death unwinds (see WithCrashPanics).
var errDying = errors.New("the process is dying (a simulated crash): nothing executes")

// errDraining stops a run whose worker is shutting down.
var errDraining = errors.New("worker shutting down: run released before its next step")

type stateKey struct{}

func stateFrom(ctx context.Context) *runState {
	st, _ := ctx.Value(stateKey{}).(*runState)
	return st
}

func newRunState(e *Engine, def *WorkflowDef, run journal.RunRecord, steps []journal.StepRecord) *runState {
	st := &runState{
		e:       e,
		def:     def,
		run:     run,
		lease:   journal.Lease{RunID: run.RunID, Owner: run.LeaseOwner, Epoch: run.Epoch},
		journal: make(map[string]journal.StepRecord, len(steps)),
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

// leaseDeadline returns when the lease, as last taken or renewed, expires.
func (st *runState) leaseDeadline() time.Time {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.leaseUntil
}

// leaseRenewed records a renewal of the lease asked for at asked. A
// renewal whose answer comes after a later one's does not move the bound
// back.
func (st *runState) leaseRenewed(asked time.Time) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if until := asked.Add(st.e.lease); until.After(st.leaseUntil) {
		st.leaseUntil = until
	}
}

// enter records that the code of step key begins to execute; the
// returned function records that it returned.
func (st *runState) enter(key string) (leave func()) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.running++
	st.runningKey = key
	return func() {
		st.mu.Lock()
		defer st.mu.Unlock()
		st.running--
	}
}

// executing reports whether the code of a step executes now, and which.
func (st *runState) executing() (key string, ok bool) {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.runningKey, st.running > 0
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
		if err := journal.CheckStepKey(k); err != nil {
			return "", fmt.Errorf("run %s: step %s: its key= value makes a journal key the journal does not store: %w", st.run.RunID, name, err)
		}
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

// stepInfo describes the execution of step def journaled as rec.
func (st *runState) stepInfo(def *StepDef, rec *journal.StepRecord) StepInfo {
	return StepInfo{
		RunID: st.run.RunID, Workflow: st.run.Workflow, Version: st.run.Version, StepKey: rec.StepKey,
		Name: def.Name, Policy: def.Policy, Attempt: rec.Attempt, OriginKey: journal.OriginKey(st.run.Moves, rec.StepKey),
	}
}

func (st *runState) nextSeq() int64 {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.seq++
	return st.seq
}

// step runs one step execution: it replays the outcome the body received
// before (a succeeded row, or a final failed row: its value and its error),
// or executes body under the step's policy and retry budget. body returns
// the step's value as JSON, also with an error (the value the step returned
// beside it). decode, if not nil, hands a replayed value to the caller; a
// value it refuses is a corrupt journal, and parks the run.
func (st *runState) step(ctx context.Context, def *StepDef, callKey stepKey, body func(context.Context) (json.RawMessage, error), decode func(json.RawMessage) error) error {
	if st.e.dying.Load() {
		// A panic standing for the process's death unwinds the body: the
		// steps its deferred calls call must not execute, as in a process
		// that died.
		return errDying
	}
	if err := st.stopped(); err != nil {
		return err
	}
	if def.missing {
		return st.stopf("run %s: workflow %s: the step at call site %s of a helper's shared copy is not one of the workflow's steps: the copy and the workflow's generated code were generated from different source; run go generate and rebuild", st.run.RunID, st.def.QualifiedName(), def.Site)
	}
	select {
	case <-st.drain:
		return st.stopf("run %s: %w", st.run.RunID, errDraining)
	default:
	}
	if fan := fanFrom(ctx, st); fan != nil {
		if err := fan.admit(def, callKey); err != nil {
			return err
		}
	}
	key, err := st.nextKey(def.Name, callKey)
	if err != nil {
		st.delivered("", false) // not a step's failure: a retry replays everything
		return Permanent(err)
	}
	st.reached(ctx, def, key)
	prev, seen := st.journal[key]
	if seen {
		switch {
		case prev.Status == journal.StepSucceeded:
			if decode != nil {
				if err := decode(prev.Result); err != nil {
					return st.corrupt(key, err)
				}
			}
			return st.replayed(key, nil)
		case prev.Status == journal.StepInFlight:
			// The engine parks such runs before the body starts; meeting
			// one here means the row appeared since, so stop all the same.
			return st.park(key, prev)
		case prev.Status == journal.StepFailed && prev.Final:
			return st.replayFailure(key, prev, decode)
		}
	}
	if err := ctx.Err(); err != nil {
		// Shutting down: start nothing new.
		return err
	}
	if st.refusing(ctx, def) {
		// The run must stop: the step does not execute, but a child run
		// that exists is driven to its end (it stops too).
		drive := false
		if def.Child && !seen {
			var err error
			if drive, err = st.drivesChild(ctx, key); err != nil {
				return err
			}
		}
		if !drive {
			return st.refuse(ctx, def.Name, key, prev)
		}
	}
	// A failed row that is not final carries on with the attempts left: the
	// process stopped mid-retry, or an operator's retry reopened it with a
	// fresh budget. (A permanent failure is journaled final at once.)
	if seen && prev.Status == journal.StepFailed {
		if prev.Attempt-prev.AttemptBase >= def.attempts() {
			// The budget was spent, but the process stopped before the body
			// received the failure: that failure is the outcome. Journal it
			// as final, so that a later change of the budget cannot reopen it.
			prev.Name, prev.Final, prev.History = def.Name, true, historyOf(st.def, prev)
			if err := st.write(ctx, prev); err != nil {
				return err
			}
			return st.replayFailure(key, prev, decode)
		}
	}
	st.e.fault(key, def.Name, FaultBefore)
	rec := journal.StepRecord{
		RunID: st.run.RunID, StepKey: key, Name: def.Name,
		Attempt: prev.Attempt, AttemptBase: prev.AttemptBase, History: historyOf(st.def, prev),
	}
	for first := true; ; first = false {
		if !first && !def.Child && st.refusing(ctx, def) {
			// Stopped between two attempts: the next one does not start.
			return st.refuse(ctx, def.Name, key, rec)
		}
		if err := st.holdLease(ctx, key); err != nil {
			return err
		}
		rec.Attempt++
		rec.Seq = st.nextSeq()
		rec.StartedAt = st.e.clockNow()
		err := st.tracedAttempt(ctx, def, &rec, body)
		if err == nil {
			st.delivered(key, false)
			return nil
		}
		if errors.Is(err, errFanPending) {
			return err // no outcome yet: nothing journaled, no attempt spent
		}
		if stop := st.stopped(); stop != nil {
			return stop
		}
		if rec.Final {
			st.delivered(key, true)
			return err
		}
		if ctx.Err() != nil {
			return err
		}
		if err := sleep(ctx, backoff(def, rec.Attempt-rec.AttemptBase)); err != nil {
			return err
		}
	}
}

// replayFailure hands the body the journaled outcome of a final failed row:
// its value, if any, and its error, rebuilt.
func (st *runState) replayFailure(key string, rec journal.StepRecord, decode func(json.RawMessage) error) error {
	if decode != nil && len(rec.Result) > 0 {
		if err := decode(rec.Result); err != nil {
			return st.corrupt(key, err)
		}
	}
	err := decodeStepError(st.def, rec.Error, rec.ErrorDetail)
	if errors.Is(err, errNotReplayable) {
		// Handing the body a stand-in error could take another branch.
		return st.corrupt(key, err)
	}
	if se, ok := st.ownStop(err); ok {
		// The run stopped here before: it stops again, as it did, whatever
		// the clocks say now.
		st.halt(se.Reason, se.At)
		st.stopSeen(se.Reason)
	}
	return st.replayed(key, err)
}

// replayed records that the body received step key's journaled outcome,
// failed when err is not nil, and returns err.
func (st *runState) replayed(key string, err error) error {
	st.delivered(key, err != nil)
	return err
}

// delivered records the last outcome the body received from a step: a
// failure of step key, or (failed false) a success. A body that returns an
// error right after a failure failed with that step.
func (st *runState) delivered(key string, failed bool) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if failed {
		st.lastFailed = key
	} else {
		st.lastFailed = ""
	}
}

// failedStep is the step whose failure was the last outcome the body
// received, or "" if the last was a success.
func (st *runState) failedStep() string {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.lastFailed
}

// historyOf returns the attempt history a new attempt of prev's step carries
// on: prev's, with prev's own last attempt added when a person or an older
// journal left it out (a once step resolved redo).
func historyOf(def *WorkflowDef, prev journal.StepRecord) []journal.AttemptRecord {
	if prev.Status != journal.StepFailed || prev.Attempt == 0 {
		return prev.History
	}
	h := prev.History
	if n := len(h); n > 0 && h[n-1].Attempt == prev.Attempt {
		return h
	}
	return append(h[:len(h):len(h)], journal.AttemptRecord{
		Attempt: prev.Attempt, StartedAt: prev.StartedAt, FinishedAt: prev.FinishedAt, Error: prev.Error,
		Permanent: IsPermanent(decodeStepError(def, prev.Error, prev.ErrorDetail)),
	})
}

// attempt executes body once under def's policy and journals the outcome.
// A failed outcome is final (rec.Final) when the body will receive it: the
// error is permanent, or the budget is spent while the run is not shutting
// down. A journal write that fails is retried while the lease holds (see
// [runState.write]); one that still fails stops the run: its outcome is
// then unknown to the journal, and only a resume can settle it. A panic in
// body is the attempt's failure (a *PanicError), except in a once step,
// whose effect may have happened: the run parks, its row in_flight.
func (st *runState) attempt(ctx context.Context, def *StepDef, rec *journal.StepRecord, body func(context.Context) (json.RawMessage, error)) error {
	sctx := context.WithValue(ctx, stepInfoKey{}, st.stepInfo(def, rec))
	if def.Timeout > 0 {
		var cancel context.CancelFunc
		sctx, cancel = context.WithTimeout(sctx, def.Timeout)
		defer cancel()
	}
	sctx, release := st.stepContext(sctx, def)
	defer release()
	var tx journal.StepTx
	switch def.Policy {
	case PolicyOnce:
		rec.Status, rec.Final = journal.StepInFlight, false
		if err := st.write(ctx, *rec); err != nil {
			return err
		}
	case PolicyTx:
		// Nothing happened yet, but a database blip is no reason to stop.
		err := st.e.retryWrite(ctx, st.run.RunID, "begin "+rec.StepKey, st.leaseDeadline, func(context.Context) error {
			var err error
			if tx, err = st.e.journal.BeginStep(ctx, st.lease); err != nil && ctx.Err() != nil {
				return Permanent(err) // shutting down: start nothing new
			}
			return err
		})
		if err != nil {
			return st.stopf("run %s, step %s: begin transaction: %w", st.run.RunID, rec.StepKey, err)
		}
		defer tx.Rollback()
		sctx = context.WithValue(sctx, txKey{}, tx.Handle())
	}

	leave := st.enter(rec.StepKey)
	raw, panicked, err := st.callBody(sctx, body)
	leave()
	if errors.Is(err, errFanPending) && panicked == nil {
		// A fanned-out child run that has not finished: no outcome.
		return err
	}
	if stop := st.stopped(); stop != nil && err != nil {
		// The run stopped while the step ran (a child run it executes
		// needs a person, the lease was lost): the attempt has no outcome
		// to journal.
		return stop
	}
	if def.Policy == PolicyOnce && panicked != nil {
		// Its effect may have happened: its row stays in_flight.
		return st.parkFor(AttentionKindStep, rec.StepKey, fmt.Sprintf(
			"step %s (once) panicked in attempt %d, and its outcome is unknown: %s; %v",
			rec.StepKey, rec.Attempt, resolveHint(st.run.RunID, rec.StepKey), panicked))
	}
	var unjournalable *resultError
	if errors.As(err, &unjournalable) {
		if def.Policy == PolicyOnce {
			// Its effect happened: never execute it again by itself.
			return st.parkFor(AttentionKindResult, rec.StepKey, fmt.Sprintf(
				"step %s (once) executed, attempt %d, but %v; it will not execute again by itself: resolve it done with the result to use (-result JSON), or cancel the run",
				rec.StepKey, rec.Attempt, unjournalable))
		}
		err = fmt.Errorf("run %s, step %s: %w", st.run.RunID, rec.StepKey, err)
	}
	if err != nil {
		stopping := stopCause(sctx) != nil && !def.Deferred
		if tx != nil {
			// A transaction lost with its connection committed nothing. It
			// is the step's outcome only when the run's stop ended its
			// statement; otherwise the attempt has none (the journal's
			// connection failed, not the step): the run stops unjournaled,
			// and its resume executes the step again.
			if rbErr := tx.Rollback(); rbErr != nil && !(stopping && errors.Is(rbErr, journal.ErrTxLost)) {
				return st.stopf("run %s, step %s: roll back: %w", st.run.RunID, rec.StepKey, rbErr)
			}
		}
		rec.FinishedAt = st.e.clockNow()
		if stopping {
			// The run was asked to stop while the step executed, and the
			// step gave up: its outcome is the stop, its failure history.
			rec.History = append(rec.History, journal.AttemptRecord{
				Attempt: rec.Attempt, StartedAt: rec.StartedAt, FinishedAt: rec.FinishedAt, Error: err.Error(), Permanent: IsPermanent(err),
			})
			err := st.refuse(ctx, def.Name, rec.StepKey, *rec)
			rec.Final = true
			return err
		}
		permanent := IsPermanent(err)
		rec.Final = permanent || (rec.Attempt-rec.AttemptBase >= def.attempts() && ctx.Err() == nil)
		rec.Status, rec.Result, rec.Error = journal.StepFailed, nil, err.Error()
		if rec.Final {
			rec.Result = raw
		}
		rec.ErrorDetail = encodeStepError(st.def, err)
		rec.History = append(rec.History, journal.AttemptRecord{
			Attempt: rec.Attempt, StartedAt: rec.StartedAt, FinishedAt: rec.FinishedAt, Error: rec.Error, Permanent: permanent,
		})
		if werr := st.write(ctx, *rec); werr != nil {
			return werr
		}
		return err
	}

	st.e.fault(rec.StepKey, def.Name, FaultEffect)
	rec.Status, rec.Result, rec.Error, rec.ErrorDetail, rec.Final = journal.StepSucceeded, raw, "", nil, false
	rec.FinishedAt = st.e.clockNow()
	if tx != nil {
		if err := tx.Commit(context.WithoutCancel(ctx), *rec); err != nil {
			return st.stopf("run %s, step %s: commit: %w", st.run.RunID, rec.StepKey, err)
		}
	} else if err := st.write(ctx, *rec); err != nil {
		return err
	}
	st.e.fault(rec.StepKey, def.Name, FaultAfter)
	return nil
}

// write journals rec, retrying a failed write with backoff while the lease
// holds (a row is an upsert: writing it twice is harmless). The write is
// not cancelled with ctx: an effect that happened must be recorded even
// when the run is being shut down.
func (st *runState) write(ctx context.Context, rec journal.StepRecord) error {
	err := st.e.retryWrite(ctx, st.run.RunID, rec.StepKey+" "+string(rec.Status), st.leaseDeadline, func(wctx context.Context) error {
		return st.e.journal.WriteStep(wctx, st.lease, rec)
	})
	if err != nil {
		return st.stopf("run %s, step %s: journal %s: %w", st.run.RunID, rec.StepKey, rec.Status, err)
	}
	return nil
}

// park stops the run for a person: step key's outcome is unknown.
func (st *runState) park(key string, rec journal.StepRecord) error {
	return st.parkFor(AttentionKindStep, key, fmt.Sprintf("step %s (once) was in flight since %s, attempt %d, and its outcome is unknown: %s",
		key, rec.StartedAt.UTC().Format(time.RFC3339), rec.Attempt, resolveHint(st.run.RunID, key)))
}

// resolveHint says how a person settles a once step whose outcome is
// unknown, with the command to run.
func resolveHint(runID, key string) string {
	return fmt.Sprintf("check whether it happened, then resolve it: resumectl runs resolve %s %s -done [-result JSON] if it did, -redo if not",
		shellQuote(runID), shellQuote(key))
}

// shellQuote quotes s for a POSIX shell when it holds anything but
// letters, digits and -_./:@#=+,
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:@#=+,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// corrupt stops the run for a person: step key's journal row does not
// decode into what the step returns. Nothing is executed in its place.
func (st *runState) corrupt(key string, err error) error {
	return st.parkFor(AttentionKindJournal, key, fmt.Sprintf(
		"journal row %s: %v: the run's journal is corrupt, and it is not replayed as a zero value nor executed again: repair the row and retry the run, or cancel it", key, err))
}

// parkFor stops the run for a person, for the reason kind (an
// AttentionKind), at step key.
func (st *runState) parkFor(kind, key, msg string) error {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.stop == nil {
		st.attention = key
		st.stop = &RunError{RunID: st.run.RunID, Status: StatusNeedsAttention, Step: key, Kind: kind, Msg: msg}
	}
	return st.stop
}

// RunError reports a run that did not succeed: it failed, needs a person,
// was cancelled or waits. errors.Is matches it against ErrRunFailed,
// ErrNeedsAttention, ErrRunCancelled and ErrRunWaiting by status.
type RunError struct {
	RunID  string
	Status Status
	Step   string // the step a person must look at, if any
	// Kind is why a run in StatusNeedsAttention waits: an AttentionKind.
	Kind string
	Msg  string
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
	case ErrRunWaiting:
		return e.Status == StatusWaiting
	}
	return false
}

// Outcome sentinels, matched by [RunError] values.
var (
	ErrRunFailed      = errors.New("run failed")
	ErrNeedsAttention = errors.New("run needs attention")
	ErrRunCancelled   = errors.New("run cancelled")
)
