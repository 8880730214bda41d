// Package journal is the contract between the resumegen engine
// (package resume) and a journal: the rows a journal stores (runs, steps,
// manifests), the requests the engine makes of it (claims, leases, step
// writes), the optional interfaces it may implement ([Liveness],
// [WorkNotifier]) and the errors it returns.
//
// It is for journal implementers (runtime/sqlitejournal,
// runtime/pgjournal, runtime/journaltest's conformance suite) and for
// tools that read a journal's rows (resumectl). A program that runs
// workflows needs none of it: package resume re-exports what a user
// touches (run statuses, Resolution, CancelOptions, the errors a user
// tests with errors.Is, the Journal an engine is made with).
package journal

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// nullResult is a JSON null: a run input that holds no arguments.
var nullResult = json.RawMessage("null")

// Status is the state of a run.
type Status string

// Run statuses, as stored in resume_runs.status.
const (
	StatusPending        Status = "pending"
	StatusRunning        Status = "running"
	StatusSucceeded      Status = "succeeded"
	StatusFailed         Status = "failed"
	StatusNeedsAttention Status = "needs_attention"
	StatusCancelled      Status = "cancelled"
	// StatusWaiting: the run gave up its worker and lease until a time
	// passes or a signal arrives (see RunRecord.WaitKind).
	StatusWaiting Status = "waiting"
)

// Finished reports whether a run in status s will not execute again
// without a person (succeeded, failed, cancelled).
func (s Status) Finished() bool {
	return s == StatusSucceeded || s == StatusFailed || s == StatusCancelled
}

// StepStatus is the state of one journaled step.
type StepStatus string

// Step statuses, as stored in resume_steps.status.
const (
	StepInFlight  StepStatus = "in_flight"
	StepSucceeded StepStatus = "succeeded"
	StepFailed    StepStatus = "failed"
	// StepWaiting is an await that has not received its event yet: its
	// Result is its deadline (JSON time), or null without a timeout.
	StepWaiting StepStatus = "waiting"
)

// RunRecord is one row of resume_runs.
type RunRecord struct {
	RunID    string
	Workflow string // qualified name: package path, dot, function name
	Version  string
	Status   Status
	Input    json.RawMessage // the workflow's arguments as a JSON array
	Output   json.RawMessage // the workflow's result, once succeeded (a failed run: the value beside its error)
	Error    string          // why the run failed or needs attention
	// AttentionStep is the key of the step a person must look at, for a run
	// in StatusNeedsAttention because of a step.
	AttentionStep string
	// AttentionKind says why a run in StatusNeedsAttention waits for a
	// person: [AttentionKindStep] (a once step's outcome is unknown),
	// [AttentionKindResult] (a once step's result cannot be journaled),
	// [AttentionKindJournal] (a journal row does not decode) or
	// [AttentionKindVersion] (the run's version is not the program's). It is ""
	// for a run in any other status.
	AttentionKind string
	// FailedStep is, for a failed run, the key of the step whose failure
	// the body returned with (the last outcome the body received before it
	// returned an error was that step's failure): the one step a retry
	// executes again. It is "" when the body failed on its own.
	FailedStep string
	// ErrorDetail rebuilds a failed run's error with its identities (see
	// resume.WorkflowDef.Errors), for a parent run that receives it as a child's
	// outcome; nil when there is nothing but its text.
	ErrorDetail json.RawMessage
	// Parent is the id of the run that executes this one as a child run,
	// "" for a run of its own. Workers never claim a child run: its parent
	// executes it.
	Parent string
	// Moves lists the run's moves between versions, oldest first (see
	// [Move]). Claim, ClaimNext and LoadRun fill it.
	Moves []Move
	// LastStep is the key of the run's most recently journaled step; only
	// ListRuns fills it, so that listing runs needs no query per run.
	LastStep string
	// Attempts counts the times a process entered the run.
	Attempts int
	// ClaimsSinceProgress counts the run's claims since it last made
	// progress: since a step row was journaled or an entry of the run
	// finished (FinishRun), whichever was last. A run just claimed whose
	// previous entry made progress has 1; n+1 means the n claims before
	// this one each ended with nothing journaled: their process died. The
	// engine fails a run in such a crash loop (see resume.WithCrashLoopLimit).
	// Journals store the Attempts of the last progress and return
	// Attempts minus it; 0 means that the journal does not track progress.
	ClaimsSinceProgress int

	CreatedAt time.Time
	UpdatedAt time.Time
	// LeaseOwner, LeaseUntil and Epoch fence the process running the run.
	LeaseOwner string
	LeaseUntil time.Time
	Epoch      int64
	// Unreadable says why the run's row could not be read as stored (a
	// column that does not convert to its type, a timestamp that does not
	// parse): the journal fills what it could read and says what it could
	// not, instead of failing the read, so that one corrupt row stops its
	// own run, not every read of the journal. "" for a sound row; see
	// [RunRecord.Problem].
	Unreadable string

	// WaitKind, WaitName and WakeAt say what a run in StatusWaiting waits
	// for: [WaitSleep] (until WakeAt), [WaitSignal] (the event WaitName,
	// until WakeAt, its timeout, or for ever when WakeAt is zero),
	// [WaitStart] (a run enqueued to start at WakeAt) or [WaitChild] (its
	// child run WaitName, which waits until WakeAt). FinishRun and
	// CreateRun write them (empty for any other status). A claim clears
	// WaitKind and WaitName, and keeps WakeAt only when it takes a waiting
	// run whose WakeAt passed by the journal's clock: a claimed run's
	// WakeAt, when set, is a time the journal's clock has reached.
	WaitKind string
	WaitName string
	WakeAt   time.Time

	// CancelRequested is when, by the journal's clock, [Journal.Cancel]
	// asked the run to stop (zero: it was not): the engine that executes
	// it next, or executes it now (it asks [Journal.CancelRequested]),
	// unwinds its body: no step executes any more but those called from
	// defer, and the run ends cancelled. A child run created under a
	// parent asked to stop is asked to stop too.
	CancelRequested time.Time
	// Deadline is when, by the journal's clock, the run is past its
	// deadline (zero: it has none): it stops as a cancelled run does, and
	// ends failed. CreateRun computes it from its own clock (see
	// [Journal.CreateRun]); a child run's is no later than its parent's.
	Deadline time.Time

	// ContinuedFrom is the run this one continues ([Continuer]): the run
	// whose body ended with resume.ContinueAsNew and started this one, ""
	// for the first run of a chain. ContinuedAs is, for a run that so
	// ended (succeeded), the run that continues it, "" otherwise.
	ContinuedFrom string
	ContinuedAs   string

	// Queue is the queue the run is claimed through (its workflow's
	// queue=, "" for none; see [Queuer]), QueueKey the key its queue's
	// per-key limit counts it under ("" is a key too), and Priority its
	// place in the queue: a claim takes the highest first, then the
	// oldest. CreateRun stores them; they never change.
	Queue    string
	QueueKey string
	Priority int
}

