package resume

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/resumegen/resumegen/runtime/journal"
)

// A queue (//resume:workflow queue=NAME) bounds its workflows' runs
// across every worker of the journal: how many execute at once, how many
// of one key ([WithQueueKey]) do, and how many start per period; its runs
// are claimed by priority ([WithPriority]), then oldest first. The
// limits are configured in code ([WithQueues]); a worker stores them in
// the journal as it starts ([Engine.Work]), and the journal enforces the
// ones it stores, whichever worker claims: the last worker to start sets
// them (it logs when it changes what another set). `resumectl queues
// list` shows each queue's limits, depth, runs executing and oldest
// waiting run.
//
// A queue's runs are executed by workers only: [Engine.Start] refuses a
// workflow of a queue (Enqueue it, and [Engine.Wait] for its outcome),
// and [Engine.Resume] of a queued run that waits for its slot returns
// [ErrQueued]. A run resumed after a crash (its lease lapsed) keeps the
// slot it held; one woken from a wait takes a slot again but is no start
// for the rate. Child runs a body calls directly execute in their
// parent's slot (the generator refuses queue= on such a child); those
// started by [Map] are claimed through their queue, under their parent's
// key and priority.

// Queue is the limits of one queue, for [WithQueues]: Concurrency runs
// of the queue executing at once across every worker, PerKey of one
// queue key, Rate starts per Per; a zero field is no limit.
type Queue = journal.QueueLimits

// ErrQueued matches (errors.Is) the error of [Engine.Start] for a
// workflow of a queue, and of [Engine.Resume] for a run that waits in its
// queue for a slot: a worker executes it, within the queue's limits.
var ErrQueued = errors.New("resume: the run is claimed through its queue by a worker")

// ErrNoQueues is returned by [Engine.Work] when the engine is configured
// with queue limits ([WithQueues]) and its journal does not store and
// enforce them (journal.Queuer, found through wrappers that unwrap; both
// of resumegen's journals are). A journal that does not know queues
// claims their runs without limits.
var ErrNoQueues = errors.New("the journal does not enforce queue limits")

// WithQueues configures the limits of queues, by name: [Engine.Work]
// stores them in the journal as the worker starts, which then enforces
// them for every worker of the journal. Give every process that works on
// a queue the same limits; the last one to start sets them.
func WithQueues(queues ...Queue) Option {
	return func(e *Engine) { e.queues = append(e.queues, queues...) }
}

type queueKeyKey struct{}
type priorityKey struct{}

// WithQueueKey returns a context under which [Engine.Enqueue] and the
// other starts create runs of a queue under key: the queue's PerKey
// limit bounds the runs of one key executing at once (a tenant, a
// customer), so that one key's backlog does not hold every slot. A run
// of a workflow of no queue ignores it. The key is journaled with the
// run (at most journal.MaxQueueKeyBytes).
func WithQueueKey(ctx context.Context, key string) context.Context {
	return context.WithValue(ctx, queueKeyKey{}, key)
}

// WithPriority returns a context under which the starts create runs of
// a queue with priority p: a queue's claim takes the runs of the highest
// priority first, then the oldest (default 0; negative is lower). A run of
// a workflow of no queue ignores it.
func WithPriority(ctx context.Context, p int) context.Context {
	return context.WithValue(ctx, priorityKey{}, p)
}

// queueOf fills r's queue, key and priority for a run of def created
// under ctx.
func queueOf(ctx context.Context, def *WorkflowDef, r *journal.RunRecord) error {
	if def.Queue == "" {
		return nil
	}
	r.Queue = def.Queue
	if k, ok := ctx.Value(queueKeyKey{}).(string); ok {
		if err := journal.CheckQueueKey(k); err != nil {
			return err
		}
		r.QueueKey = k
	}
	if p, ok := ctx.Value(priorityKey{}).(int); ok {
		r.Priority = p
	}
	return nil
}

// queued refuses to execute a run of a queue in this process outside a
// worker's claim.
func queuedError(runID string, def *WorkflowDef) error {
	return fmt.Errorf("resume: run %s of %s: %w: the workflow runs in queue %q, whose limits the workers enforce: Enqueue it, and Wait for its outcome",
		runID, def.QualifiedName(), ErrQueued, def.Queue)
}

// checkQueues checks the engine's queue limits (WithQueues) and that
// its journal enforces them, and lists the queues of its workflows and
// limits; nil when it has none.
func (e *Engine) checkQueues() ([]string, journal.Queuer, error) {
	var names []string
	for _, def := range registered() {
		if def.Queue != "" {
			names = append(names, def.Queue)
		}
	}
	seen := map[string]bool{}
	for _, q := range e.queues {
		if err := q.Check(); err != nil {
			return nil, nil, fmt.Errorf("WithQueues: %w", err)
		}
		if seen[q.Name] {
			return nil, nil, fmt.Errorf("WithQueues: queue %s configured twice", q.Name)
		}
		seen[q.Name] = true
		names = append(names, q.Name)
	}
	if len(names) == 0 {
		return nil, nil, nil
	}
	slices.Sort(names)
	names = slices.Compact(names)
	queuer, ok := journal.Find[journal.Queuer](e.journal)
	switch {
	case !ok && len(e.queues) > 0:
		return nil, nil, fmt.Errorf("queues %v: %w", names, ErrNoQueues)
	case !ok:
		// Nothing to store: the claims still name the queues, for a
		// journal behind a wrapper that does not unwrap to say it
		// enforces them.
		return names, nil, nil
	}
	return names, queuer, nil
}

// storeQueues stores the engine's queue limits in the journal, says
// which limits it changed, and adds to names the queues the journal
// knows (runs of a queue an older version named).
func (e *Engine) storeQueues(ctx context.Context, queuer journal.Queuer, names []string) ([]string, error) {
	if len(e.queues) > 0 {
		replaced, err := queuer.ConfigureQueues(ctx, e.owner, e.queues)
		if err != nil {
			return nil, err
		}
		for _, r := range replaced {
			e.logger.Warn("queue limits changed", "queue", r.Limits.Name, "were", r.Limits.String(), "set by", r.ConfiguredBy)
		}
	}
	known, err := queuer.ListQueues(ctx)
	if err != nil {
		return nil, err
	}
	for _, q := range known {
		names = append(names, q.Limits.Name)
	}
	slices.Sort(names)
	return slices.Compact(names), nil
}
