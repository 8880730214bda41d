// Package groupcommit lets concurrent callers share commits: a write that
// finds a commit under way queues, and when that commit ends, the first
// caller that queued commits everything queued meanwhile, as one batch.
// Each caller returns only once its own write's batch is done, with its
// own outcome. A caller alone never waits: its batch is its write.
//
// The batch is led by one of the callers, not by a goroutine of the
// package: the caller that finds no commit under way commits, then hands
// the lead to the first caller queued behind it. Both journals use it;
// each says how a batch commits (Queue's commit function).
package groupcommit

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
)

// Write is one caller's write in a batch.
type Write[T any] struct {
	// Ctx is the caller's context. A batch skips a write whose Ctx ended
	// before its turn, with the context's error as its outcome.
	Ctx context.Context
	// Op is what to write: the journal's own description of the write.
	Op T
	// Err is the write's outcome, set by the commit function.
	Err error
	// done receives true when this caller is to lead the next batch, and
	// false when its write was committed (or refused) in another's.
	done chan bool
}

// Queue is the queue of writes waiting for the batch under way. Its zero
// value is not ready: use New.
type Queue[T any] struct {
	commit func(batch []*Write[T])
	max    int

	mu      sync.Mutex
	leading bool        // a caller is committing, or about to
	queue   []*Write[T] // writes waiting behind it, oldest first
}

// New returns a queue whose batches hold at most max writes (so that a long
// queue does not make one caller wait for all of it), committed by commit.
// commit sets the Err of each write of the batch, and skips a write whose
// Err is set already: its caller gave up before its turn.
func New[T any](max int, commit func(batch []*Write[T])) *Queue[T] {
	return &Queue[T]{commit: commit, max: max}
}

// Do commits op, with whatever writes queue meanwhile, and returns its
// outcome. The caller waits for its turn whatever ctx says: a batch under
// way cannot be recalled. A write whose ctx ended before its turn is not
// made, and returns ctx's error.
func (q *Queue[T]) Do(ctx context.Context, op T) error {
	w := &Write[T]{Ctx: ctx, Op: op}
	q.mu.Lock()
	if !q.leading {
		q.leading = true
		q.mu.Unlock()
		q.lead(w)
		return w.Err
	}
	w.done = make(chan bool, 1)
	q.queue = append(q.queue, w)
	q.mu.Unlock()
	if lead := <-w.done; lead {
		q.lead(w)
	}
	return w.Err
}

// Waiting is 1 for a batch under way, plus the number of writes queued
// behind it.
func (q *Queue[T]) Waiting() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	if !q.leading {
		return 0
	}
	return 1 + len(q.queue)
}

// lead commits first's write and those queued behind it, and hands the
// lead on to the first write queued meanwhile, or gives it up. The lead
// passes on even when commit panics: the panic is the leader's, and the
// others of its batch fail with errPanicked.
func (q *Queue[T]) lead(first *Write[T]) {
	q.mu.Lock()
	n := min(len(q.queue), q.max-1)
	batch := append([]*Write[T]{first}, q.queue[:n]...)
	q.queue = append(q.queue[:0:0], q.queue[n:]...)
	q.mu.Unlock()

	committed := false
	defer func() {
		if !committed {
			for _, w := range batch[1:] {
				w.Err = errPanicked
			}
		}
		q.mu.Lock()
		var next *Write[T]
		if len(q.queue) > 0 {
			next, q.queue = q.queue[0], q.queue[1:]
		} else {
			q.leading = false
		}
		q.mu.Unlock()
		for _, w := range batch[1:] {
			w.done <- false
		}
		if next != nil {
			next.done <- true
		}
	}()
	for _, w := range batch {
		w.Err = w.Ctx.Err()
	}
	q.commit(batch)
	committed = true
}

// errPanicked is the outcome of the writes of a batch whose commit
// panicked: whether they were written is not known.
var errPanicked = errors.New("group commit: the batch's commit panicked; the write may or may not be durable")

// Context returns a context for committing batch that ends once the
// contexts of all its writes ended: while one caller still waits, its
// batch goes on. It carries no values. The caller calls cancel when the
// batch is done.
func Context[T any](batch []*Write[T]) (context.Context, context.CancelFunc) {
	ctx, end := context.WithCancel(context.Background())
	var left atomic.Int64
	left.Store(int64(len(batch)))
	stops := make([]func() bool, 0, len(batch))
	for _, w := range batch {
		stops = append(stops, context.AfterFunc(w.Ctx, func() {
			if left.Add(-1) == 0 {
				end()
			}
		}))
	}
	return ctx, func() {
		for _, stop := range stops {
			stop()
		}
		end()
	}
}
