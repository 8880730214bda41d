package resume

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/resumegen/resumegen/runtime/journal"
)

// Signal sends the event name with payload (encoded as JSON; a
// json.RawMessage is sent as it is) to run runID,
// from any process sharing the journal: the run's next [Await] of name
// receives it, exactly once; one sent before that await is kept for it,
// and each signal goes to one await only. A run waiting for it is woken.
// It is refused for an unknown run ([ErrRunNotFound]), a finished one
// ([ErrRunFinished]), a name the run's version never awaits
// ([ErrNotAwaited]: see [Engine.SignalWith] to keep it anyway), and a
// payload that does not have the shape of what the run's version awaits
// under that name (its manifest's "name: journals T"), with the reason. A
// version whose manifest the journal does not hold (stored before
// manifests were) is not checked. The generated run handles
// (WorkflowRun.SignalNAME) check the name and the payload's type at
// compile time.
func (e *Engine) Signal(ctx context.Context, runID, name string, payload any) error {
	return e.SignalWith(ctx, runID, name, payload, SignalOptions{})
}

// signalPayload encodes a signal's payload; a json.RawMessage is sent as
// it is.
func signalPayload(runID, name string, payload any) (json.RawMessage, error) {
	if raw, ok := payload.(json.RawMessage); ok {
		return raw, nil
	}
	b, err := encodeResult(payload)
	if err != nil {
		return nil, fmt.Errorf("run %s, signal %s: encode payload: %w", runID, name, err)
	}
	return b, nil
}

// signalJSON is Signal with the payload as JSON.
func (e *Engine) signalJSON(ctx context.Context, runID, name string, payload json.RawMessage, opts SignalOptions) error {
	if name == "" {
		return fmt.Errorf("run %s: signal: empty event name", runID)
	}
	if err := journal.CheckEventName(name); err != nil {
		return fmt.Errorf("run %s: signal: %w", runID, err)
	}
	if len(payload) == 0 {
		payload = nullResult
	}
	if err := journal.CheckValue("signal payload", payload); err != nil {
		return fmt.Errorf("run %s, signal %s: %w", runID, name, err)
	}
	if !json.Valid(payload) {
		return fmt.Errorf("run %s, signal %s: the payload %s is not valid JSON", runID, name, preview(payload))
	}
	if err := e.checkSignal(ctx, runID, name, payload, opts); err != nil {
		return err
	}
	if _, err := e.journal.Signal(ctx, journal.SignalRecord{RunID: runID, Name: name, Payload: payload}); err != nil {
		return fmt.Errorf("run %s, signal %s: %w", runID, name, err)
	}
	return nil
}

// checkSignal refuses a signal to a run that cannot receive it (unknown,
// finished) and a payload whose shape is not what the run's version
// awaits under that name, as its manifest records it (the program's own,
// when the journal's does not say). A manifest that does not record the
// await lets the payload through: an await that cannot decode it parks
// the run, naming the row.
func (e *Engine) checkSignal(ctx context.Context, runID, name string, payload json.RawMessage, opts SignalOptions) error {
	run, _, err := e.journal.LoadRun(ctx, runID)
	if err != nil {
		return fmt.Errorf("run %s, signal %s: %w", runID, name, err)
	}
	if run.Status.Finished() {
		return fmt.Errorf("run %s, signal %s: run is %s: %w", runID, name, run.Status, ErrRunFinished)
	}
	manifest, err := e.journal.Manifest(ctx, run.Workflow, run.Version)
	if err != nil {
		return fmt.Errorf("run %s, signal %s: read the manifest of version %s: %w", runID, name, run.Version, err)
	}
	if def, ok := lookupVersion(run.Workflow, run.Version); ok && (manifest == "" || !strings.Contains(manifest, name+": journals ")) {
		manifest = def.Manifest()
	}
	if !opts.Unawaited {
		if err := checkAwaited(run, manifest, name); err != nil {
			return err
		}
	}
	err = CheckStepResult(manifest, name, payload)
	if err != nil && !errors.Is(err, ErrShapeUnknown) {
		return fmt.Errorf("run %s, signal %s: the payload %s does not fit what the run awaits: %w", runID, name, preview(payload), err)
	}
	return nil
}

// Wait waits until run runID has finished (succeeded, failed, cancelled)
// or needs a person, and returns its Result, with the *[RunError] of a
// run that did not succeed, as [Engine.Start] does. It executes nothing:
// workers do. It returns when ctx ends, with ctx's error. With a journal
// that announces finished runs (PostgreSQL) it wakes at once; otherwise it
// polls, from 10ms backing off to a second.
func (e *Engine) Wait(ctx context.Context, runID string) (Result, error) {
	notifier, _ := finishNotifierOf(e.journal)
	poll := 10 * time.Millisecond
	for {
		var wake <-chan struct{}
		if notifier != nil {
			wake, _ = notifier.NotifyFinish(ctx) // subscribe before looking
		}
		run, _, err := e.journal.LoadRun(ctx, runID)
		if err != nil {
			return Result{}, fmt.Errorf("run %s: wait: %w", runID, err)
		}
		if run.Status.Finished() || run.Status == StatusNeedsAttention {
			res := resultOf(run)
			return res, res.err()
		}
		if wake == nil {
			poll = min(2*poll, time.Second)
		} else {
			poll = time.Minute // the notification is the bound; this only guards a lost one
		}
		if err := waitForWork(ctx, wake, nil, poll); err != nil {
			return resultOf(run), fmt.Errorf("run %s: wait: %w", runID, err)
		}
	}
}

// finishNotifierOf returns j's finish notifications, looking through
// decorators, as livenessOf does.
func finishNotifierOf(j Journal) (journal.FinishNotifier, bool) {
	for j != nil {
		if n, ok := j.(journal.FinishNotifier); ok {
			return n, true
		}
		u, ok := j.(interface{ Unwrap() Journal })
		if !ok {
			return nil, false
		}
		j = u.Unwrap()
	}
	return nil, false
}

// EnqueueAt is [Engine.Enqueue] for a run that starts not before at: it
// is stored waiting (for its start) until then, by the journal's clock,
// and a worker executes it once at has passed. An existing id is left as
// it is, as with Enqueue.
func (e *Engine) EnqueueAt(ctx context.Context, at time.Time, runID string, wf any, args ...any) (Result, error) {
	stored, _, err := e.createAt(ctx, runID, wf, args, false, at)
	return resultOf(stored), err
}
