package resume

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/resumegen/resumegen/runtime/journal"
)

// Engine runs workflows over a journal. It is safe for concurrent use; runs
// of different ids proceed in parallel.
type Engine struct {
	journal      Journal
	owner        string
	lease        time.Duration
	writeTimeout time.Duration
	logger       *slog.Logger
	// now and at are the engine's clock (see WithClock).
	now func() time.Time
	at  func(time.Time) <-chan time.Time
	// clock is the journal's clock, as this engine reads it: durable
	// times come from it (see journalNow).
	clock journalClock

	faults      []Fault
	faultAction func()
	faultMu     sync.Mutex
	faultsFired map[Fault]bool

	// dying is set once a panic that stands for the process's death
	// unwinds (see WithCrashPanics): no later panic is recovered.
	dying   atomic.Bool
	isCrash func(any) bool
	// crashLoopLimit is how many claims of a run in a row may end without
	// progress (see WithCrashLoopLimit).
	crashLoopLimit int

	manifests sync.Map // workflow+"@"+version → struct{}: manifest saved

	// retention is what Work purges, and how often (see WithRetention).
	retention retention

	// receivers are the values to run method workflows on, by type (see
	// WithReceiver).
	receivers map[reflect.Type]any

	// held counts, by run id, the entries of runs this engine executes
	// now (see journal.ClaimNextRequest.Holding).
	heldMu sync.Mutex
	held   map[string]int

	tracer Tracer // see WithTracer

	// overrun is the overrun action (see WithOverrunAction); nil:
	// ExitOnOverrun.
	overrun func(Overrun)

	// queues are the queue limits Work stores (see WithQueues).
	queues []Queue

	// unwindTimeout bounds the deferred steps of a run that must stop (see
	// WithUnwindTimeout).
	unwindTimeout time.Duration
}

// hold records that this engine executes run runID until release is
// called.
func (e *Engine) hold(runID string) (release func()) {
	e.heldMu.Lock()
	defer e.heldMu.Unlock()
	if e.held == nil {
		e.held = map[string]int{}
	}
	e.held[runID]++
	return func() {
		e.heldMu.Lock()
		defer e.heldMu.Unlock()
		if e.held[runID]--; e.held[runID] <= 0 {
			delete(e.held, runID)
		}
	}
}

// executes reports whether this engine executes run runID now.
func (e *Engine) executes(runID string) bool {
	e.heldMu.Lock()
	defer e.heldMu.Unlock()
	return e.held[runID] > 0
}

// holding lists the runs this engine executes now.
func (e *Engine) holding() []string {
	e.heldMu.Lock()
	defer e.heldMu.Unlock()
	out := make([]string, 0, len(e.held))
	for id := range e.held {
		out = append(out, id)
	}
	return out
}

// Option configures an [Engine].
type Option func(*Engine)

// WithFault makes the engine inject f: at f.Point of step f.Step the fault
// action runs (by default the process kills itself with SIGKILL). Each fault
// strikes once per engine.
func WithFault(f Fault) Option {
	return func(e *Engine) { e.faults = append(e.faults, f) }
}

// WithFaultAction replaces the action of injected faults, for in-process
// tests (for instance a panic caught by the test). The default is
// [KillProcess].
func WithFaultAction(action func()) Option {
	return func(e *Engine) { e.faultAction = action }
}

// WithLease sets how long a claimed run is held without renewal before
// another process may take it over (default 30s). The engine renews it at a
// third of that while the run executes.
func WithLease(d time.Duration) Option {
	return func(e *Engine) { e.lease = d }
}

// WithOwner names this engine in the runs it claims (default: host name,
// process id and a random suffix).
func WithOwner(name string) Option {
	return func(e *Engine) { e.owner = name }
}

// WithLogger sets where the engine logs runs it parks or fails to finish
// (default: slog.Default()).
func WithLogger(l *slog.Logger) Option {
	return func(e *Engine) { e.logger = l }
}

// NewEngine returns an engine over j.
func NewEngine(j Journal, opts ...Option) *Engine {
	e := &Engine{
		journal:      j,
		lease:        30 * time.Second,
		writeTimeout: 30 * time.Second,
		logger:       slog.Default(),
		now:          time.Now,
		at:           systemAt,
		faultAction:  KillProcess,
		faultsFired:  map[Fault]bool{},

		crashLoopLimit: DefaultCrashLoopLimit,
		unwindTimeout:  DefaultUnwindTimeout,
	}
	for _, o := range opts {
		o(e)
	}
	if e.owner == "" {
		e.owner = defaultOwner()
	}
	return e
}

// defaultOwner names this process: host/pid/random, for operators to read.
// Nothing parses it: whether an owner is alive is the journal's liveness
// signal ([journal.Liveness]), never its pid, which means nothing in another PID
// namespace and may name a zombie.
func defaultOwner() string {
	host, _ := os.Hostname()
	var b [4]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("%s/%d/%s", host, os.Getpid(), hex.EncodeToString(b[:]))
}

// keepAlive makes the journal hold this engine's liveness signal, if it
// has one ([journal.Liveness]), before the engine holds any run: a claim by an
// owner whose signal is not held could be taken for a dead one's.
func (e *Engine) keepAlive(ctx context.Context) error {
	l, ok := livenessOf(e.journal)
	if !ok {
		return nil
	}
	if err := l.KeepAlive(ctx, e.owner); err != nil {
		return fmt.Errorf("owner %s: hold the liveness signal: %w", e.owner, err)
	}
	return nil
}

