package journal

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Limits on what a journal stores. They are checked where input enters:
// the engine checks a run id, an input or a signal before it writes
// anything (Engine.Start, Enqueue, Signal, Resolve), a step key or result
// before it journals it, and every journal checks the rows it is handed
// (CreateRun, WriteStep, TakeSignal, a tx step's Commit, FinishRun,
// Signal, Resolve) with the same functions, so that a value one journal
// takes the other takes too, and a tool writing rows directly meets the
// same refusal. A refusal is a *[LimitError], matching [ErrLimit].
//
// The bounds come from what the databases allow, with a margin:
//
//   - PostgreSQL's NOTIFY payload is under 8000 bytes, and the journal
//     notifies a run's id when it finishes and a workflow's name when a
//     run becomes pending: a longer id made a run that never finishes.
//   - PostgreSQL's B-tree index entries are at most 2704 bytes: run ids are
//     indexed with step keys (resume_steps), signal names and consumed
//     keys (resume_signals), workflows with run ids (the listing index).
//     1024 + 1024 and 512 + 1024 leave room for the other columns.
//   - PostgreSQL's text cannot hold a NUL byte nor invalid UTF-8; SQLite
//     can, so both refuse them, to agree.
//   - A value (a run's input or output, a step's result, a signal's
//     payload) may be 1 GB in either database, but a run's entry reads
//     its whole journal at once: 16 MiB keeps that bounded. A larger value
//     belongs in a store of its own, with its key journaled.
const (
	// MaxRunIDBytes bounds a run id, a child run's id (the parent's id, a
	// slash and the step key) included.
	MaxRunIDBytes = 1024
	// MaxWorkflowNameBytes bounds a workflow's identity (its package path
	// and name, or name=).
	MaxWorkflowNameBytes = 512
	// MaxVersionBytes bounds a workflow version.
	MaxVersionBytes = 128
	// MaxStepNameBytes bounds a step's name, and an event's name (an
	// await's journal name is its event's).
	MaxStepNameBytes = 256
	// MaxStepKeyBytes bounds a step's journal key: its name with its
	// occurrence (#2) or its key= value ([alice@example.com]).
	MaxStepKeyBytes = 1024
	// MaxValueBytes bounds one journaled value, as JSON: a run's input or
	// output, a step's result, a signal's payload, a resolution's result.
	MaxValueBytes = 16 << 20
)

// ErrLimit matches (errors.Is) every *[LimitError].
var ErrLimit = errors.New("over a journal limit")

// LimitError is a value a journal does not store: too long, or text that
// PostgreSQL cannot hold.
type LimitError struct {
	// What names the value: "run id", "workflow name", "step key",
	// "event name", "input", "step result", "signal payload", ...
	What string
	// Value is a preview of the value (cut to a readable length).
	Value string
	// Size is the value's length in bytes; Limit the bound it broke and
	// Const the name of the constant that holds it (MaxRunIDBytes). Both
	// are zero for text that is not valid (Problem says why).
	Size, Limit int
	Const       string
	// Problem, when set, says why the value is not valid text instead.
	Problem string
}

// Error says which value, how large, and the limit, or what is wrong
// with the text.
func (e *LimitError) Error() string {
	if e.Problem != "" {
		return fmt.Sprintf("%s %s %s: the journal stores only valid UTF-8 without NUL bytes (PostgreSQL's text cannot hold it)", e.What, e.Value, e.Problem)
	}
	return fmt.Sprintf("%s %s is %d bytes, over the limit of %d bytes (journal.%s)", e.What, e.Value, e.Size, e.Limit, e.Const)
}

// Is matches ErrLimit.
func (e *LimitError) Is(target error) bool { return target == ErrLimit }

// cut previews s for a message: quoted, at most 40 bytes of it.
func cut(s string) string {
	const max = 40
	if len(s) <= max {
		return strconv.Quote(s)
	}
	i := max
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return strconv.Quote(s[:i]) + "..."
}

