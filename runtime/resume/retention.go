package resume

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/resumegen/resumegen/runtime/journal"
)

// Retention is how long the runs of a workflow are kept once they ended
// (see [WithRetention]). A zero duration keeps those runs for ever.
type Retention struct {
	// Workflow is the workflow the policy is for: its function, as
	// [Engine.Start] takes it, or its qualified name. Nil is the default
	// policy: every workflow no other Retention of the engine names.
	Workflow any
	// Succeeded and Cancelled: how long after it ended a succeeded or
	// cancelled run is purged.
	Succeeded, Cancelled time.Duration
	// Failed: how long a failed run is kept for a person to retry it;
	// typically longer than Succeeded, or zero (for ever).
	Failed time.Duration
	// Parked: how long a run that waits for a person (needs_attention)
	// is kept since it parked; zero (the usual) keeps it until a person
	// settles it.
	Parked time.Duration
}

// DefaultRetentionInterval is how often a worker purges when
// [WithRetention] is given no interval.
const DefaultRetentionInterval = 5 * time.Minute

// retention is an engine's retention configuration.
type retention struct {
	every    time.Duration
	policies []Retention
}

// WithRetention makes the engine's workers ([Engine.Work]) purge, every
// interval (zero: [DefaultRetentionInterval]), the runs the policies say
// are old enough: each workflow by the Retention that names it, the
// others by the one whose Workflow is nil (without one, they are kept).
// The purge goes in batches of [journal.DefaultPurgeBatch] top-level runs
// (each with its child runs), one short transaction each, with a pause as
// long as the batch took between two batches; it never deletes a run that
// executes or that something still needs (a parent, a schedule, a kept
// signal: see journal.Purger). Several workers purging at once share the
// work: each batch skips the runs another one holds. The journal must
// implement journal.Purger (both of resumegen's journals do). Call
// [Engine.Purge] to purge once, at a time of your choosing.
func WithRetention(interval time.Duration, policies ...Retention) Option {
	if interval <= 0 {
		interval = DefaultRetentionInterval
	}
	return func(e *Engine) { e.retention = retention{every: interval, policies: policies} }
}

// purgeRequests turns the engine's policies into the journal's requests:
// one per workflow and status with a duration.
func (e *Engine) purgeRequests() ([]journal.PurgeRequest, error) {
	var named []string
	type resolved struct {
		workflow string
		r        Retention
	}
	var rs []resolved
	defaults := 0
	for _, r := range e.retention.policies {
		name := ""
		switch w := r.Workflow.(type) {
		case nil:
			defaults++
		case string:
			name = w
		default:
			d, err := lookupFunc(w)
			if err != nil {
				return nil, fmt.Errorf("retention: %w", err)
			}
			name = d.QualifiedName()
		}
		if name != "" {
			for _, n := range named {
				if n == name {
					return nil, fmt.Errorf("retention: workflow %s has two policies", name)
				}
			}
			named = append(named, name)
		}
		if r.Succeeded < 0 || r.Cancelled < 0 || r.Failed < 0 || r.Parked < 0 {
			return nil, fmt.Errorf("retention of %s: a negative duration", orDefault(name))
		}
		rs = append(rs, resolved{name, r})
	}
	if defaults > 1 {
		return nil, errors.New("retention: two default policies (Workflow nil)")
	}
	var out []journal.PurgeRequest
	for _, r := range rs {
		for _, p := range []struct {
			s journal.Status
			d time.Duration
		}{{StatusSucceeded, r.r.Succeeded}, {StatusCancelled, r.r.Cancelled}, {StatusFailed, r.r.Failed}, {StatusNeedsAttention, r.r.Parked}} {
			if p.d == 0 {
				continue
			}
			req := journal.PurgeRequest{Statuses: []journal.Status{p.s}, OlderThan: p.d, Workflow: r.workflow}
			if r.workflow == "" {
				req.Except = named
			}
			out = append(out, req)
		}
	}
	return out, nil
}

func orDefault(name string) string {
	if name == "" {
		return "the default policy"
	}
	return name
}

// Purge deletes, now, every run the engine's retention policies
// ([WithRetention]) say is old enough, batch after batch, and returns
// what it deleted. It returns early, with what it deleted so far, when ctx
// is done or the journal fails. An engine without policies purges nothing.
func (e *Engine) Purge(ctx context.Context) (journal.PurgeResult, error) {
	var total journal.PurgeResult
	reqs, err := e.purgeRequests()
	if err != nil || len(reqs) == 0 {
		return total, err
	}
	p, ok := journal.Find[journal.Purger](e.journal)
	if !ok {
		return total, fmt.Errorf("retention: the journal (%T) cannot purge runs (journal.Purger)", e.journal)
	}
	for _, req := range reqs {
		for {
			began := time.Now()
			res, err := p.Purge(ctx, req)
			total = total.Add(res)
			if err != nil {
				return total, fmt.Errorf("retention: purge %s runs of %s older than %s: %w", req.Statuses[0], orDefault(req.Workflow), req.OlderThan, err)
			}
			if res.Runs < req.Batch() {
				break
			}
			// As long a pause as the batch took: workers get the
			// journal at least half of the time.
			select {
			case <-ctx.Done():
				return total, ctx.Err()
			case <-time.After(time.Since(began)):
			}
		}
	}
	return total, nil
}

// purgeLoop purges every e.retention.every until ctx is done, logging
// what it deleted and what failed.
func (e *Engine) purgeLoop(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-e.at(e.now().Add(e.retention.every)):
		}
		res, err := e.Purge(ctx)
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			e.logger.Warn("retention: purge failed; trying again at the next interval", "err", err, "purged_runs", res.Runs)
			continue
		}
		if res.Runs > 0 {
			e.logger.Info("retention: purged old runs", "runs", res.Runs, "child_runs", res.Children, "steps", res.Steps)
		}
	}
}
