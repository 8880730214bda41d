package pgjournal

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/resumegen/resumegen/runtime/internal/groupcommit"
	"github.com/resumegen/resumegen/runtime/journal"
)

// Group commit. PostgreSQL groups the WAL flushes of concurrent commits by
// itself, but each transaction still costs its round trips and its
// per-transaction work on the server. So the journal sends the step rows
// and run finishes of concurrent runs that queue behind a write under way
// (a groupcommit.Queue) as one transaction, in one pipelined batch and one
// round trip: BEGIN, the group's step rows in one statement (writeSteps)
// or one a row (below), one statement a finish, COMMIT. Each write keeps its own fence (a run
// whose lease moved on writes nothing and learns it: writeSteps returns
// the rows it wrote) and returns once its row is durable. A lone write is
// one statement in autocommit, as before.
//
// One statement for the step rows, not one a row, where it costs the
// server less (see docs/benchmarks.md, "Group commit, one statement a
// group"): on a pool that prepares nothing (QueryExecModeExec, as behind a
// transaction pooler) every statement is parsed, described and planned
// where it runs, and 16 rows in one statement took 40% of the server's
// time of 16 statements; with prepared statements each row's statement is cheap (a cached
// plan), and one statement wins only for large groups (from 32 rows).
//
// Lock order: writeSteps share-locks the group's runs in run id order,
// then the finishes lock theirs in run id order. A group locks only rows
// whose lease its writes name, that is, runs its own engines hold, and a
// run's step row and its finish are never in one group (a run writes one
// at a time): two processes' groups cannot wait for each other in a
// cycle.
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
	// step is the row of a step write (sql is writeStep, args its
	// stepArgs), which writeSteps may write with others; nil for a finish.
	step *journal.StepRecord
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
	// Stable: two writes of one run keep their order.
	slices.SortStableFunc(live, func(a, b *groupcommit.Write[groupWrite]) int {
		return strings.Compare(a.Op.lease.RunID, b.Op.lease.RunID)
	})
	// steps go in writeSteps, alone the other writes, each its statement.
	steps, alone := splitSteps(live, j.oneStmt)
	ctx, cancel := groupcommit.Context(live)
	defer cancel()
	b := &pgx.Batch{}
	b.Queue("BEGIN")
	if steps != nil {
		b.Queue(j.sql.writeSteps, stepColumnArrays(steps)...)
	}
	for _, w := range alone {
		b.Queue(w.Op.sql, w.Op.args...)
	}
	b.Queue("COMMIT")
	br := j.pool.SendBatch(ctx, b)
	_, err := br.Exec()
	var written map[stepID]bool
	if err == nil && steps != nil {
		written, err = writtenSteps(br, len(steps))
	}
	tags := make([]pgconn.CommandTag, len(alone))
	for i := range alone {
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
	for _, w := range steps {
		if !written[stepID{w.Op.step.RunID, w.Op.step.StepKey}] {
			w.Err = fmt.Errorf("%s: run %s, epoch %d: %w", w.Op.what, w.Op.lease.RunID, w.Op.lease.Epoch, journal.ErrLeaseLost)
		}
	}
	for i, w := range alone {
		w.Err = leaseHeld(tags[i], w.Op.lease)
		if w.Err != nil {
			w.Err = fmt.Errorf("%s: %w", w.Op.what, w.Err)
		}
	}
	j.commits.Add(1)
}

// oneStatementFrom is the number of step rows from which a group writes
// them in one statement, on pool.
func oneStatementFrom(pool *pgxpool.Pool) int {
	switch pool.Config().ConnConfig.DefaultQueryExecMode {
	case pgx.QueryExecModeCacheStatement, pgx.QueryExecModeCacheDescribe:
		return 32
	}
	return 2
}

// stepID names a step row.
type stepID struct{ run, key string }

// splitSteps parts live (sorted by run id) into the step writes that
// writeSteps writes together, nil unless there are at least from, and the
// writes that go in statements of their own. A step row written twice in
// one group (an upsert cannot touch a row twice) keeps the statements of
// its own, in order.
func splitSteps(live []*groupcommit.Write[groupWrite], from int) (steps, alone []*groupcommit.Write[groupWrite]) {
	seen := make(map[stepID]bool, len(live))
	for _, w := range live {
		if w.Op.step == nil {
			alone = append(alone, w)
			continue
		}
		id := stepID{w.Op.step.RunID, w.Op.step.StepKey}
		if seen[id] {
			return nil, live
		}
		seen[id] = true
		steps = append(steps, w)
	}
	if len(steps) < max(from, 2) {
		return nil, live
	}
	return steps, alone
}

// stepColumnArrays are writeSteps' arguments: one array a column of
// stepArgs, one element a write of steps.
func stepColumnArrays(steps []*groupcommit.Write[groupWrite]) []any {
	n := len(steps)
	var (
		runs, keys, names, statuses, errs = make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
		results, details, histories       = make([]*string, n), make([]*string, n), make([]*string, n)
		attempts, bases                   = make([]int32, n), make([]int32, n)
		seqs, epochs                      = make([]int64, n), make([]int64, n)
		started                           = make([]time.Time, n)
		finished                          = make([]*time.Time, n)
		leaseRuns, owners                 = make([]string, n), make([]string, n)
		finals                            = make([]bool, n)
	)
	text := func(v any) *string {
		if s, ok := v.(string); ok {
			return &s
		}
		return nil
	}
	for i, w := range steps {
		s, l, args := w.Op.step, w.Op.lease, w.Op.args
		runs[i], keys[i], names[i], statuses[i], errs[i] = s.RunID, s.StepKey, s.Name, string(s.Status), s.Error
		results[i], details[i], histories[i] = text(args[4]), text(args[11]), text(args[13])
		attempts[i], bases[i], seqs[i] = int32(s.Attempt), int32(s.AttemptBase), s.Seq
		started[i], finished[i] = s.StartedAt, nullTime(s.FinishedAt)
		leaseRuns[i], owners[i], epochs[i] = l.RunID, l.Owner, l.Epoch
		finals[i] = s.Final
	}
	return []any{runs, keys, names, statuses, results, errs, attempts, bases, seqs, started, finished,
		details, finals, histories, leaseRuns, owners, epochs}
}

// writtenSteps reads writeSteps' answer from br: the rows it wrote, of n.
func writtenSteps(br pgx.BatchResults, n int) (map[stepID]bool, error) {
	rows, err := br.Query()
	if err != nil {
		return nil, err
	}
	written := make(map[stepID]bool, n)
	for rows.Next() {
		var id stepID
		if err := rows.Scan(&id.run, &id.key); err != nil {
			rows.Close()
			return nil, err
		}
		written[id] = true
	}
	rows.Close()
	return written, rows.Err()
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
