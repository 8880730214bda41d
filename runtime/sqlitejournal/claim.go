package sqlitejournal

import (
	"cmp"
	"context"
	"database/sql"
	"slices"

	"github.com/resumegen/resumegen/runtime/internal/sqljournal"
	"github.com/resumegen/resumegen/runtime/journal"
)

var _ journal.BatchClaimer = (*Journal)(nil)

// ClaimNext claims the oldest pending or abandoned run of c.Workflows:
// ClaimBatch of one. The one writer connection serializes claims, so no
// two workers get one run.
func (j *Journal) ClaimNext(ctx context.Context, c journal.ClaimNextRequest) (journal.RunRecord, []journal.StepRecord, error) {
	return sqljournal.FirstClaimed(j.ClaimBatch(ctx, c, 1))
}

// ClaimBatch claims up to max of the oldest claimable runs of c.Workflows
// (journal.BatchClaimer) with one statement, and reads their journals, in
// one transaction: one commit whatever max. The one writer connection
// serializes claims, so no two claimers get one run.
func (j *Journal) ClaimBatch(ctx context.Context, c journal.ClaimNextRequest, max int) ([]journal.ClaimedRun, error) {
	if len(c.Workflows) == 0 {
		return nil, journal.ErrNoRunReady
	}
	if max < 1 {
		max = 1
	}
	tx, err := j.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, writeLock(err)
	}
	defer tx.Rollback()
	t := j.clock() // once the write lock is held
	// A queue's runs first: their limits bound them, so they cannot
	// starve the runs of no queue for long; the other way round, a
	// backlog of those would hold a queue's free slots empty.
	runs, err := j.claimQueued(ctx, tx, c, t, max)
	if err != nil {
		return nil, err
	}
	if len(runs) == max {
		return j.claimed(ctx, tx, runs)
	}
	query, args := j.claimNextSQL(c, t, max-len(runs))
	rows, err := tx.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		r, err := scanRun(rows)
		if err != nil {
			rows.Close()
			return nil, err
		}
		runs = append(runs, journal.ClaimedRun{Run: r})
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return j.claimed(ctx, tx, runs)
}

// claimed reads the journals of the runs a claim took in tx, in order,
// and commits.
func (j *Journal) claimed(ctx context.Context, tx *sql.Tx, runs []journal.ClaimedRun) ([]journal.ClaimedRun, error) {
	if len(runs) == 0 {
		j.reads.Add(1) // a look that found nothing: an idle worker's query
		return nil, journal.ErrNoRunReady
	}
	slices.SortFunc(runs, func(a, b journal.ClaimedRun) int {
		return cmp.Or(a.Run.CreatedAt.Compare(b.Run.CreatedAt), cmp.Compare(a.Run.RunID, b.Run.RunID))
	})
	for i := range runs {
		var err error
		if runs[i].Steps, err = j.entrySteps(ctx, tx, runs[i].Run.RunID); err != nil {
			return nil, err
		}
	}
	if err := tx.Commit(); err != nil {
		return nil, err
	}
	j.commits.Add(1)
	return runs, nil
}