// ownerGone reports whether the journal's liveness signal says owner's
// process ended. A journal without liveness never says so.
func (e *Engine) ownerGone(ctx context.Context, owner string) bool {
	l, ok := livenessOf(e.journal)
	if !ok || owner == "" || owner == e.owner {
		return false
	}
	gone, err := l.OwnerGone(ctx, owner)
	if err != nil {
		e.logger.Warn("cannot tell whether a run's owner is alive; waiting out its lease", "owner", owner, "err", err)
	}
	return err == nil && gone
}

// Journal returns the engine's journal.
func (e *Engine) Journal() Journal { return e.journal }

// Result is what a run came to.
type Result struct {
	RunID    string
	Workflow string
	Version  string
	Status   Status
	// Output is the workflow's result as JSON, once succeeded; for a failed
	// run, the value its body returned beside its error, if it has one.
	Output json.RawMessage
	// Error says why a run failed or needs attention.
	Error string
	// AttentionStep is the step key a person must look at, if any.
	AttentionStep string
	// AttentionKind is why the run needs attention: [AttentionKindStep],
	// [AttentionKindResult], [AttentionKindJournal], [AttentionKindVersion],
	// or "" when it does not.
	AttentionKind string
	// FailedStep is, for a failed run, the step whose failure ended it: the
	// one a retry executes again ("" when the body failed on its own).
	FailedStep string
	// WaitKind, WaitName and WakeAt say what a run in [StatusWaiting] waits
	// for ("sleep", "signal" and the event's name, "start", or "child"
	// and the child run's id) and until when (zero: for ever).
	WaitKind string
	WaitName string
	WakeAt   time.Time
	// ContinuedAs is, for a run whose body ended with [ContinueAsNew]
	// (succeeded, its Output null), the id of the run that continues it;
	// ContinuedFrom is the run this one continues. Both are "" otherwise.
	ContinuedAs   string
	ContinuedFrom string
}

// Decode decodes the run's output into v.
func (r Result) Decode(v any) error {
	if err := json.Unmarshal(r.Output, v); err != nil {
		return fmt.Errorf("run %s: decode output: %w", r.RunID, err)
	}
	return nil
}

func resultOf(r journal.RunRecord) Result {
	return Result{
		RunID: r.RunID, Workflow: r.Workflow, Version: r.Version, Status: r.Status,
		Output: r.Output, Error: r.Error, AttentionStep: r.AttentionStep,
		AttentionKind: r.AttentionKind, FailedStep: r.FailedStep,
		WaitKind: r.WaitKind, WaitName: r.WaitName, WakeAt: r.WakeAt,
		ContinuedAs: r.ContinuedAs, ContinuedFrom: r.ContinuedFrom,
	}
}

// err returns nil for a succeeded run and a *RunError otherwise.
func (r Result) err() error {
	if r.Status == StatusSucceeded {
		return nil
	}
	msg := r.Error
	if r.Status == StatusWaiting {
		msg = "waiting for " + describeWait(r.WaitKind, r.WaitName, r.WakeAt)
	}
	if msg == "" {
		msg = "run is " + string(r.Status)
	}
	return &RunError{RunID: r.RunID, Status: r.Status, Step: r.AttentionStep, Kind: r.AttentionKind, Msg: msg}
}

// Run starts run runID of workflow wf with input in, or attaches to it if it
// exists, executes it in this process and returns its output. See
// [Engine.Start].
func Run[In, Out any](ctx context.Context, e *Engine, runID string, wf func(context.Context, In) (Out, error), in In) (Out, error) {
	var out Out
	res, err := e.Start(ctx, runID, wf, in)
	if err != nil {
		return out, err
	}
	return out, res.Decode(&out)
}

// Start runs run runID of the registered workflow function wf with args
// (the workflow's parameters after its context) in this process, and
// returns what it came to. The run id is the run's idempotency key:
//
//   - a new id creates the run and executes it;
//   - an unfinished run with that id is resumed (its journaled steps are not
//     executed again), unless another live process holds it: then Start
//     returns [ErrRunBusy] and executes nothing;
//   - a finished run returns its journaled outcome and executes nothing.
//
// An id reused for another workflow or another input is refused with
// [ErrRunConflict]. A run that did not succeed returns its Result together
// with a *[RunError].
func (e *Engine) Start(ctx context.Context, runID string, wf any, args ...any) (Result, error) {
	if def, err := lookupStart(wf); err == nil && def.Queue != "" {
		return Result{}, queuedError(runID, def)
	}
	// A new run is created already claimed by this process: no worker
	// sharing the journal can take it first, and its journal is empty, so
	// it runs without a claim or a read.
	stored, created, err := e.create(ctx, runID, wf, args, true)
	if err != nil {
		return Result{}, err
	}
	if created {
		return e.runClaimed(ctx, stored, nil, nil)
	}
	if stored.Status.Finished() || stored.Status == StatusNeedsAttention {
		// Re-attaching to a run no claim can take: its row says it all.
		res := resultOf(stored)
		return res, res.err()
	}
	return e.execute(ctx, runID)
}

// Enqueue creates run runID of the registered workflow function wf with
// args, pending, for a worker ([Engine.Work], in any process sharing the
// journal) to execute, and returns it without executing anything. Like
// Start, an existing id is left as it is (the run is not created twice) and
// an id reused for another workflow or input is refused with
// [ErrRunConflict].
func (e *Engine) Enqueue(ctx context.Context, runID string, wf any, args ...any) (Result, error) {
	stored, _, err := e.create(ctx, runID, wf, args, false)
	return resultOf(stored), err
}