// Problem says what makes the run's row unusable, or "" when it is sound:
// what the journal could not read ([RunRecord.Unreadable]), a status that
// is not a run status, or an input that is not a JSON array (one a codec
// sealed is left alone: only the codec opens it).
func (r RunRecord) Problem() string {
	switch {
	case r.Unreadable != "":
		return r.Unreadable
	case !r.Status.Known():
		return fmt.Sprintf("status %q is not a run status", r.Status)
	case !IsSealed(r.Input) && !inputDecodes(r.Input):
		return fmt.Sprintf("input %s is not a JSON array", preview(r.Input))
	}
	return ""
}

// Known reports whether s is one of the run statuses.
func (s Status) Known() bool {
	switch s {
	case StatusPending, StatusRunning, StatusSucceeded, StatusFailed, StatusNeedsAttention, StatusCancelled, StatusWaiting:
		return true
	}
	return false
}

// Known reports whether s is one of the step statuses.
func (s StepStatus) Known() bool {
	return s == StepInFlight || s == StepSucceeded || s == StepFailed || s == StepWaiting
}

// inputDecodes reports whether b is a run input resume.Args.Decode reads: valid
// JSON holding an array (or null), or nothing (no arguments).
func inputDecodes(b json.RawMessage) bool {
	t := bytes.TrimSpace(b)
	return len(t) == 0 || (t[0] == '[' || bytes.Equal(t, nullResult)) && json.Valid(t)
}

// preview quotes b, cut to a length that reads in one line.
func preview(b []byte) string {
	const max = 60
	if len(b) > max {
		return strconv.Quote(string(b[:max])) + "..."
	}
	return strconv.Quote(string(b))
}

// Why a run needs attention, as stored in resume_runs.attention_kind.
const (
	// AttentionKindStep: a once step was in flight and its outcome is unknown;
	// a person resolves it (done or redo).
	AttentionKindStep = "step"
	// AttentionKindVersion: the run started under another version of its
	// workflow than the program's; a person accepts the new version after
	// looking at the step diff, or cancels the run.
	AttentionKindVersion = "version"
	// AttentionKindResult: a once step's effect happened but its result
	// cannot be journaled (NaN, ±Inf, invalid UTF-8); its row stays
	// in_flight and a person resolves it done with the result to use.
	AttentionKindResult = "result"
	// AttentionKindJournal: a journal row of the run does not decode into
	// what the step returns (a corrupt journal); nothing executes until a
	// person repairs the row or cancels the run.
	AttentionKindJournal = "journal"
	// AttentionKindChild: a child run this run executes needs a person;
	// settling the child makes this run pending again.
	AttentionKindChild = "child"
)

// ManifestRecord is one row of resume_manifests: the step list of one
// version of a workflow, as resume.WorkflowDef.Manifest renders it, stored the
// first time a program registering that version met the journal.
type ManifestRecord struct {
	Workflow string
	Version  string
	Manifest string
	// Definition is the version's step list as package deploy reads it
	// (JSON of deploy.Definition); nil for a manifest stored before
	// definitions were.
	Definition json.RawMessage
	// Seq orders a workflow's versions by when the journal first saw
	// them, for listings only: it says nothing about which version is
	// older (a newer program may meet the journal first); the code's
	// lineage does (see [ClaimNextRequest.Older]).
	Seq       int64
	CreatedAt time.Time
}

// StepRecord is one row of resume_steps.
type StepRecord struct {
	RunID   string
	StepKey string // Name, Name#2, ... or Name[key]
	Name    string
	Status  StepStatus
	// Result is the step's results, once succeeded; for a final failed row,
	// the value the step returned with its error.
	Result json.RawMessage
	Error  string // the last attempt's error, once failed
	// ErrorDetail is what the runtime journals beside Error to rebuild the
	// error on replay (its permanent mark and identity).
	ErrorDetail json.RawMessage
	// Final marks a failed row whose outcome the body received: it is
	// replayed (Result and the decoded error), never executed again, until
	// an operator's retry reopens it. A failed row that is not final is a
	// step whose retries were cut short: it carries on with its budget.
	Final bool
	// History lists the step's failed attempts, oldest first.
	History []AttemptRecord
	// Attempt counts the step's executions across resumes.
	Attempt int
	// AttemptBase is the attempt count at which the current retry budget
	// started: a person's retry or redo opens a fresh budget.
	AttemptBase int
	// Seq is the order of execution within the run.
	Seq        int64
	StartedAt  time.Time
	FinishedAt time.Time
	// Unreadable says why the row could not be read as stored (a column
	// that does not convert to its type, a history that is not JSON): the
	// journal returns the row with what it could read and says what it
	// could not, and the engine parks the run instead of replaying or
	// executing the step. "" for a sound row; see [StepRecord.Problem].
	Unreadable string
}

// Problem says what makes the step's row unusable, or "" when it is
// sound: what the journal could not read ([StepRecord.Unreadable]) or a
// status that is not a step status.
func (s StepRecord) Problem() string {
	switch {
	case s.Unreadable != "":
		return s.Unreadable
	case !s.Status.Known():
		return fmt.Sprintf("status %q is not a step status", s.Status)
	}
	return ""
}

// AttemptRecord is one failed attempt of a step, in its row's history.
type AttemptRecord struct {
	Attempt    int       `json:"attempt"`
	StartedAt  time.Time `json:"started_at"`
	FinishedAt time.Time `json:"finished_at,omitempty"`
	Error      string    `json:"error"`
	Permanent  bool      `json:"permanent,omitempty"`
}

// Created returns r as [Journal.CreateRun] stores a new run: pending, with
// no lease, or, when r.LeaseOwner is set, claimed by it (running, epoch 1,
// first attempt, until r.LeaseUntil), or, when r.WaitKind is [WaitStart]
// (and no lease), waiting to start at r.WakeAt. Journals call it so the
// rule lives in one place.
func (r RunRecord) Created() RunRecord {
	r.Status, r.Epoch, r.Attempts, r.ClaimsSinceProgress = StatusPending, 0, 0, 0
	if r.LeaseOwner != "" {
		r.Status, r.Epoch, r.Attempts, r.ClaimsSinceProgress = StatusRunning, 1, 1, 1
		r.WaitKind, r.WaitName, r.WakeAt = "", "", time.Time{}
	} else {
		r.LeaseUntil = time.Time{}
		r.WaitName = ""
		if r.WaitKind == WaitStart {
			r.Status = StatusWaiting
		} else {
			r.WaitKind, r.WakeAt = "", time.Time{}
		}
	}
	return r
}

