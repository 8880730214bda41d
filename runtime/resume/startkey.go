package resume

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/resumegen/resumegen/runtime/journal"
)

// StartOutcome is what a keyed start ([Engine.Debounce],
// [Engine.Singleton]) did: it created the key's next run, replaced the
// input of the key's run that had not started yet, or dropped the start
// because the key's run is unfinished.
type StartOutcome = journal.KeyedOutcome

// The outcomes of a keyed start.
const (
	StartCreated  = journal.KeyedCreated
	StartReplaced = journal.KeyedReplaced
	StartDropped  = journal.KeyedDropped
)

// ErrNoKeyedStarts is returned by [Engine.Debounce] and
// [Engine.Singleton] over a journal that cannot start runs by key (both
// journals of this module can).
var ErrNoKeyedStarts = errors.New("the journal does not start runs by key")

// Debounce enqueues a run of the registered workflow wf with args for
// start key key, to start delay from now by the journal's clock, and
// coalesces the starts of one key that come faster than that: while the
// key's run has not started, a Debounce of the same key replaces its
// input with args and moves its start to delay from then (the last input
// wins; a steady stream of starts closer than delay postpones the run
// until the stream pauses). Once a worker has claimed the key's run, the
// next Debounce enqueues the key's next run.
//
// The key's runs are named KEY#1, KEY#2, ... (the Result's RunID says
// which); the decision and the write are one transaction in the journal,
// so that starts from several processes at once coalesce as from one.
func (e *Engine) Debounce(ctx context.Context, key string, delay time.Duration, wf any, args ...any) (Result, StartOutcome, error) {
	if delay <= 0 {
		return Result{}, "", fmt.Errorf("resume: debounce of key %q: delay %s: want a positive delay", key, delay)
	}
	return e.startKeyed(ctx, journal.StartDebounce, key, delay, wf, args)
}

// Singleton enqueues a run of the registered workflow wf with args for
// start key key unless the key's last run is unfinished (pending,
// running, waiting, or needing a person's attention): then it drops the
// start, enqueues nothing, and returns that run with [StartDropped]. At
// most one run of a key is unfinished at any time, whichever processes
// start it. The key's runs are named KEY#1, KEY#2, ...
func (e *Engine) Singleton(ctx context.Context, key string, wf any, args ...any) (Result, StartOutcome, error) {
	return e.startKeyed(ctx, journal.StartSingleton, key, 0, wf, args)
}

func (e *Engine) startKeyed(ctx context.Context, mode journal.StartMode, key string, delay time.Duration, wf any, args []any) (Result, StartOutcome, error) {
	def, err := lookupStart(wf)
	if err != nil {
		return Result{}, "", err
	}
	what := fmt.Sprintf("%s of key %q of %s", mode, key, def.QualifiedName())
	starter, ok := journal.Find[journal.KeyedStarter](e.journal)
	if !ok {
		return Result{}, "", fmt.Errorf("resume: %s: %w", what, ErrNoKeyedStarts)
	}
	if key == "" {
		return Result{}, "", fmt.Errorf("resume: %s: empty start key", what)
	}
	if err := journal.CheckRunID(journal.KeyedRunID(key, 1<<62)); err != nil {
		return Result{}, "", fmt.Errorf("resume: %s: %w: name the key by something shorter (a hash of it, for instance)", what, err)
	}
	if err := checkArgs(wf, args); err != nil {
		return Result{}, "", fmt.Errorf("resume: %s: %w", what, err)
	}
	input, err := encodeArgs(args)
	if err == nil {
		err = journal.CheckValue("input", input)
	}
	if err != nil {
		return Result{}, "", fmt.Errorf("resume: %s: %w", what, err)
	}
	if err := e.saveManifest(ctx, def); err != nil {
		return Result{}, "", err
	}
	now, _, err := e.journalNow(ctx)
	if err != nil {
		return Result{}, "", fmt.Errorf("resume: %s: %w", what, err)
	}
	r := journal.RunRecord{Workflow: def.QualifiedName(), Version: def.Version, CreatedAt: now, UpdatedAt: now}
	if mode == journal.StartDebounce {
		r.WakeAt = journalTime(now.Add(delay))
	}
	if err := queueOf(ctx, def, &r); err != nil {
		return Result{}, "", fmt.Errorf("resume: %s: %w", what, err)
	}
	if d := runTimeout(ctx, def); d > 0 {
		r.Deadline = now.Add(d)
	}
	stored, outcome, err := starter.StartKeyed(ctx, journal.KeyedStart{
		Key: key, Mode: mode, Run: r,
		Input: func(string) (json.RawMessage, error) { return json.RawMessage(input), nil },
	})
	if err != nil {
		return Result{}, "", fmt.Errorf("resume: %w", err)
	}
	return resultOf(stored), outcome, nil
}

// StartKeyed seals the input for the run the journal names, and opens the
// run it returns.
func (s *sealedJournal) StartKeyed(ctx context.Context, k journal.KeyedStart) (journal.RunRecord, journal.KeyedOutcome, error) {
	starter, ok := journal.Find[journal.KeyedStarter](s.Journal)
	if !ok {
		return journal.RunRecord{}, "", ErrNoKeyedStarts
	}
	if err := s.noteKeys(ctx); err != nil {
		return journal.RunRecord{}, "", err
	}
	plain := k.Input
	k.Input = func(runID string) (json.RawMessage, error) {
		b, err := plain(runID)
		if err != nil {
			return nil, err
		}
		return s.seal(b, runID, "", "input")
	}
	stored, outcome, err := starter.StartKeyed(ctx, k)
	if err != nil {
		return stored, outcome, err
	}
	stored, err = s.openRunRow(stored)
	return stored, outcome, err
}