// create stores run runID unless it exists, and checks that an existing run
// is the same workflow with the same input. With hold, a new run is stored
// running under a lease of this engine instead of pending. It reports
// whether this call created the run.
func (e *Engine) create(ctx context.Context, runID string, wf any, args []any, hold bool) (journal.RunRecord, bool, error) {
	return e.createAt(ctx, runID, wf, args, hold, time.Time{})
}

// createAt is create; a new run not held, and with at set, waits to start
// until at (see EnqueueAt).
func (e *Engine) createAt(ctx context.Context, runID string, wf any, args []any, hold bool, at time.Time) (journal.RunRecord, bool, error) {
	def, err := lookupStart(wf)
	if err != nil {
		return journal.RunRecord{}, false, err
	}
	if runID == "" {
		return journal.RunRecord{}, false, errors.New("resume: empty run id")
	}
	if err := journal.CheckRunID(runID); err != nil {
		// The id is not repeated whole: it is what is wrong.
		return journal.RunRecord{}, false, fmt.Errorf("resume: a run of %s: %w: name the run by something shorter (a hash of it, for instance)", def.QualifiedName(), err)
	}
	if hold {
		// This engine executes the new run at once: it must be able to.
		if err := e.canRun(def); err != nil {
			return journal.RunRecord{}, false, fmt.Errorf("run %s: %w", runID, err)
		}
	}
	if err := checkArgs(wf, args); err != nil {
		return journal.RunRecord{}, false, fmt.Errorf("run %s of %s: %w", runID, def.QualifiedName(), err)
	}
	input, err := encodeArgs(args)
	if err == nil {
		err = journal.CheckValue("input", input)
	}
	if err != nil {
		return journal.RunRecord{}, false, fmt.Errorf("run %s of %s: %w", runID, def.QualifiedName(), err)
	}
	if err := e.saveManifest(ctx, def); err != nil {
		return journal.RunRecord{}, false, err
	}
	// The journal's clock: runs are claimed oldest first, whichever
	// host's clock created them.
	now, _, err := e.journalNow(ctx)
	if err != nil {
		return journal.RunRecord{}, false, fmt.Errorf("run %s: %w", runID, err)
	}
	r := journal.RunRecord{
		RunID: runID, Workflow: def.QualifiedName(), Version: def.Version,
		Status: StatusPending, Input: json.RawMessage(input), CreatedAt: now, UpdatedAt: now,
	}
	if !hold && !at.IsZero() {
		r.WaitKind, r.WakeAt = journal.WaitStart, journalTime(at)
	}
	if err := queueOf(ctx, def, &r); err != nil {
		return journal.RunRecord{}, false, fmt.Errorf("run %s of %s: %w", runID, def.QualifiedName(), err)
	}
	if d := runTimeout(ctx, def); d > 0 {
		r.Deadline = now.Add(d) // the journal counts it from its own clock
	}
	if hold {
		if err := e.keepAlive(ctx); err != nil {
			return journal.RunRecord{}, false, fmt.Errorf("run %s: %w", runID, err)
		}
		r.LeaseOwner, r.LeaseUntil = e.owner, now.Add(e.lease)
	}
	sent := time.Now()
	stored, created, err := e.journal.CreateRun(ctx, r)
	if err != nil {
		return journal.RunRecord{}, false, fmt.Errorf("run %s: create: %w", runID, err)
	}
	if created && hold {
		stored.LeaseUntil = heldUntil(sent, e.lease)
	}
	if !def.named(stored.Workflow) || !bytes.Equal(compactJSON(stored.Input), compactJSON(input)) {
		// The stored input is not repeated: inputs hold personal data.
		return stored, false, fmt.Errorf("run %s: %w: it is a run of %s with other input (runs show %s prints it)", runID, ErrRunConflict, stored.Workflow, runID)
	}
	return stored, created, nil
}

func compactJSON(b []byte) []byte {
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		return b
	}
	return buf.Bytes()
}

// Resume continues run runID in this process from its journal; see
// [Engine.Start]. A finished run returns its outcome without executing.
func (e *Engine) Resume(ctx context.Context, runID string) (Result, error) {
	return e.execute(ctx, runID)
}

// ResumeAll resumes, one after another, every run that is pending, whose
// process died (running with an expired lease), or whose wait's time has
// passed, oldest first: call it at startup. A run pinned to a version of
// its workflow this program does not have is continued on the program's
// version, or parked, only when no live worker has its version (as
// [Engine.Work] decides); one pinned to a newer version is left alone. It
// returns each resumed run's result; a run that did not succeed is
// reported in its Result, not as an error. The error is the first journal
// failure.
func (e *Engine) ResumeAll(ctx context.Context) ([]Result, error) {
	runs, err := e.journal.ListRuns(ctx, journal.RunFilter{Statuses: []Status{StatusPending, StatusRunning, StatusWaiting}})
	if err != nil {
		return nil, fmt.Errorf("resume all: list runs: %w", err)
	}
	now, _, err := e.journalNow(ctx)
	if err != nil {
		return nil, fmt.Errorf("resume all: %w", err)
	}
	var out []Result
	others := 0
	for _, r := range runs {
		if r.Parent != "" {
			continue // its parent executes it
		}
		if r.Status == StatusWaiting && (r.WakeAt.IsZero() || r.WakeAt.After(now)) {
			continue // its wait is not over, by the journal's clock
		}
		if r.Queue != "" && r.Status != StatusRunning {
			continue // it starts within its queue's limits, by a worker's claim
		}
		if r.Status == StatusRunning && r.LeaseUntil.After(now) && !e.ownerGone(ctx, r.LeaseOwner) {
			continue // another live process holds it
		}
		if _, ok := lookupVersion(r.Workflow, r.Version); !ok {
			// Another program's workflow, or another version: a process
			// that has it may be running.
			others++
			continue
		}
		res, err := e.execute(ctx, r.RunID)
		if out, err = appendResumed(out, res, err); err != nil {
			return out, err
		}
	}
	if others == 0 {
		return out, nil
	}
	return e.resumeOtherVersions(ctx, out, others)
}

