package journal

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
)

// Keyed starts: a run started by a start key instead of an id of the
// caller's, so that repeated starts of one key coalesce (see
// resume.Engine.Debounce and resume.Engine.Singleton). The journal keeps,
// per workflow and key, a sequence number and the run the key last
// started; the key's runs are named KEY#1, KEY#2, ... ([KeyedRunID]).

// StartMode says what a keyed start does when the key's last run exists.
type StartMode string

const (
	// StartDebounce replaces the input of the key's last run and moves its
	// start to the request's WakeAt while that run has not started (it
	// waits to start: status waiting, wait kind [WaitStart]); otherwise it
	// creates the key's next run, waiting to start at WakeAt.
	StartDebounce StartMode = "debounce"
	// StartSingleton creates the key's next run, pending, unless the key's
	// last run is unfinished (pending, running, waiting or needing
	// attention): then it creates nothing and returns that run.
	StartSingleton StartMode = "singleton"
)

// KeyedOutcome is what a keyed start did.
type KeyedOutcome string

const (
	// KeyedCreated: the key's next run was created.
	KeyedCreated KeyedOutcome = "created"
	// KeyedReplaced: a debounce replaced the input of the key's unstarted
	// run and moved its start.
	KeyedReplaced KeyedOutcome = "replaced"
	// KeyedDropped: a singleton start found the key's run unfinished and
	// created nothing.
	KeyedDropped KeyedOutcome = "dropped"
)

// KeyedStart is a keyed start's request.
type KeyedStart struct {
	// Key is the start key; Mode what the start does with the key's last
	// run.
	Key  string
	Mode StartMode
	// Run is the run to create: its Workflow, Version, CreatedAt,
	// UpdatedAt, Deadline and, for a debounce, WakeAt (the start) are
	// used; its RunID, Status and Input are set by the journal.
	Run RunRecord
	// Input returns the run's input as stored for the run named runID
	// (the journal calls it once it knows which run: the key's next, or,
	// for a debounce, the unstarted one), so that a value sealed for one
	// run id is never stored under another.
	Input func(runID string) (json.RawMessage, error)
}

// KeyedStarter is the optional interface of a journal that starts runs by
// key. StartKeyed does the whole start in one transaction, under a lock on
// the key's row, so that two processes starting one key at once create one
// run, and a debounce never replaces the input of a run that a worker
// claimed meanwhile. It returns the run the start created, replaced or
// found, and which.
type KeyedStarter interface {
	StartKeyed(ctx context.Context, k KeyedStart) (RunRecord, KeyedOutcome, error)
}

// KeyedRunID names run seq of start key key.
func KeyedRunID(key string, seq int64) string {
	return key + "#" + strconv.FormatInt(seq, 10)
}

// CheckKeyedStart checks a keyed start's request where it enters a
// journal: a known mode, a start key whose runs' ids are within
// [MaxRunIDBytes] (the key, '#' and up to 19 digits), and valid text.
func CheckKeyedStart(k KeyedStart) error {
	if k.Mode != StartDebounce && k.Mode != StartSingleton {
		return fmt.Errorf("start key %q: unknown start mode %q", k.Key, k.Mode)
	}
	if k.Key == "" {
		return fmt.Errorf("keyed start of %s: empty start key", k.Run.Workflow)
	}
	if k.Input == nil {
		return fmt.Errorf("start key %q: no input", k.Key)
	}
	if k.Mode == StartDebounce && k.Run.WakeAt.IsZero() {
		return fmt.Errorf("start key %q: a debounce needs its start time (WakeAt)", k.Key)
	}
	return CheckRunID(KeyedRunID(k.Key, 1<<62))
}

// Replaceable reports whether a debounce may replace r's input: r waits to
// start and no worker has claimed it.
func (r RunRecord) Replaceable() bool {
	return r.Status == StatusWaiting && r.WaitKind == WaitStart && r.Attempts == 0
}

// HoldsKey reports whether r keeps a singleton start of its key from
// creating another run: r is not finished.
func (r RunRecord) HoldsKey() bool {
	return !r.Status.Finished()
}
