package journal

import (
	"context"
	"fmt"
	"regexp"
	"time"
)

// QueueLimits are the limits of one queue (//resume:workflow queue=NAME),
// as an engine is configured with them (resume.WithQueues) and a journal
// stores them ([Queuer.ConfigureQueues]): the journal enforces the limits
// it stores, whichever worker claims, so that every worker of a queue
// obeys the same ones. A zero field is no limit.
type QueueLimits struct {
	// Name is the queue's name.
	Name string
	// Concurrency bounds the queue's runs executing at once (status
	// running, a lease lapsed or not: a run whose worker stalled may still
	// execute), across every worker.
	Concurrency int
	// PerKey bounds the runs of one queue key ([RunRecord.QueueKey])
	// executing at once: one key's thousands of runs do not hold every
	// slot while another key waits.
	PerKey int
	// Rate bounds the runs started (claimed for the first time) in any
	// window of length Per, by the journal's clock. A run resumed after a
	// crash or woken from a wait is not a start: it counts against
	// Concurrency only.
	Rate int
	Per  time.Duration
}

// Limited reports whether q limits anything.
func (q QueueLimits) Limited() bool { return q.Concurrency > 0 || q.PerKey > 0 || q.Rate > 0 }

// String renders the limits as resumectl queues list shows them.
func (q QueueLimits) String() string {
	s := ""
	add := func(part string) {
		if s != "" {
			s += " "
		}
		s += part
	}
	if q.Concurrency > 0 {
		add(fmt.Sprintf("concurrency=%d", q.Concurrency))
	}
	if q.PerKey > 0 {
		add(fmt.Sprintf("per-key=%d", q.PerKey))
	}
	if q.Rate > 0 {
		add(fmt.Sprintf("rate=%d/%s", q.Rate, q.Per))
	}
	if s == "" {
		return "unlimited"
	}
	return s
}

// MaxQueueNameBytes bounds a queue's name, and MaxQueueKeyBytes a run's
// queue key (indexed with the queue's name and the run's status).
const (
	MaxQueueNameBytes = 128
	MaxQueueKeyBytes  = 512
)

var queueName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]*$`)

// CheckQueueName refuses a queue name that is empty, longer than
// [MaxQueueNameBytes], or not letters, digits, '_', '.' and '-' (it is
// written in a directive and typed into resumectl).
func CheckQueueName(name string) error {
	if err := checkText("queue name", name, MaxQueueNameBytes, "MaxQueueNameBytes"); err != nil {
		return err
	}
	if !queueName.MatchString(name) {
		return &LimitError{What: "queue name", Value: cut(name), Problem: "is not letters, digits, '_', '.' and '-', starting with a letter or digit"}
	}
	return nil
}

// CheckQueueKey refuses a run's queue key the journal does not store
// (see [MaxQueueKeyBytes]).
func CheckQueueKey(key string) error {
	return checkText("queue key", key, MaxQueueKeyBytes, "MaxQueueKeyBytes")
}

// Check refuses limits a journal does not store: a bad name, a negative
// bound, or a rate without a positive period.
func (q QueueLimits) Check() error {
	if err := CheckQueueName(q.Name); err != nil {
		return err
	}
	switch {
	case q.Concurrency < 0 || q.PerKey < 0 || q.Rate < 0:
		return fmt.Errorf("queue %s: %s: a limit is positive (0: none)", q.Name, q)
	case q.Rate > 0 && q.Per <= 0:
		return fmt.Errorf("queue %s: rate %d per %s: want a positive period", q.Name, q.Rate, q.Per)
	case q.Rate == 0 && q.Per != 0:
		return fmt.Errorf("queue %s: a period (%s) without a rate", q.Name, q.Per)
	}
	return nil
}

// QueueStats is one queue as [Queuer.ListQueues] shows it.
type QueueStats struct {
	// Limits are the queue's stored limits (zero but the name when no
	// engine configured it: its runs are claimed without a limit).
	Limits QueueLimits
	// ConfiguredBy is the owner of the engine that stored the limits last,
	// at ConfiguredAt (zero when none did).
	ConfiguredBy string
	ConfiguredAt time.Time
	// Pending counts the runs pending (the queue's depth); Running those
	// executing; Waiting those waiting (asleep, awaiting a signal or
	// children, or a start time), due or not.
	Pending, Running, Waiting int
	// Keys counts the distinct queue keys among the pending and running
	// runs.
	Keys int
	// OldestPending is when the oldest pending run was created (zero when
	// none is).
	OldestPending time.Time
	// StartedInPeriod counts the runs started within the last Limits.Per
	// (0 without a rate).
	StartedInPeriod int
}

// Queuer is an optional interface of a [Journal] that enforces queue
// limits: ClaimNext and ClaimBatch claim a run of a queue
// ([RunRecord.Queue]) only within the limits the journal stores for it,
// by priority ([RunRecord.Priority]) and then oldest first, with one
// claimer of a queue at a time deciding. An engine configured with
// queues refuses a journal that is not a Queuer: a claim that ignored
// the limits would run more than them without a word.
type Queuer interface {
	// ConfigureQueues stores the limits of the queues qs, as configured by
	// the engine of owner, replacing what was stored for those queues
	// (the last engine to start configures a queue). It returns the
	// limits it replaced that differed, so that the engine can say so.
	ConfigureQueues(ctx context.Context, owner string, qs []QueueLimits) (replaced []QueueStats, err error)
	// ListQueues lists every queue that has runs or stored limits, by
	// name.
	ListQueues(ctx context.Context) ([]QueueStats, error)
}