// resumeOtherVersions claims, up to n times, a run of this program's
// workflows pinned to an older version (by the code's lineage) that no
// live process has (see journal.ClaimNextRequest.Older), and continues or
// parks it.
func (e *Engine) resumeOtherVersions(ctx context.Context, out []Result, n int) ([]Result, error) {
	if err := e.SaveManifests(ctx); err != nil {
		return out, fmt.Errorf("resume all: %w", err)
	}
	if err := e.keepAlive(ctx); err != nil {
		return out, fmt.Errorf("resume all: %w", err)
	}
	versions := e.runnableVersions()
	older := e.olderVersions(versions)
	for i := 0; i < n && len(versions) > 0; i++ {
		sent := time.Now()
		run, steps, err := e.journal.ClaimNext(ctx, journal.ClaimNextRequest{
			Owner: e.owner, Lease: e.lease, Workflows: workflowsOf(versions), Holding: e.holding(),
			Versions: versions, Older: older, AdvertisedWithin: 3 * e.lease,
		})
		if errors.Is(err, journal.ErrNoRunReady) {
			break
		}
		if err != nil {
			return out, fmt.Errorf("resume all: claim: %w", err)
		}
		run.LeaseUntil = heldUntil(sent, e.lease)
		res, err := e.runClaimed(ctx, run, steps, nil)
		if out, err = appendResumed(out, res, err); err != nil {
			return out, err
		}
	}
	return out, nil
}

// appendResumed adds a resumed run's result to out, and returns err if it
// is a journal failure rather than the run's own outcome.
func appendResumed(out []Result, res Result, err error) ([]Result, error) {
	if errors.As(err, new(*notHere)) {
		return out, nil // pinned to a version left to a process that has it
	}
	var runErr *RunError
	if err != nil && !errors.As(err, &runErr) && !errors.Is(err, ErrRunBusy) {
		return out, err
	}
	return append(out, res), nil
}

// Resolve applies a person's decision to the in_flight step stepKey of run
// runID, which waits in needs_attention: done (the step happened; the run
// continues past it with res.Result) or redo (it executes again, once). It
// does not run the workflow: call [Engine.Resume] for that. It is refused for
// a step that is not in_flight ([ErrNotInFlight]) and for a run that is not
// waiting for a person ([ErrRunBusy]).
func (e *Engine) Resolve(ctx context.Context, runID, stepKey string, res Resolution) error {
	if res.Done && len(res.Result) > 0 && !json.Valid(res.Result) {
		return fmt.Errorf("run %s, step %s: resolution result is not valid JSON", runID, stepKey)
	}
	if err := journal.CheckValue("resolution result", res.Result); err != nil {
		return fmt.Errorf("run %s, step %s: %w", runID, stepKey, err)
	}
	if res.Done {
		if err := e.checkResolution(ctx, runID, stepKey, res.Result); err != nil {
			return err
		}
	}
	if err := e.journal.Resolve(ctx, runID, stepKey, res); err != nil {
		return fmt.Errorf("run %s, step %s: resolve: %w", runID, stepKey, err)
	}
	return nil
}

// checkResolution refuses a result given for step stepKey of run runID
// that does not have the shape of what the step journals, as the
// manifest of the run's version records it (the program's own, when the
// journal has none): every resume would fail to decode it. The result
// defaults to null. A manifest that does not record the shape (stored by
// an older resumegen) lets the result through: a resume that cannot
// decode it parks the run (journal) naming the row.
func (e *Engine) checkResolution(ctx context.Context, runID, stepKey string, result json.RawMessage) error {
	run, steps, err := e.journal.LoadRun(ctx, runID)
	if err != nil {
		return fmt.Errorf("run %s, step %s: resolve: %w", runID, stepKey, err)
	}
	name := ""
	for _, s := range steps {
		if s.StepKey == stepKey && s.Status == journal.StepInFlight {
			name = s.Name
		}
	}
	if name == "" || run.Status != StatusNeedsAttention {
		return nil // the journal refuses it, saying why
	}
	manifest, err := e.journal.Manifest(ctx, run.Workflow, run.Version)
	if err != nil {
		return fmt.Errorf("run %s, step %s: resolve: read the manifest of version %s: %w", runID, stepKey, run.Version, err)
	}
	if def, ok := lookupVersion(run.Workflow, run.Version); ok && !strings.Contains(manifest, name+": journals ") {
		manifest = def.Manifest()
	}
	if len(result) == 0 {
		result = nullResult
	}
	err = CheckStepResult(manifest, name, result)
	if err != nil && !errors.Is(err, ErrShapeUnknown) {
		return fmt.Errorf("run %s, step %s: resolution result %s does not fit the step: %w", runID, stepKey, preview(result), err)
	}
	return nil
}