// Lease identifies the process running a run. Every journal write of a run
// carries it; a write whose epoch is no longer the run's is refused with
// ErrLeaseLost.
type Lease struct {
	RunID string
	Owner string
	Epoch int64
}

// ClaimRequest asks to take a run.
type ClaimRequest struct {
	RunID string
	Owner string
	// Lease is how long the claim holds the run. The journal counts it from
	// its own clock once the claim holds the run (PostgreSQL: the server's
	// clock_timestamp(); SQLite: the clock read after the write lock is
	// taken), so a claim that waited for the database's lock longer than the
	// lease still stores a live lease, and workers on hosts whose clocks
	// disagree compare expiries on one clock.
	Lease time.Duration
	// TakeOverDead lets the claim take a running run whose owner is known
	// to have stopped before its lease expires: the owner's liveness signal
	// (see [Liveness]) says so. A journal without liveness ignores it.
	TakeOverDead bool
	// Abandoned, if set, is a lease whose holder is known to be dead: the
	// run may be taken from it before the lease expires.
	Abandoned *Lease
}

// ClaimNextRequest asks a worker's next run.
type ClaimNextRequest struct {
	Owner string
	// Lease is how long the claim holds the run, counted as in
	// [ClaimRequest].
	Lease time.Duration
	// Workflows lists the qualified workflow names the worker can run.
	Workflows []string
	// Holding lists the runs the claiming engine is executing now. A run
	// whose lapsed lease Owner holds and that is not among them was lost
	// track of by its own live owner (a claim whose journal read failed,
	// a finish that could not be written, a panic of the engine's own):
	// it may be claimed again. A lapsed lease of another live owner may
	// not, nor one of a run being executed.
	Holding []string
	// Versions lists the workflow versions the worker can execute. When
	// set, a run of Workflows is claimed only if its (workflow, version)
	// is among them, or among Older and no worker advertised it
	// ([Journal.Advertise]) within AdvertisedWithin: a run no live process
	// can execute as pinned, which the engine continues on its own
	// version or parks. A run of any other version (newer than the
	// worker's, or of another line of the code) is never claimed, however
	// long ago the journal first saw its version. Nil claims runs of any
	// version.
	Versions []WorkflowVersion
	// Older lists the versions the worker's versions descend from, by the
	// code's lineage (resume.WorkflowDef.Lineage): the only versions the
	// worker may take runs of besides its own. The order in which the
	// journal first saw versions ([ManifestRecord.Seq]) never counts.
	Older []WorkflowVersion
	// AdvertisedWithin is how recent an advertisement must be to count.
	AdvertisedWithin time.Duration
	// Queues lists the queues of Workflows (resume.WorkflowDef.Queue). A
	// run of a queue ([RunRecord.Queue]) starts, or continues after a
	// wait, only through its queue's claim, within the limits the journal
	// stores for it ([Queuer]), and only when its queue is listed here;
	// one of no queue is claimed as before. A run of a queue whose lease
	// lapsed is taken over like any other: it holds its slot already.
	Queues []string
}

// WorkflowVersion is one version of a workflow, by its identity.
type WorkflowVersion struct {
	Workflow string
	Version  string
}

// Move records a run's move from the version it was pinned to to another
// one of its workflow.
type Move struct {
	// Workflow is the run's workflow after the move; FromWorkflow is the
	// one before it when the move changed it (an earlier identity, see
	// resume.WorkflowDef.Aliases), "" otherwise.
	Workflow     string `json:"workflow"`
	FromWorkflow string `json:"from_workflow,omitempty"`
	// From and To are the versions before and after the move.
	From string `json:"from"`
	To   string `json:"to"`
	// Why says what made the move safe ("no step journaled", "steps A, B
	// are an unchanged prefix of version T") or who accepted it.
	Why string `json:"why"`
	// Renames maps the step names of From (and of rows journaled under an
	// earlier name) that To calls otherwise (renamed-from=) to their name
	// in To, journaled or not: the move relabels the rows journaled under
	// them, and a renamed step keeps the idempotency key and child run of
	// its earlier name (see [OriginKey]).
	Renames map[string]string `json:"renames,omitempty"`
	// By is who moved the run: "engine OWNER" or "operator".
	By string `json:"by"`
	// At is when, by the journal's clock.
	At time.Time `json:"at"`
}

// Clock is an optional interface of a [Journal] that reads the journal's
// own clock: the one its leases expire by and its waiting runs come due by
// (PostgreSQL: the server's clock_timestamp(); SQLite: the clock of the
// host whose processes share the file, or the one given to
// sqlitejournal.WithClock). The engine takes every time that decides
// something durable from it (a sleep's wake-up, an await's timeout, a
// schedule's ticks, a run's deadline), through the offset it measures
// between this clock and its own, so that a process whose clock is wrong
// can neither cut a sleep short, start a schedule's tick early, nor stop a
// run before its deadline. A decorator of a journal
// passes it on by implementing it, or by an Unwrap method returning the
// journal it wraps; without it the engine's own clock decides.
type Clock interface {
	// Now returns the journal's current time. It reads no journal row
	// ([Counters] does not count it).
	Now(ctx context.Context) (time.Time, error)
}

// Liveness is an optional interface of a [Journal] that tells that a
// worker process stopped by a signal that cannot be wrong, so that its runs
// are taken over at once instead of once their leases expired. The SQLite
// journal holds an OS file lock (flock) on a lock file per owner beside the
// journal, which the kernel releases when the process ends, however it
// ends (SIGKILL, OOM, a zombie not yet reaped, a process in another PID
// namespace). The PostgreSQL journal has only the owner's own word
// (Release, or Close of its journal): no session of the server proves
// anything about a process, whose connection ends with a server restart, a
// network drop, idle_session_timeout or a transaction pooler while it
// goes on executing its step, so a killed process's runs wait out their
// leases there. Process ids are never read: they mean nothing across PID
// namespaces and hosts.
//
// The engine calls KeepAlive for its owner before its first claim; a claim
// with [ClaimRequest.TakeOverDead] takes a run from an owner whose signal
// says it stopped at once, in the claim itself, instead of waiting out its
// lease. An owner that never held a signal (a worker of an older version)
// is never taken for stopped.
type Liveness interface {
	// KeepAlive makes this process hold owner's liveness signal until the
	// journal is closed (or the process ends). It is cheap once held.
	KeepAlive(ctx context.Context, owner string) error
	// OwnerGone reports whether owner held a liveness signal that says
	// now that its process stopped.
	OwnerGone(ctx context.Context, owner string) (bool, error)
	// Release gives owner's signal up, as the end of its process would:
	// its runs are taken over at once. For an engine that stops for good
	// while its process lives on, once nothing of it executes, and for
	// tests that simulate a crash in process.
	Release(ctx context.Context, owner string) error
}