// checkText refuses s, the value what, when it is longer than limit bytes
// (the constant name), not valid UTF-8, or holds a NUL byte.
func checkText(what, s string, limit int, name string) error {
	switch {
	case len(s) > limit:
		return &LimitError{What: what, Value: cut(s), Size: len(s), Limit: limit, Const: name}
	case !utf8.ValidString(s):
		return &LimitError{What: what, Value: cut(s), Problem: "is not valid UTF-8"}
	case strings.IndexByte(s, 0) >= 0:
		return &LimitError{What: what, Value: cut(s), Problem: "holds a NUL byte"}
	}
	return nil
}

// CheckRunID refuses a run id the journal does not store (see
// [MaxRunIDBytes]).
func CheckRunID(id string) error { return checkText("run id", id, MaxRunIDBytes, "MaxRunIDBytes") }

// CheckWorkflowName refuses a workflow identity the journal does not
// store (see [MaxWorkflowNameBytes]).
func CheckWorkflowName(name string) error {
	return checkText("workflow name", name, MaxWorkflowNameBytes, "MaxWorkflowNameBytes")
}

// CheckStepName refuses a step's name the journal does not store (see
// [MaxStepNameBytes]).
func CheckStepName(name string) error {
	return checkText("step name", name, MaxStepNameBytes, "MaxStepNameBytes")
}

// CheckEventName refuses an event's name (resume.Await, a signal) the
// journal does not store (see [MaxStepNameBytes]).
func CheckEventName(name string) error {
	return checkText("event name", name, MaxStepNameBytes, "MaxStepNameBytes")
}

// CheckStepKey refuses a step's journal key the journal does not store
// (see [MaxStepKeyBytes]).
func CheckStepKey(key string) error {
	return checkText("step key", key, MaxStepKeyBytes, "MaxStepKeyBytes")
}

// CheckValue refuses a journaled value, the one what names ("input",
// "step result", "signal payload"), larger than [MaxValueBytes] or not
// valid UTF-8.
func CheckValue(what string, b []byte) error {
	switch {
	case len(b) > MaxValueBytes:
		return &LimitError{What: what, Value: cut(string(b[:64])), Size: len(b), Limit: MaxValueBytes, Const: "MaxValueBytes"}
	case !utf8.Valid(b):
		return &LimitError{What: what, Value: cut(string(b)), Problem: "is not valid UTF-8"}
	}
	return nil
}

// CheckRun refuses a run CreateRun would store: its id, workflow,
// version and input.
func CheckRun(r RunRecord) error {
	if err := CheckRunID(r.RunID); err != nil {
		return err
	}
	if err := CheckWorkflowName(r.Workflow); err != nil {
		return err
	}
	if err := checkText("version", r.Version, MaxVersionBytes, "MaxVersionBytes"); err != nil {
		return err
	}
	if r.Parent != "" {
		if err := CheckRunID(r.Parent); err != nil {
			return err
		}
	}
	if r.Queue != "" {
		if err := CheckQueueName(r.Queue); err != nil {
			return err
		}
	}
	if err := CheckQueueKey(r.QueueKey); err != nil {
		return err
	}
	return CheckValue("input", r.Input)
}

// CheckStep refuses a step row WriteStep (or TakeSignal, or a tx step's
// Commit) would store: its key, name and result.
func CheckStep(s StepRecord) error {
	if err := CheckStepKey(s.StepKey); err != nil {
		return err
	}
	if err := CheckStepName(s.Name); err != nil {
		return err
	}
	return CheckValue("step result", s.Result)
}

// CheckSignal refuses a signal Signal would keep: its event name and
// payload.
func CheckSignal(s SignalRecord) error {
	if err := CheckEventName(s.Name); err != nil {
		return err
	}
	return CheckValue("signal payload", s.Payload)
}