// Retry makes failed run runID pending again and resumes it in this
// process. Only the failure that ended the run executes again, with a fresh
// retry budget: the step whose failure the body returned with. Nothing that
// succeeded executes again, and neither does a failure the body handled
// (it replays). A run whose body failed on its own, right after a success,
// has no such step: the retry replays the whole journal, and the body
// decides again. A run parked on a journal row that could not be used is
// retried once a person repaired the row: it parks again if the row still
// cannot be used.
func (e *Engine) Retry(ctx context.Context, runID string) (Result, error) {
	if err := e.journal.Retry(ctx, runID); err != nil {
		return Result{}, fmt.Errorf("run %s: retry: %w", runID, err)
	}
	res, err := e.execute(ctx, runID)
	if errors.Is(err, ErrQueued) {
		// Pending again, in its queue: a worker executes it.
		return res, nil
	}
	return res, err
}

// Cancel stops unfinished run runID and its unfinished child runs. A run
// with nothing to unwind (failed, waiting for a person, or one that never
// executed a step) is cancelled at once. Any other is asked to stop: the
// engine that executes it next (a worker, [Engine.Resume]), or the one
// executing it now, within a second, replays its journal, and the first
// step call that would execute returns a *[StopError] instead; the body
// unwinds, the steps it calls from defer (its compensations) execute
// (see [WithUnwindTimeout]), and the run ends cancelled. A parent waiting
// on it is woken, and its step fails with an error matching
// [ErrRunCancelled]. A run that a live process is executing is refused
// with [ErrRunBusy] unless opts.Running (see [CancelOptions]); that
// process's [Engine.Start] or [Engine.Resume] then returns a *[RunError]
// matching [ErrRunCancelled]. Cancel returns once the stop is recorded;
// [Engine.Wait] waits for the run to end.
func (e *Engine) Cancel(ctx context.Context, runID string, opts CancelOptions) error {
	if err := e.journal.Cancel(ctx, runID, opts); err != nil {
		return fmt.Errorf("run %s: cancel: %w", runID, err)
	}
	return nil
}

// AcceptVersion moves run runID, stopped on a version change, to version
// (pending, attention cleared) after a person looked at the step diff. It
// does not run the workflow: a worker or [Engine.Resume] does, replaying the
// journaled steps whose keys the new version still has. It is refused with
// [ErrNotVersionStop] for a run not stopped on a version change.
func (e *Engine) AcceptVersion(ctx context.Context, runID, version string) error {
	if version == "" {
		return fmt.Errorf("run %s: accept version: empty version", runID)
	}
	if err := e.journal.AcceptVersion(ctx, runID, version); err != nil {
		return fmt.Errorf("run %s: accept version %s: %w", runID, version, err)
	}
	return nil
}

// SaveManifests stores the manifest of every workflow registered in this
// program (once per version), so operators can compare a stopped run's
// version with the code's before the first run of the new version. Work
// calls it on start.
func (e *Engine) SaveManifests(ctx context.Context) error {
	for _, d := range registered() {
		if err := e.saveManifest(ctx, d); err != nil {
			return err
		}
	}
	return nil
}

// saveManifest stores def's manifest and definition under its identity
// and under each of its aliases, once per engine: a run stored under an
// alias compares its version with the code's among that name's versions.
func (e *Engine) saveManifest(ctx context.Context, def *WorkflowDef) error {
	key := def.QualifiedName() + "@" + def.Version
	if _, ok := e.manifests.Load(key); ok {
		return nil
	}
	defn, err := json.Marshal(definitionOf(def))
	if err != nil {
		return fmt.Errorf("workflow %s: encode the definition of version %s: %w", def.QualifiedName(), def.Version, err)
	}
	for _, name := range append([]string{def.QualifiedName()}, def.Aliases...) {
		m := journal.ManifestRecord{Workflow: name, Version: def.Version, Manifest: def.Manifest(), Definition: defn}
		if err := e.journal.SaveManifest(ctx, m); err != nil {
			return fmt.Errorf("workflow %s: save manifest of version %s: %w", name, def.Version, err)
		}
	}
	e.manifests.Store(key, struct{}{})
	return nil
}

// execute claims run runID and runs its body from the journal. One claim
// does it all: a run whose owner's process ended (its liveness signal is
// released) is taken over in that claim, and a run that cannot be taken
// (finished, or held by a live process) is refused without its journal
// being read.
func (e *Engine) execute(ctx context.Context, runID string) (Result, error) {
	if e.executes(runID) {
		// Its lease may have lapsed (this engine is stopping it): claiming
		// it again here would execute it twice in this process.
		return Result{RunID: runID, Status: StatusRunning}, fmt.Errorf("run %s: %w: this engine executes it now", runID, ErrRunBusy)
	}
	if err := e.keepAlive(ctx); err != nil {
		return Result{}, fmt.Errorf("run %s: claim: %w", runID, err)
	}
	sent := time.Now()
	run, steps, err := e.journal.Claim(ctx, journal.ClaimRequest{RunID: runID, Owner: e.owner, Lease: e.lease, TakeOverDead: true})
	_, live := livenessOf(e.journal)
	for wait := 10 * time.Millisecond; live && errors.Is(err, ErrRunBusy) && run.Status == StatusRunning &&
		run.LeaseOwner != e.owner && wait <= 160*time.Millisecond; wait *= 2 {
		// A process killed a moment ago may still look alive: its socket
		// is closed, but the database ends its session a few milliseconds
		// later (the kernel releases a file lock as the last thread
		// exits). Ask again for a moment before saying busy.
		if sleep(ctx, wait) != nil {
			break
		}
		sent = time.Now()
		run, steps, err = e.journal.Claim(ctx, journal.ClaimRequest{RunID: runID, Owner: e.owner, Lease: e.lease, TakeOverDead: true})
	}
	if errors.Is(err, ErrRunBusy) && !run.Status.Known() {
		// No worker claims a run whose status is no status: say so, rather
		// than call it busy.
		return resultOf(run), fmt.Errorf("run %s: %w: journal row of the run: %s: repair the row, or cancel the run", runID, ErrRunBusy, run.Problem())
	}
	if errors.Is(err, ErrRunBusy) {
		res := resultOf(run)
		if run.Status.Finished() || run.Status == StatusNeedsAttention {
			return res, res.err()
		}
		if run.Queue != "" && (run.Status == StatusPending || run.Status == StatusWaiting) {
			return res, fmt.Errorf("run %s: %w: it waits in queue %q for a worker's slot; Wait for its outcome", runID, ErrQueued, run.Queue)
		}
		return res, fmt.Errorf("run %s: %w: held by %s until %s", runID, ErrRunBusy, run.LeaseOwner, run.LeaseUntil.UTC().Format(time.RFC3339))
	}
	if err != nil {
		return Result{}, fmt.Errorf("run %s: claim: %w", runID, err)
	}
	run.LeaseUntil = heldUntil(sent, e.lease)
	return e.runClaimed(ctx, run, steps, nil)
}