// LiveOwnerGuard is an optional interface of a [Journal] whose claims
// never take a run whose lease lapsed from an owner whose liveness signal
// ([Liveness]) is held: a signal that proves the owner's process alive as
// surely as its release proves it ended (the SQLite journal's flock, which
// the kernel holds for the process and no connection can lose). An
// engine over such a journal keeps a run whose lease it could not renew
// in time (the database's write lock was busy): no other process can take
// it while this one lives. Over any other journal the engine stops a run
// before a lease it cannot renew expires (see resume.WithOverrunAction).
type LiveOwnerGuard interface {
	// GuardsLiveOwners reports whether the journal's claims leave the
	// lapsed leases of live owners alone.
	GuardsLiveOwners() bool
}

// Resolution is a person's decision about an in_flight step.
type Resolution struct {
	// Done marks the step as having happened; Result (JSON, optional) is
	// what the workflow receives in place of executing it. Otherwise the
	// step is executed again, once.
	Done   bool
	Result json.RawMessage
	// RedoError, with a redo, is the error text the step's row keeps
	// ("" for [RedoText]'s default): a sealed journal (resume.WithCodec)
	// gives it sealed, as every value of its rows.
	RedoError string
}

// RedoText is the error a redone step's row keeps: r.RedoError, or
// "outcome unknown; a person chose redo".
func (r Resolution) RedoText() string {
	if r.RedoError != "" {
		return r.RedoError
	}
	return "outcome unknown; a person chose redo"
}

// Journal errors. Implementations wrap them with the run and step.
var (
	ErrRunNotFound  = errors.New("run not found")
	ErrStepNotFound = errors.New("step not found")
	// ErrNotInFlight is returned when resolving a step that is not in_flight.
	ErrNotInFlight = errors.New("step is not in_flight")
	// ErrRunBusy is returned when a run is held by a live lease of another
	// process, or is not in a state the operation accepts.
	ErrRunBusy = errors.New("run is busy")
	// ErrLeaseLost is returned for a write whose lease epoch moved on: another
	// process took the run over.
	ErrLeaseLost = errors.New("lease lost")
	// ErrRunConflict is returned when a run id is reused for a different
	// workflow or input.
	ErrRunConflict = errors.New("run id already used with a different workflow or input")
	// ErrNoRunReady is returned by ClaimNext when no run can be claimed.
	ErrNoRunReady = errors.New("no run ready")
	// ErrNotFailed is returned when retrying a run that did not fail (nor
	// waits on a journal row a person repairs).
	ErrNotFailed = errors.New("run is not failed")
	// ErrNotVersionStop is returned when accepting a version for a run that
	// is not in needs_attention because of a version change.
	ErrNotVersionStop = errors.New("run is not stopped on a version change")
)

// Counters are a journal's operation counts since it was opened, for tests
// and benchmarks that prove how many round trips the engine makes.
type Counters struct {
	Reads   int64 // queries that read journal rows
	Commits int64 // committed write transactions (each an fsync)
}

// CancelOptions tunes [Journal.Cancel] and resume.Engine.Cancel.
type CancelOptions struct {
	// Running also cancels a run that a live process is executing. The
	// process learns of it within a second ([Journal.CancelRequested]): it
	// cancels the context of the step it is executing (whose outcome is
	// journaled, as any step's), executes no further step but those
	// called from defer, and ends the run cancelled.
	Running bool
}

// ErrNoNotify is what a notifier ([WorkNotifier], [FinishNotifier]) returns
// when it sends no notification in its configuration (the PostgreSQL
// journal behind a transaction pooler, where no session lasts to LISTEN
// on): the engine polls, as it does when a notification is lost, and says
// so once, without a warning.
var ErrNoNotify = errors.New("this journal sends no notifications: polling")

// WorkNotifier is an optional interface of a [Journal] that can tell idle
// workers when a run may have become claimable (created pending, released
// by a draining worker, retried, resolved, accepted), so that
// resume.Engine.Work starts it at once instead of at its next poll. Polling
// stays the bound either way: runs whose lease expired raise no signal.
type WorkNotifier interface {
	// NotifyWork returns a channel closed when a run may have become
	// claimable after the call. An error means no signal can be had for
	// now: the worker polls, and asks again later.
	NotifyWork(ctx context.Context) (<-chan struct{}, error)
}

// ClaimedRun is one run a [BatchClaimer] claimed, with its journal as
// [Journal.ClaimNext] returns it.
type ClaimedRun struct {
	Run   RunRecord
	Steps []StepRecord
	// Err, if set, is why the run's journal could not be read (or, through
	// a decorator, opened): the run is claimed all the same, as a run
	// ClaimNext returns with an error is. The engine claims it again at
	// once from its own lease ([ClaimRequest.Abandoned]), or, failing that,
	// once the lease lapses (see [ClaimNextRequest.Holding]).
	Err error
}

// ClaimedOne is what [Journal.ClaimNext] returned as a
// [BatchClaimer.ClaimBatch] answer: no run and err, or the one run it
// claimed with its journal's error, if any. A decorator that passes
// ClaimBatch through answers so over a journal that claims one run at a
// time.
func ClaimedOne(r RunRecord, steps []StepRecord, err error) ([]ClaimedRun, error) {
	if r.RunID == "" {
		return nil, err
	}
	return []ClaimedRun{{Run: r, Steps: steps, Err: err}}, nil
}

// BatchClaimer is an optional interface of a [Journal] that claims
// several runs in one statement: a worker with several free slots asks
// for as many runs at once (resume.Engine.Work), instead of one round
// trip, and one commit, per run.
type BatchClaimer interface {
	// ClaimBatch claims up to max runs (at least one) by the rules of
	// ClaimNext, as if ClaimNext were called max times at once: the
	// oldest claimable ones, skipping those another claimer takes at the
	// same moment, so that no run is claimed by two claimers. Each comes
	// with its journal, or the error of its read. An error, and no run,
	// means nothing was claimed: ErrNoRunReady when no run could be. A wrapper of a journal (a decorator) implements it
	// only if it can pass it through; the engine calls ClaimNext
	// otherwise.
	ClaimBatch(ctx context.Context, c ClaimNextRequest, max int) ([]ClaimedRun, error)
}

