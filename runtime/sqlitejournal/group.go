package sqlitejournal

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/resumegen/resumegen/runtime/internal/groupcommit"
	"github.com/resumegen/resumegen/runtime/journal"
)

// Group commit. SQLite has no group commit of its own: each transaction
// is one fsync of the WAL, and a second writer waits for the first. So the
// journal commits the writes of concurrent runs (step rows, run creations
// and finishes) together, through a groupcommit.Queue: a write that finds
// another commit under way queues, and the queue commits as one
// transaction when that commit ends. Each row keeps its own fence (it is
// written only if its run's lease is still the writer's) and its own
// outcome; each write returns only once it is durable (or refused). A lone
// writer commits at once, in autocommit, as before: batching adds no wait.

// maxGroup bounds the writes of one transaction, so that a long queue does
// not make one caller wait for all of it.
const maxGroup = 128

// groupWrite writes in tx, the group's transaction, or alone when tx is nil
// (in autocommit, or in a transaction of its own that it commits). A write
// that returns journal.ErrLeaseLost wrote nothing (its fence refused it);
// any other error makes the group's writes go alone.
type groupWrite func(ctx context.Context, tx *sql.Tx) error

// commitGroup makes the writes of batch and sets each one's outcome. One
// write goes alone; more share one transaction. A write that fails for
// another reason than its fence rolls the transaction back, and the writes
// go alone instead, so that one write's fault is not another's.
func (j *Journal) commitGroup(batch []*groupcommit.Write[groupWrite]) {
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
			if w.Err == nil {
				w.Err = writeLock(err)
			}
		}
		return
	}
	written := 0
	for _, w := range batch {
		if w.Err != nil {
			continue // its caller gave up
		}
		err := w.Op(ctx, tx)
		if err != nil && !errors.Is(err, journal.ErrLeaseLost) {
			tx.Rollback()
			for _, w := range batch {
				j.commitAlone(w)
			}
			return
		}
		if w.Err = err; err == nil {
			written++
		}
	}
	if written == 0 {
		tx.Rollback()
		return
	}
	if err := tx.Commit(); err != nil {
		for _, w := range batch {
			if w.Err == nil {
				w.Err = fmt.Errorf("commit: %w", writeLock(err))
			}
		}
		return
	}
	j.commits.Add(1)
}

// commitAlone makes w's write on its own.
func (j *Journal) commitAlone(w *groupcommit.Write[groupWrite]) {
	if w.Err != nil {
		return // its caller gave up
	}
	if w.Err = w.Op(w.Ctx, nil); w.Err == nil {
		j.commits.Add(1)
	}
}