// runClaimed runs the body of a run this engine has just claimed, from its
// journal steps. When drain closes, the run stops before its next step and
// is released, resumable.
func (e *Engine) runClaimed(ctx context.Context, run journal.RunRecord, steps []journal.StepRecord, drain <-chan struct{}) (Result, error) {
	res, err := e.tracedEntry(ctx, run, steps, drain, nil, e.parentDef(ctx, run))
	e.wakeParent(ctx, run.Parent, res.Status)
	return res, err
}

// entryOutcome is what a parent needs of its child run's entry beyond its
// Result: the error the child's body returned, with its identity.
type entryOutcome struct {
	bodyErr error
	wait    *suspension // what the run waits for, if it suspended
}

// runEntry is runClaimed for a run that may be a child: outcome, if not
// nil, receives the body's error, and parent, if not nil, is the parent
// run's workflow, whose error identities the run's journaled error keeps
// too (the parent's body tests them).
func (e *Engine) runEntry(ctx context.Context, run journal.RunRecord, steps []journal.StepRecord, drain <-chan struct{}, outcome *entryOutcome, parent *WorkflowDef) (Result, error) {
	runID := run.RunID
	defer e.hold(runID)()
	lease := journal.Lease{RunID: runID, Owner: run.LeaseOwner, Epoch: run.Epoch}

	cur, ok := Lookup(run.Workflow)
	if !ok {
		// Not this binary's workflow: give the run back untouched.
		run.Status, run.Error = StatusPending, ""
		e.finish(ctx, lease, run)
		return resultOf(run), fmt.Errorf("run %s: workflow %s is not registered in this program", runID, run.Workflow)
	}
	if err := e.saveManifest(ctx, cur); err != nil {
		run.Status = StatusPending
		e.finish(ctx, lease, run)
		return resultOf(run), err
	}
	if key, why := journalProblem(run, steps); why != "" {
		// A row the journal could not read, or holds values no run or step
		// has: replaying or executing around it could take another path.
		run.Status, run.AttentionStep, run.AttentionKind, run.Error = StatusNeedsAttention, key, AttentionKindJournal, why
		return e.finish(ctx, lease, run)
	}
	def, res, err := e.enterVersion(ctx, lease, cur, &run, steps)
	if def == nil {
		return res, err
	}
	if err := e.canRun(def); err != nil {
		// A method without its receiver here: give the run back untouched.
		run.Status, run.Error = StatusPending, ""
		e.finish(ctx, lease, run)
		return resultOf(run), fmt.Errorf("run %s: %w", runID, err)
	}
	if n := run.ClaimsSinceProgress - 1; e.crashLoopLimit > 0 && n >= e.crashLoopLimit {
		run.Status, run.FailedStep = StatusFailed, ""
		run.Error = fmt.Sprintf("crash loop: the last %d claims of this run ended without progress (no step journaled, the entry never finished): "+
			"the process executing it kept dying (killed, out of memory, os.Exit, a crash in cgo); nothing was executed this time: fix the cause, then retry the run", n)
		e.logger.Error("run failed: crash loop", "run", runID, "workflow", run.Workflow, "claims_without_progress", n)
		return e.finish(ctx, lease, run)
	}
	// A reading of the journal's clock (cached; one round trip every 30 s)
	// for the run's records and waits.
	if _, _, err := e.journalNow(ctx); err != nil {
		e.logger.Warn("reading the journal's clock failed", "run", runID, "err", err)
	}
	st := newRunState(e, def, run, steps)
	st.drain = drain
	switch {
	case !run.CancelRequested.IsZero():
		st.halt(StopCancelled, run.CancelRequested)
	case st.pastDeadline(ctx):
		st.halt(StopDeadline, run.Deadline)
	}
	// The claim's own bound of the lease (heldUntil): a claim whose answer
	// came late has less of it left.
	st.leaseUntil = run.LeaseUntil
	if st.leaseUntil.IsZero() {
		st.leaseUntil = time.Now().Add(e.lease)
	}
	for _, s := range steps {
		if s.Status == journal.StepInFlight {
			st.park(s.StepKey, s)
			run.Status, run.AttentionStep, run.AttentionKind = StatusNeedsAttention, s.StepKey, AttentionKindStep
			run.Error = st.stopped().(*RunError).Msg
			return e.finish(ctx, lease, run)
		}
	}

	rctx, cancel := context.WithCancelCause(context.WithValue(ctx, stateKey{}, st))
	defer cancel(nil)
	// The lease is kept until the body returns, however its context ends:
	// a step still executing must not lose the run to another process.
	kctx, stopKeeping := context.WithCancel(context.WithoutCancel(ctx))
	defer stopKeeping()
	kept := e.keepLease(kctx, cancel, st)
	watchDone := e.watchStop(rctx, st)
	out, bodyErr, panicked := e.runBody(rctx, def, Args(run.Input))
	cancel(nil)
	stopKeeping()
	<-kept
	<-watchDone

	stop := st.stopped()
	run.Output = nil // an earlier entry's (a retried run's) is not this one's
	var runErr *RunError
	var susp *suspension
	var cont *continueAsNew
	var next journal.RunRecord
	var contJournal journal.Continuer
	switch {
	case errors.As(stop, &susp):
		// The body waits: the run gives up its lease until the wait ends,
		// or its deadline passes.
		run.Status, run.Error, run.WaitKind, run.WaitName, run.WakeAt = StatusWaiting, "", susp.kind, susp.name, susp.until
		if d := run.Deadline; !d.IsZero() && (susp.until.IsZero() || d.Before(susp.until)) {
			run.WakeAt = journalTime(d)
		}
		if outcome != nil {
			outcome.wait = susp
		}
		stop = nil
	case errors.As(stop, &runErr):
		run.Status, run.AttentionStep, run.Error = runErr.Status, runErr.Step, runErr.Msg
		if runErr.Status == StatusNeedsAttention {
			run.AttentionKind = runErr.Kind
			if run.AttentionKind == "" {
				run.AttentionKind = AttentionKindStep
			}
		}
	case errors.Is(stop, ErrLeaseLost):
		// Another process owns the run now, and writes the outcome; or a
		// person cancelled it while it ran.
		if now, _, err := e.journal.LoadRun(context.WithoutCancel(ctx), runID); err == nil && now.Status == StatusCancelled {
			res := resultOf(now)
			return res, &RunError{RunID: runID, Status: StatusCancelled, Msg: "cancelled while it ran"}
		}
		return resultOf(run), stop
	case errors.Is(stop, errDraining):
		// The worker is shutting down: give the run back, resumable.
		run.Status, run.Error = StatusPending, ""
		e.finish(ctx, lease, run)
		return resultOf(run), stop
	case stop != nil:
		// The journal could not record a step: leave the run to a resume.
		run.Status, run.Error = StatusPending, stop.Error()
	case panicked != nil:
		// The body itself panicked (a step's panic reaches it as an error):
		// that is the run's failure, shutting down or not.
		run.Status, run.Error, run.FailedStep = StatusFailed, "workflow body "+bodyErr.Error(), ""
		e.logger.Error("workflow body panicked", "run", runID, "workflow", run.Workflow, "panic", fmt.Sprint(panicked.Value))
		if outcome != nil {
			outcome.bodyErr = bodyErr
		}
	case bodyErr != nil && ctx.Err() != nil:
		// Shutting down: the run is not failed, only interrupted.
		run.Status, run.Error = StatusPending, ""
		e.finish(ctx, lease, run)
		return resultOf(run), fmt.Errorf("run %s: interrupted: %w", runID, ctx.Err())
	case st.stopEnd(&run, bodyErr, errorCodec(def, parent)):
		// The run had to stop, and its body unwound: cancelled, or failed
		// past its deadline though the body swallowed the stop.
		if outcome != nil && run.Status == StatusFailed {
			outcome.bodyErr = decodeStepError(errorCodec(def, parent), run.Error, run.ErrorDetail)
		}
	case errors.As(bodyErr, new(*inputError)):
		// The body did not start: the stored input is not the workflow's.
		run.Status, run.AttentionStep, run.AttentionKind = StatusNeedsAttention, "", AttentionKindJournal
		run.Error = "journal row of run " + runID + ": " + bodyErr.Error() +
			": the run's journal is corrupt, and it is not executed with another input: repair the row and retry the run, or cancel it"
	case errors.As(bodyErr, &cont):
		// The body continues as a new run: this one ends, the next one
		// starts, in one commit.
		var why string
		if next, contJournal, why = e.continuation(ctx, run, def, cont); why != "" || st.pastDeadline(ctx) {
			if why == "" {
				why = "the body ended with resume.ContinueAsNew past the run's deadline: it is not continued"
			}
			run.Status, run.Error, run.FailedStep, contJournal = StatusFailed, why, "", nil
		}
	case bodyErr != nil:
		run.Status, run.Error, run.FailedStep = StatusFailed, bodyErr.Error(), st.failedStep()
		run.ErrorDetail = encodeStepError(errorCodec(def, parent), bodyErr)
		// The value the body returned beside its error is kept: a parent
		// calling this run as a child receives it, as a plain call would.
		run.Output = failedOutput(out)
		if outcome != nil {
			outcome.bodyErr = bodyErr
		}
	default:
		b, err := json.Marshal(out)
		if err == nil {
			err = journal.CheckValue("output", b)
		}
		if err != nil {
			run.Status, run.Error = StatusFailed, fmt.Sprintf("encode output: %v", err)
		} else {
			run.Status, run.Output, run.Error = StatusSucceeded, b, ""
		}
	}
	if contJournal != nil {
		res, err = e.continueBy(ctx, lease, run, next, contJournal, st.leaseDeadline)
	} else {
		res, err = e.finishBy(ctx, lease, run, st.leaseDeadline)
	}
	if stop != nil && runErr == nil {
		if err == nil {
			err = stop
		} else {
			// Both say what happened: why the run stopped, and that its
			// state could not be recorded either.
			err = fmt.Errorf("%w; then %w", stop, err)
		}
	}
	return res, err
}