// RunFilter selects runs to list. Zero fields match everything.
type RunFilter struct {
	Statuses []Status
	Workflow string
	Version  string
	Limit    int
	// Parent, if set, selects the child runs of that run.
	Parent string
	// CreatedAfter and CreatedBefore, if set, select runs created at or
	// after CreatedAfter and before CreatedBefore.
	CreatedAfter, CreatedBefore time.Time
	// IDContains, if set, selects runs whose id contains it, as bytes
	// (case-sensitive; % and _ are no wildcards).
	IDContains string
	// Newest lists newest first (by CreatedAt, then RunID, descending)
	// instead of oldest first.
	Newest bool
	// After, if set, is a keyset cursor: only runs that come after it in
	// the listing order are listed, so that reading a page skips no rows
	// by counting them. A page's next cursor is its last run's
	// [RunRecord.Cursor].
	After *RunCursor
}

// RunCursor is a position in a run listing: the run's creation time and
// id, which order runs (see [RunFilter.After]).
type RunCursor struct {
	CreatedAt time.Time
	RunID     string
}

// Cursor is r's position in a run listing.
func (r RunRecord) Cursor() *RunCursor { return &RunCursor{CreatedAt: r.CreatedAt, RunID: r.RunID} }

// Journal stores runs and their steps durably. Every method is safe for
// concurrent use. Implementations pass the journaltest conformance suite.
type Journal interface {
	// CreateRun inserts r unless a run with r.RunID exists. The new run is
	// pending, or, when r.LeaseOwner is set, already claimed by it: running
	// under that lease for r.LeaseUntil − r.CreatedAt, counted from the
	// journal's clock at the insert (see [ClaimRequest.Lease]), epoch 1,
	// first attempt, so that
	// its creator executes it at once (its journal is empty: nothing to
	// read) and no worker can take it first. A set r.Deadline is stored as
	// the journal's clock at the insert plus r.Deadline − r.CreatedAt; a
	// child run (r.Parent set) gets its parent's deadline when that is
	// earlier (or it has none of its own), and its parent's CancelRequested.
	// It returns the stored run and whether this call created it. A run
	// over the journal's limits is refused (see [CheckRun]).
	CreateRun(ctx context.Context, r RunRecord) (RunRecord, bool, error)
	// Claim takes the run for c.Owner for c.Lease: a pending run, a
	// running run whose lease expired, one held by c.Abandoned, or, with
	// c.TakeOverDead, one whose owner's liveness signal is released,
	// becomes running with its epoch and attempts incremented (and so its
	// ClaimsSinceProgress). It returns
	// the run and its journal, read in one query, in any order; a succeeded
	// step needs only its key, status, result and seq, any other all of
	// its columns but name and finished_at. A run in another state is
	// returned unchanged with ErrRunBusy wrapped, without its journal: a
	// refused claim (a finished run re-attached to, a run another process
	// holds) reads no step.
	Claim(ctx context.Context, c ClaimRequest) (RunRecord, []StepRecord, error)
	// ClaimNext claims the oldest claimable run (pending, or running with
	// an expired lease) of one of c.Workflows, like Claim, skipping runs
	// another worker is claiming at the same moment (PostgreSQL: FOR UPDATE
	// SKIP LOCKED). It returns ErrNoRunReady when there is none. A run
	// returned with an error is claimed, its journal unread (see
	// [ClaimedRun.Err]).
	ClaimNext(ctx context.Context, c ClaimNextRequest) (RunRecord, []StepRecord, error)
	// RenewLease extends a held lease to d from now, by the journal's clock
	// (see [ClaimRequest.Lease]). It is refused with ErrLeaseLost once the
	// lease's epoch moved on.
	RenewLease(ctx context.Context, l Lease, d time.Duration) error
	// WriteStep inserts or replaces the step's row in one commit. Writing
	// a step row under a lease (here, or in a StepTx's Commit) is the
	// run's progress: it sets its ClaimsSinceProgress to 0. A write
	// the engine retries after an error may find the row written: it
	// replaces it.
	WriteStep(ctx context.Context, l Lease, s StepRecord) error
	// BeginStep opens a transaction on the journal's database for a tx step.
	BeginStep(ctx context.Context, l Lease) (StepTx, error)
	// FinishRun records the run's end of this entry: succeeded, failed,
	// needs_attention or pending (released), with r's Output, Error,
	// AttentionStep, AttentionKind and FailedStep, and releases the lease.
	// It is progress: ClaimsSinceProgress becomes 0. A run asked to stop
	// (CancelRequested) that suspends is stored pending instead: its
	// unwinding must not wait for its wake-up.
	FinishRun(ctx context.Context, l Lease, r RunRecord) error
	// LoadRun reads a run and its journal.
	LoadRun(ctx context.Context, runID string) (RunRecord, []StepRecord, error)
	// ListRuns lists runs matching f, oldest first (newest first with
	// f.Newest), each with its LastStep, in one query.
	ListRuns(ctx context.Context, f RunFilter) ([]RunRecord, error)
	// CountRuns counts the runs matching f, per status, in one query. It
	// ignores f.Statuses, f.After and f.Limit, so that the counts say what
	// each status would list; a status no run has is absent.
	CountRuns(ctx context.Context, f RunFilter) (map[Status]int, error)
	// Resolve applies a person's resolution to an in_flight step of a run in
	// needs_attention, and makes the run pending again.
	Resolve(ctx context.Context, runID, stepKey string, r Resolution) error
	// Retry makes a failed run pending again and reopens the one step whose
	// failure ended it (its FailedStep): that row is no longer final and
	// gets a fresh retry budget. A run past its Deadline stays past it: it
	// stops again, as it did. Other failed rows stay final: the body
	// handled them, and they replay. A run with no FailedStep (its body
	// failed on its own) reopens nothing and replays everything. A run
	// parked on a journal row that could not be used (needs_attention,
	// [AttentionKindJournal]) is made pending as it is, once a person has
	// repaired the row: its next entry reads the journal anew, and parks
	// it again if a row still cannot be used. Its parents waiting on it
	// are woken, as by Resolve.
	Retry(ctx context.Context, runID string) error
	// Cancel stops an unfinished run. A run that can still unwind (running,
	// or pending or waiting with a step journaled or a child run) is asked
	// to: its CancelRequested and that of its unfinished descendants is set
	// to the journal's clock (a descendant that needs a person is cancelled
	// at once: it cannot unwind), a waiting one becomes pending, and so
	// do its ancestors that wait for it ([WaitChild]), so that an engine
	// takes it and unwinds it; it ends cancelled. Asking again changes
	// nothing. A run that cannot unwind (failed, needs_attention, or one
	// that never journaled a step nor started a child) is marked cancelled
	// at once, its lease moved on so that nothing can write it any more,
	// with its unfinished descendants; its parents waiting on it are
	// woken. A finished run is refused with ErrRunBusy, and so is a run a
	// live lease holds unless opts.Running.
	Cancel(ctx context.Context, runID string, opts CancelOptions) error
	// CancelRequested returns the run's CancelRequested (zero: none), in
	// one read of its row: an engine executing the run asks it every
	// second or so, so that a cancellation reaches a running run.
	CancelRequested(ctx context.Context, runID string) (time.Time, error)
	// SaveManifest stores m the first time its workflow version is seen
	// (giving it the next Seq), so a version mismatch can show which steps
	// differ and a run can be continued on a newer version; a row stored
	// without a Definition gets m's.
	SaveManifest(ctx context.Context, m ManifestRecord) error
	// LoadManifest returns a stored manifest row; found is false when the
	// version is unknown.
	LoadManifest(ctx context.Context, workflow, version string) (m ManifestRecord, found bool, err error)
	// Advertise records that owner's process can execute versions, at the
	// journal's clock, replacing what owner advertised before; nil
	// withdraws them. Workers leave runs pinned to an advertised version
	// to the processes that have it (see [ClaimNextRequest.Versions]).
	Advertise(ctx context.Context, owner string, versions []WorkflowVersion) error
	// MoveRun re-pins the run l holds to m.To (and to m.Workflow), relabels
	// its step rows by m.Renames, and appends m, stamped with the journal's
	// clock, to the run's moves, in one commit. A write under a lost lease
	// is refused with ErrLeaseLost.
	MoveRun(ctx context.Context, l Lease, m Move) error
	// Manifest returns a stored manifest, or "" when the version is unknown.
	Manifest(ctx context.Context, workflow, version string) (string, error)
	// ListManifests returns the stored manifests of a workflow, newest
	// (first seen last) first.
	ListManifests(ctx context.Context, workflow string) ([]ManifestRecord, error)
	// AcceptVersion moves a run stopped on a version change (needs_attention
	// with AttentionKind [AttentionKindVersion]) to version, pending, with its
	// attention cleared: its journaled steps replay under the new code by
	// key. Any other run is refused with ErrNotVersionStop (ErrRunNotFound
	// for an unknown one) and left unchanged. It appends a Move{By:
	// "operator", Why: "accepted by an operator"} to the run's moves.
	AcceptVersion(ctx context.Context, runID, version string) error
	// Counters returns the operation counts since the journal was opened.
	Counters() Counters
	// Close releases the journal's resources.
	Close() error

	// Schedules (resume.Engine.Schedule): one row per schedule name in
	// resume_schedules, advanced by compare-and-set on its revision, so
	// that any number of schedulers agree on it (see [ScheduleRecord]).

	// CreateSchedule inserts s, revision 1, unless a schedule named s.Name
	// exists. It returns the stored row and whether this call created it.
	CreateSchedule(ctx context.Context, s ScheduleRecord) (ScheduleRecord, bool, error)
	// UpdateSchedule replaces the schedule named s.Name with s, its
	// revision s.Revision+1, if the stored revision is still s.Revision,
	// and returns the stored row; otherwise it changes nothing and returns
	// ErrScheduleMoved wrapped (ErrScheduleNotFound for no row).
	UpdateSchedule(ctx context.Context, s ScheduleRecord) (ScheduleRecord, error)
	// LoadSchedule reads the schedule named name (ErrScheduleNotFound
	// wrapped when there is none).
	LoadSchedule(ctx context.Context, name string) (ScheduleRecord, error)
	// ListSchedules lists every schedule, by name.
	ListSchedules(ctx context.Context) ([]ScheduleRecord, error)

	// Waiting (see [StatusWaiting]). A run suspends by FinishRun with
	// StatusWaiting and its WaitKind, WaitName and WakeAt; ClaimNext also
	// claims a waiting run whose WakeAt passed by the journal's clock, and
	// Claim a waiting run at any time (its body suspends again if its wait
	// is not over).

	// Signal keeps s (RunID, Name, Payload) for the run's next await of
	// s.Name, numbered after the run's signals before it (its Seq) and
	// stamped with the journal's clock (SentAt), and makes the run pending
	// if it waits for that event (StatusWaiting, WaitKind [WaitSignal],
	// WaitName s.Name), and then its ancestors that wait for it
	// ([WaitChild]). It is refused with ErrRunNotFound for an unknown run
	// and ErrRunFinished for a finished one or one asked to stop
	// (CancelRequested). It returns the stored signal.
	//
	// No wake-up is lost to a run suspending at the same moment: FinishRun
	// to StatusWaiting for [WaitSignal] stores the run pending instead when
	// a signal of that name is kept for it, and for [WaitChild] when the
	// child no longer waits.
	Signal(ctx context.Context, s SignalRecord) (SignalRecord, error)
	// KeptSignal returns the oldest signal of the run named name that no
	// await consumed; ok is false when there is none.
	KeptSignal(ctx context.Context, runID, name string) (s SignalRecord, ok bool, err error)
	// TakeSignal writes await row s under lease l (fenced, like
	// WriteStep) and, when seq > 0, marks the run's signal seq consumed
	// by s.StepKey, in one commit: a signal is delivered to one await
	// only. A signal consumed already is refused, and nothing is written.
	TakeSignal(ctx context.Context, l Lease, seq int64, s StepRecord) error
	// ListSignals lists the signals sent to a run, consumed or not, in the
	// order they were sent.
	ListSignals(ctx context.Context, runID string) ([]SignalRecord, error)
	// NextWake returns how long, by the journal's clock, until the earliest
	// WakeAt of a waiting run of one of workflows (zero when one is due
	// now); ok is false when no such run has a WakeAt. An idle worker
	// sleeps that long instead of polling for due timers.
	NextWake(ctx context.Context, workflows []string) (d time.Duration, ok bool, err error)
}

