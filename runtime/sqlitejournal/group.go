package sqlitejournal

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"

	"github.com/resumegen/resumegen/runtime/journal"
)

// Group commit. SQLite has no group commit of its own: each transaction
// is one fsync of the WAL, and a second writer waits for the first. So the
// journal commits the step rows of concurrent runs together: a WriteStep
// that finds another commit under way queues its row, and the queue
// commits as one transaction when that commit ends. Each row keeps its own
// fence (it is written only if its run's lease is still the writer's) and
// its own outcome; each WriteStep returns only once its row is durable (or
// refused). A lone writer commits its row at once, as one statement in
// autocommit, as before: batching adds no wait.
//
// The commit is led by one of the callers, not by a goroutine of the
// journal: the caller that finds no commit under way commits the queue,
// then hands the lead to the first caller that queued meanwhile.

// maxGroup bounds the writes of one transaction, so that a long queue does
// not make one caller wait for all of it.
const maxGroup = 128

// groupCommit is the queue of writes waiting for the commit under way.
type groupCommit struct {
	mu      sync.Mutex
	leading bool          // a caller is committing, or about to
	queue   []*groupWrite // writes waiting behind it, oldest first
}

// groupWrite is one caller's write and, once committed, its outcome.
type groupWrite struct {
	ctx context.Context
	// write writes in tx, the group's transaction, or alone when tx is
	// nil (in autocommit, or in a transaction of its own that it commits).
	// A write that returns journal.ErrLeaseLost wrote nothing (its fence
	// refused it); any other error makes the group's writes go alone.
	write func(ctx context.Context, tx *sql.Tx) error
	err   error
	// done receives true when this caller is to lead the next commit, and
	// false when its write was committed (or refused) by another's.
	done chan bool
}

// do commits write, with whatever writes queue meanwhile, and returns its
// outcome.
func (g *groupCommit) do(ctx context.Context, j *Journal, write func(ctx context.Context, tx *sql.Tx) error) error {
	w := &groupWrite{ctx: ctx, write: write}
	g.mu.Lock()
	if !g.leading {
		g.leading = true
		g.mu.Unlock()
		g.lead(j, w)
		return w.err
	}
	w.done = make(chan bool, 1)
	g.queue = append(g.queue, w)
	g.mu.Unlock()
	// The caller waits for its turn whatever ctx says: a write under way
	// cannot be recalled. One whose ctx ended before its turn is not made,
	// and returns ctx's error.
	if lead := <-w.done; lead {
		g.lead(j, w)
	}
	return w.err
}

// lead commits first's write and those queued behind it, and hands the
// lead on to the first write queued meanwhile, or gives it up.
func (g *groupCommit) lead(j *Journal, first *groupWrite) {
	g.mu.Lock()
	n := min(len(g.queue), maxGroup-1)
	batch := append([]*groupWrite{first}, g.queue[:n]...)
	g.queue = append(g.queue[:0:0], g.queue[n:]...)
	g.mu.Unlock()

	j.commitGroup(batch)

	g.mu.Lock()
	var next *groupWrite
	if len(g.queue) > 0 {
		next, g.queue = g.queue[0], g.queue[1:]
	} else {
		g.leading = false
	}
	g.mu.Unlock()
	for _, w := range batch[1:] {
		w.done <- false
	}
	if next != nil {
		next.done <- true
	}
}

// commitGroup makes the writes of batch and sets each one's outcome. One
// write goes alone; more share one transaction. A write that fails for
// another reason than its fence rolls the transaction back, and the writes
// go alone instead, so that one write's fault is not another's.
func (j *Journal) commitGroup(batch []*groupWrite) {
	if len(batch) == 1 {
		j.commitAlone(batch[0])
		return
	}
	// Statements run uninterrupted: an interrupted statement rolls back
	// the whole transaction, other runs' writes with it. A write whose
	// caller gave up before its turn is not made.
	ctx := context.Background()
	tx, err := j.db.BeginTx(ctx, nil)
	if err != nil {
		for _, w := range batch {
			w.err = writeLock(err)
		}
		return
	}
	written := 0
	for _, w := range batch {
		if w.err = w.ctx.Err(); w.err != nil {
			continue
		}
		err := w.write(ctx, tx)
		if err != nil && !errors.Is(err, journal.ErrLeaseLost) {
			tx.Rollback()
			for _, w := range batch {
				j.commitAlone(w)
			}
			return
		}
		if w.err = err; err == nil {
			written++
		}
	}
	if written == 0 {
		tx.Rollback()
		return
	}
	if err := tx.Commit(); err != nil {
		for _, w := range batch {
			if w.err == nil {
				w.err = fmt.Errorf("commit: %w", writeLock(err))
			}
		}
		return
	}
	j.commits.Add(1)
}

// commitAlone makes w's write on its own.
func (j *Journal) commitAlone(w *groupWrite) {
	if w.err = w.ctx.Err(); w.err != nil {
		return
	}
	if w.err = w.write(w.ctx, nil); w.err == nil {
		j.commits.Add(1)
	}
}