// failedOutput is the journal's form of the value a body returned beside
// its error, or nil when it has none or it cannot be journaled (the error
// is the run's outcome either way).
func failedOutput(out any) json.RawMessage {
	if out == nil {
		return nil
	}
	if _, none := out.(struct{}); none {
		return nil
	}
	b, err := json.Marshal(out)
	if err != nil || journal.CheckValue("output", b) != nil {
		return nil
	}
	return b
}

// errorCodec is what journals the error of a run of def: its own error
// identities, and its parent's (whose body tests the child's error) for a
// child run.
func errorCodec(def, parent *WorkflowDef) *WorkflowDef {
	if parent == nil {
		return def
	}
	return &WorkflowDef{Errors: append(append([]ErrorDef{}, def.Errors...), parent.Errors...)}
}

// journalProblem finds the first row of the run that cannot be used as
// stored, the run's own row first, then its steps in journal order, and
// returns the step key naming it ("" for the run's row) and why the run
// stops; why is "" when every row is sound.
func journalProblem(run journal.RunRecord, steps []journal.StepRecord) (key, why string) {
	const tail = ": the run's journal is corrupt, and it is not replayed nor executed around the row: repair the row and retry the run, or cancel it"
	if p := run.Problem(); p != "" {
		return "", "journal row of run " + run.RunID + ": " + p + tail
	}
	var bad *journal.StepRecord
	for i := range steps {
		if steps[i].Problem() != "" && (bad == nil || steps[i].Seq < bad.Seq) {
			bad = &steps[i]
		}
	}
	if bad == nil {
		return "", ""
	}
	return bad.StepKey, "journal row " + bad.StepKey + ": " + bad.Problem() + tail
}