// What a waiting run waits for, as stored in resume_runs.wait_kind.
const (
	// WaitSleep: resume.Sleep or SleepUntil, until WakeAt.
	WaitSleep = "sleep"
	// WaitSignal: resume.Await of the event WaitName, until WakeAt (its
	// timeout) or, when WakeAt is zero, for ever.
	WaitSignal = "signal"
	// WaitStart: a run enqueued to start not before WakeAt.
	WaitStart = "start"
	// WaitChild: a child run (WaitName) that waits, until WakeAt or a
	// signal addressed to it.
	WaitChild = "child"
)

// SignalRecord is one row of resume_signals: an event sent to a run, kept
// until an await of its name consumes it.
type SignalRecord struct {
	RunID   string
	Name    string
	Seq     int64           // order among the run's signals, from 1
	Payload json.RawMessage // JSON; the await's result
	SentAt  time.Time
	// ConsumedKey is the step key of the await that received it, "" while
	// it is kept.
	ConsumedKey string
}

// ErrRunFinished is returned when signalling a run that has finished
// (succeeded, failed or cancelled).
var ErrRunFinished = errors.New("run is finished")

// FinishNotifier is an optional interface of a [Journal] that can tell a
// process when a run may have finished, so that resume.Engine.Wait does not
// poll (the PostgreSQL journal: a NOTIFY on each finish).
type FinishNotifier interface {
	// NotifyFinish returns a channel closed when a run may have finished
	// after the call. An error means no signal can be had for now.
	NotifyFinish(ctx context.Context) (<-chan struct{}, error)
}

