package pgjournal

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/resumegen/resumegen/runtime/internal/groupcommit"
	"github.com/resumegen/resumegen/runtime/journal"
)

// Group commit. PostgreSQL groups the WAL flushes of concurrent commits by
// itself, but each transaction still costs its round trips and its
// per-transaction work on the server. So the journal sends the step rows
// and run finishes of concurrent runs that queue behind a write under way
// (a groupcommit.Queue) as one transaction: BEGIN, one fenced statement a
// write, COMMIT, in one pipelined batch and one round trip. Each write
// keeps its own fence (a run whose lease moved on writes nothing and
// learns it) and returns once its row is durable. A lone write is one
// statement in autocommit, as before.
//
// A statement the server refuses aborts the whole transaction: the
// group's writes are then sent one by one, so that the fault is only its
// own. A connection that fails meanwhile fails every write of the group
// (its commit may or may not have happened: the engine retries each,
// which the fences make safe, as it does a lone write's).

// maxGroup bounds the writes of one transaction.
const maxGroup = 128

// groupWrite is one fenced statement of a group: its text and arguments,
// and the lease that fences it (no row affected: the lease was lost).
type groupWrite struct {
	sql   string
	args  []any
	lease journal.Lease
	what  string // "run R, step S" or "run R: finish", for errors
}

// write sends w through the group commit.
func (j *Journal) write(ctx context.Context, w groupWrite) error {
	return j.group.Do(ctx, w)
}

// commitGroup commits batch and sets each write's outcome.
func (j *Journal) commitGroup(batch []*groupcommit.Write[groupWrite]) {
	var live []*groupcommit.Write[groupWrite]
	for _, w := range batch {
		if w.Err == nil {
			live = append(live, w)
		}
	}
	if len(live) <= 1 {
		for _, w := range live {
			j.commitAlone(w)
		}
		return
	}
	// Rows locked in run id order: two processes' groups cannot wait for
	// each other in a cycle.
	slices.SortFunc(live, func(a, b *groupcommit.Write[groupWrite]) int {
		return strings.Compare(a.Op.lease.RunID, b.Op.lease.RunID)
	})
	ctx, cancel := groupcommit.Context(live)
	defer cancel()
	b := &pgx.Batch{}
	b.Queue("BEGIN")
	for _, w := range live {
		b.Queue(w.Op.sql, w.Op.args...)
	}
	b.Queue("COMMIT")
	br := j.pool.SendBatch(ctx, b)
	tags := make([]pgconn.CommandTag, len(live))
	_, err := br.Exec()
	for i := range live {
		if err == nil {
			tags[i], err = br.Exec()
		}
	}
	if err == nil {
		var tag pgconn.CommandTag
		if tag, err = br.Exec(); err == nil && tag.String() != "COMMIT" {
			err = fmt.Errorf("the server answered %q: the transaction was rolled back", tag)
		}
	}
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	var pgErr *pgconn.PgError
	switch {
	case errors.As(err, &pgErr):
		// A statement refused, or the commit: nothing of the group
		// committed. One write's fault is not the others'.
		for _, w := range live {
			j.commitAlone(w)
		}
		return
	case err != nil:
		for _, w := range live {
			w.Err = fmt.Errorf("%s: write (in a group of %d): %w", w.Op.what, len(live), err)
		}
		return
	}
	for i, w := range live {
		w.Err = leaseHeld(tags[i], w.Op.lease)
		if w.Err != nil {
			w.Err = fmt.Errorf("%s: %w", w.Op.what, w.Err)
		}
	}
	j.commits.Add(1)
}

// commitAlone sends w's statement on its own, in autocommit.
func (j *Journal) commitAlone(w *groupcommit.Write[groupWrite]) {
	tag, err := j.pool.Exec(w.Ctx, w.Op.sql, w.Op.args...)
	if err != nil {
		w.Err = fmt.Errorf("%s: write: %w", w.Op.what, err)
		return
	}
	if w.Err = leaseHeld(tag, w.Op.lease); w.Err != nil {
		w.Err = fmt.Errorf("%s: %w", w.Op.what, w.Err)
		return
	}
	j.commits.Add(1)
}