// finish records the run's state at the end of this entry, just claimed,
// and releases its lease; see finishBy.
func (e *Engine) finish(ctx context.Context, lease journal.Lease, run journal.RunRecord) (Result, error) {
	until := time.Now().Add(e.lease)
	return e.finishBy(ctx, lease, run, func() time.Time { return until })
}

// finishBy records the run's state at the end of this entry and releases
// its lease, retrying a failed write with backoff until the lease expires
// (until). The write outlives ctx's cancellation.
func (e *Engine) finishBy(ctx context.Context, lease journal.Lease, run journal.RunRecord, until func() time.Time) (Result, error) {
	run.UpdatedAt = e.clockNow()
	if run.Status != StatusNeedsAttention {
		run.AttentionKind = ""
	}
	if run.Status != StatusFailed {
		run.FailedStep = ""
	}
	if run.Status != StatusWaiting {
		run.WaitKind, run.WaitName, run.WakeAt = "", "", time.Time{}
	}
	retried := false
	err := e.retryWrite(ctx, run.RunID, "finish "+string(run.Status), until, func(wctx context.Context) error {
		err := e.journal.FinishRun(wctx, lease, run)
		if retried && errors.Is(err, ErrLeaseLost) && e.finished(wctx, lease, run) {
			// An earlier try committed, but its answer was lost: FinishRun
			// released the lease, so this one finds it gone.
			return nil
		}
		retried = true
		return err
	})
	if err != nil {
		return resultOf(run), fmt.Errorf("run %s: record status %s: %w", run.RunID, run.Status, err)
	}
	if run.Status == StatusNeedsAttention {
		e.logger.Warn("run needs attention", "run", run.RunID, "workflow", run.Workflow, "step", run.AttentionStep, "why", run.Error)
	}
	res := resultOf(run)
	return res, res.err()
}

// finished reports whether the journal holds run as FinishRun under lease
// records it: the same epoch, status and error, and no lease.
func (e *Engine) finished(ctx context.Context, lease journal.Lease, run journal.RunRecord) bool {
	got, _, err := e.journal.LoadRun(ctx, run.RunID)
	return err == nil && got.Epoch == lease.Epoch && got.LeaseOwner == "" && got.Status == run.Status && got.Error == run.Error
}

// versionMismatch explains why run cannot resume under def: both versions
// and the steps that differ.
func (e *Engine) versionMismatch(ctx context.Context, run journal.RunRecord, def *WorkflowDef) string {
	var b strings.Builder
	fmt.Fprintf(&b, "run was started under version %s of %s, but this program has version %s; nothing was executed", run.Version, run.Workflow, def.Version)
	old, err := e.journal.Manifest(ctx, run.Workflow, run.Version)
	switch {
	case err != nil:
		fmt.Fprintf(&b, "; the old manifest could not be read: %v", err)
	case old == "":
		b.WriteString("; the old version's manifest is not in the journal")
	default:
		b.WriteString("; steps differ:")
		for _, c := range DiffManifests(old, def.Manifest()) {
			if c.Op != " " {
				b.WriteString("\n  " + c.String())
			}
		}
	}
	return b.String()
}

// fault runs the fault action if a configured fault matches this point of
// the step execution key (of the step named name).
func (e *Engine) fault(key, name string, p FaultPoint) {
	if len(e.faults) == 0 {
		return
	}
	e.faultMu.Lock()
	var hit bool
	for _, f := range e.faults {
		if f.Point == p && (f.Step == key || f.Step == name) && !e.faultsFired[f] {
			e.faultsFired[f] = true
			hit = true
		}
	}
	e.faultMu.Unlock()
	if hit {
		// A fault action that panics stands for the process's death: that
		// panic is never recovered (see recovered).
		e.dying.Store(true)
		e.faultAction()
		e.dying.Store(false)
	}
}