// StepTx is an open transaction for a tx step.
type StepTx interface {
	// Handle is what resume.Tx hands the step's code: a *sql.Tx or a pgx.Tx.
	Handle() any
	// Commit writes s in the transaction and commits it.
	Commit(ctx context.Context, s StepRecord) error
	// Rollback abandons the transaction; after Commit it does nothing. A
	// transaction that ended with its connection is reported as
	// [ErrTxLost].
	Rollback() error
}

// ErrTxLost is what a [StepTx]'s Rollback returns (wrapped) when the
// transaction ended with its connection before it could be rolled back:
// the server aborted it, and nothing of it committed (PostgreSQL: a
// terminated session, a server restart, or pgx closing the connection of
// a statement whose context ended while it was on the wire). The step's
// attempt then has no outcome of its own: the engine journals the run's
// stop when the run was asked to stop meanwhile, and otherwise stops the
// run without journaling the attempt, so that it is resumed and the step
// executes again, as after a crash.
var ErrTxLost = errors.New("the step's transaction ended with its connection: nothing of it committed")

// ErrNoJournal is the error of a read-only open (a journal's OpenReadOnly,
// openjournal.OpenReadOnly) of a database that holds no resumegen journal:
// an unrelated SQLite file or an empty PostgreSQL database. A read-only
// open never creates one.
var ErrNoJournal = errors.New("no resumegen journal in this database")

// ErrOlderJournal is the error of a read-only open of a journal whose
// schema is older than the program's: it cannot be read before a program
// that opens it for writing (a worker) upgrades it.
var ErrOlderJournal = errors.New("the journal's schema is older than this program's")

// sealedPrefix starts every value a codec (resume.WithCodec) sealed, as
// stored: resume's envelope, {"resume:sealed":"v1","data":...}.
const sealedPrefix = `{"resume:sealed":`

// IsSealed reports whether a stored value (an input, output, result, error
// or error detail) was sealed by a codec (resume.Codec): it cannot be read
// without the codec's key.
func IsSealed(stored []byte) bool { return bytes.HasPrefix(stored, []byte(sealedPrefix)) }

// EncodeHistory is a step's attempt history as journals store it: a JSON
// list of attempts, or nil (NULL) when there is none.
func EncodeHistory(h []AttemptRecord) (json.RawMessage, error) {
	if len(h) == 0 {
		return nil, nil
	}
	b, err := json.Marshal(h)
	if err != nil {
		return nil, fmt.Errorf("encode attempt history: %w", err)
	}
	return b, nil
}

// DecodeHistory reads a stored attempt history; empty is none. An error
// says what makes the value unusable, for [StepRecord.Unreadable].
func DecodeHistory(b []byte) ([]AttemptRecord, error) {
	if len(b) == 0 {
		return nil, nil
	}
	var out []AttemptRecord
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, fmt.Errorf("history %s is not a list of attempts: %v", preview(b), err)
	}
	return out, nil
}

// StepName returns the step name of a journal key: "A#2" -> "A", "A[k]" -> "A".
func StepName(key string) string {
	if i := strings.IndexAny(key, "#["); i >= 0 {
		return key[:i]
	}
	return key
}

// RenameKey relabels a journal key by renames (old name -> new name):
// "A#2" -> "B#2", "A[k]" -> "B[k]"; a key whose name is not renamed is returned as is.
func RenameKey(key string, renames map[string]string) string {
	name := StepName(key)
	if to, ok := renames[name]; ok {
		return to + key[len(name):]
	}
	return key
}

// OriginKey is the key that step key of a run had when the run could
// first execute the step: its name followed back through the renames of
// the run's moves (Move.Renames), newest first, with its occurrence or
// key= suffix kept ("Rate#2" renamed from "Score" is "Score#2"). A run
// that never moved, or a step never renamed, has key itself. A step's
// idempotency key and its child run's id derive from it, so that they
// survive every rename a move records, whether the step's row was
// journaled or not.
//
// Two steps of one run never share an origin: a name that a move renamed
// away and that a later version gives to a new step is that new step's
// own, marked with the move's place in the list ("Score@2#2" for a Score
// added after the second move renamed the first Score away); a step name
// holds no '@'. A step renamed from two names of one version (a merge)
// takes the first of them in byte order.
func OriginKey(moves []Move, key string) string {
	name := StepName(key)
	origin := name
	for i := len(moves) - 1; i >= 0; i-- {
		renames := moves[i].Renames
		if len(renames) == 0 {
			continue
		}
		if from, ok := renamedFrom(renames, origin); ok {
			origin = from
			continue
		}
		if _, gone := renames[origin]; gone {
			origin += "@" + strconv.Itoa(i+1)
			break
		}
	}
	if origin == name {
		return key
	}
	return origin + key[len(name):]
}

// renamedFrom is the name renames maps to name (the first in byte order
// when several do).
func renamedFrom(renames map[string]string, name string) (string, bool) {
	from, found := "", false
	for old, to := range renames {
		if to == name && (!found || old < from) {
			from, found = old, true
		}
	}
	return from, found
}

// EncodeMoves is a run's moves as journals store them: a JSON list, or nil
// (NULL) when there is none.
func EncodeMoves(m []Move) (json.RawMessage, error) {
	if len(m) == 0 {
		return nil, nil
	}
	b, err := json.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("encode moves: %w", err)
	}
	return b, nil
}

// DecodeMoves reads a run's stored moves; empty (NULL) is none. An error
// says what makes the value unusable, for [RunRecord.Unreadable].
func DecodeMoves(b []byte) ([]Move, error) {
	if len(b) == 0 {
		return nil, nil
	}
	var out []Move
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, fmt.Errorf("moves %s is not a list of moves: %v", preview(b), err)
	}
	return out, nil
}

// RelabelRow is one step row of a run a move relabels (see
// [Journal.MoveRun] and [PlanRelabel]), as a journal reads it.
type RelabelRow struct {
	Key, Name string
	Status    StepStatus
	Final     bool
	// HasChild reports whether a run with the child run id of the row's key
	// (the run's id, a slash, the key) exists.
	HasChild bool
	// NewKey and NewName are the row's key and name after the move
	// (PlanRelabel fills them).
	NewKey, NewName string
}

// Relabel applies a plan of PlanRelabel through update, which changes the
// key of one row (from) to another (to) and its name to name, inside the
// caller's transaction. It moves every row to a temporary key first
// (":" and its new key, which no step key starts with), then to its new
// key, so that swapped or chained renames never meet a key still in use.
func Relabel(plan []RelabelRow, update func(from, to, name string) error) error {
	for _, phase := range [2]func(RelabelRow) (from, to string){
		func(s RelabelRow) (string, string) { return s.Key, ":" + s.NewKey },
		func(s RelabelRow) (string, string) { return ":" + s.NewKey, s.NewKey },
	} {
		for _, s := range plan {
			from, to := phase(s)
			if err := update(from, to, s.NewName); err != nil {
				return err
			}
		}
	}
	return nil
}

// PlanRelabel returns the rows of run runID that renames relabel, with
// their new key and name, or why the move cannot relabel them: two rows
// would get one key, or a renamed row whose outcome is not settled
// (succeeded, or failed final) has a child run, which the engine finds by
// the row's key: relabelled, the step would start its child anew.
func PlanRelabel(runID string, rows []RelabelRow, renames map[string]string) ([]RelabelRow, error) {
	var plan []RelabelRow
	byKey := make(map[string]string, len(rows))
	for _, s := range rows {
		s.NewKey, s.NewName = RenameKey(s.Key, renames), s.Name
		if to, ok := renames[s.Name]; ok {
			s.NewName = to
		}
		if prev, ok := byKey[s.NewKey]; ok {
			return nil, fmt.Errorf("run %s: steps %s and %s would both be %s after the rename", runID, prev, s.Key, s.NewKey)
		}
		byKey[s.NewKey] = s.Key
		if s.NewKey == s.Key && s.NewName == s.Name {
			continue
		}
		if s.HasChild && s.Status != StepSucceeded && !(s.Status == StepFailed && s.Final) {
			return nil, fmt.Errorf("run %s, step %s: its child run %s/%s has no settled outcome in the journal: renamed %s, the step would start a new child run",
				runID, s.Key, runID, s.Key, s.NewKey)
		}
		plan = append(plan, s)
	}
	return plan, nil
}

// ActionRecord is one row of resume_actions: an operator's write action on
// a run (resolve, retry, cancel, accept-version, signal) as resumectl or
// its web UI did it: who, what, when and from where. Values (results,
// payloads) are never in it: a sealed journal keeps them sealed elsewhere.
type ActionRecord struct {
	RunID string
	// Seq orders the run's actions, from 1.
	Seq int64
	// Action is the action's name: resolve, retry, cancel, accept-version,
	// signal or fork ([ActionFork], recorded on both runs).
	Action string
	// Detail says what it did beyond its name ("step Charge done", "to
	// version v3", "event approval"), "" when nothing.
	Detail string
	// Actor is who acted: the UI's signed-in user or the name a trusted
	// proxy vouched for, or the operating-system user of resumectl.
	Actor string
	// Origin is from where: the UI request's remote address (and the
	// address a trusted proxy forwarded for), or resumectl's host name.
	Origin string
	// Via is the tool: "resumectl" or "ui".
	Via string
	// At is when, by the journal's clock; the journal stamps it.
	At time.Time
}

type actionKey struct{}

// WithAction returns ctx carrying a: a journal that implements [Auditor]
// records it in the same transaction as the write that ctx is passed to
// (Resolve, Retry, Cancel, AcceptVersion, Signal), for the run that write
// names, and only if that write commits.
func WithAction(ctx context.Context, a ActionRecord) context.Context {
	return context.WithValue(ctx, actionKey{}, a)
}

// ActionOf returns the action [WithAction] put in ctx.
func ActionOf(ctx context.Context) (ActionRecord, bool) {
	a, ok := ctx.Value(actionKey{}).(ActionRecord)
	return a, ok
}

// Auditor is an optional interface of a [Journal] that records operators'
// actions ([WithAction]) in resume_actions and lists them.
type Auditor interface {
	// ListActions lists the actions on run runID, oldest first.
	ListActions(ctx context.Context, runID string) ([]ActionRecord, error)
}

// KeyRecord is one row of resume_keys: the id of a key that sealed values
// of the journal (resume.WithCodec), and when the journal first saw it.
type KeyRecord struct {
	KeyID string
	// FirstSealedAt is when, by the journal's clock, a program first said
	// it seals with the key.
	FirstSealedAt time.Time
}

// KeyRegistry is an optional interface of a [Journal] that records which
// keys seal its values, so that a tool (resumectl) knows the journal is
// sealed, and with which keys, before it writes a value into it.
type KeyRegistry interface {
	// RecordKeys notes that values of the journal are sealed by the key
	// ids (once per id; an id seen before keeps its time).
	RecordKeys(ctx context.Context, ids []string) error
	// SealingKeys lists the recorded key ids, first seen first; none
	// means that no program ever sealed a value of this journal.
	SealingKeys(ctx context.Context) ([]KeyRecord, error)
}

// Unwrapper is a [Journal] that decorates another one (resume.SealJournal).
type Unwrapper interface {
	Unwrap() Journal
}

// Find returns the first journal among j and the journals it decorates
// ([Unwrapper]) that is a T.
func Find[T any](j Journal) (T, bool) {
	for j != nil {
		if t, ok := j.(T); ok {
			return t, true
		}
		u, ok := j.(Unwrapper)
		if !ok {
			break
		}
		j = u.Unwrap()
	}
	var zero T
	return zero, false
}
