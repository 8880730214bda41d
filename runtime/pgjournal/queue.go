package pgjournal

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/resumegen/resumegen/runtime/internal/sqljournal"
	"github.com/resumegen/resumegen/runtime/journal"
)

var _ journal.Queuer = (*Journal)(nil)

// ConfigureQueues stores the limits of qs as owner's (journal.Queuer).
func (j *Journal) ConfigureQueues(ctx context.Context, owner string, qs []journal.QueueLimits) ([]journal.QueueStats, error) {
	return j.store.ConfigureQueues(ctx, owner, qs, time.Now())
}

// ListQueues lists the queues with limits or unfinished runs
// (journal.Queuer).
func (j *Journal) ListQueues(ctx context.Context) ([]journal.QueueStats, error) {
	return j.store.ListQueues(ctx, time.Now())
}

// queueClaimSet takes a run of a queue: claimSet ($1 owner, $2 lease),
// stamping a start (a pending run, or one whose delayed start came) for
// the queue's rate. The SET reads the row as it was.
const queueClaimSet = claimSet + `,
		started_at = CASE WHEN status = 'pending' OR wait_kind = 'start' THEN clock_timestamp() ELSE started_at END`

// claimQueued claims up to max runs of the queues c lists, within their
// limits, one queue after another, each in a transaction that locks the
// queue's row first (sqljournal.Store.QueueState): the claimers of one
// queue decide one at a time, each counting what the one before it
// committed (READ COMMITTED reads it afresh per statement), so that no
// two of them fill one free slot. A queue without a row has no limits and
// takes no lock.
func (j *Journal) claimQueued(ctx context.Context, c journal.ClaimNextRequest, max int) ([]journal.ClaimedRun, error) {
	var out []journal.ClaimedRun
	for _, q := range c.Queues {
		if len(out) >= max {
			break
		}
		if ready, err := j.store.QueueReady(ctx, executor{j.pool}, q, time.Now()); err != nil || !ready {
			if err != nil {
				return out, err
			}
			continue
		}
		var took []journal.ClaimedRun // ours once the commit succeeds, not before
		err := j.inTx(ctx, func(tx pgx.Tx) error {
			took = took[:0]
			st, err := j.store.QueueState(ctx, executor{tx}, q, time.Now())
			if err != nil {
				return err
			}
			picked, err := sqljournal.Pick(ctx, executor{tx}, q, st, max-len(out), j.queueCandidates(c))
			if err != nil || len(picked) == 0 {
				return err
			}
			ids := make([]string, len(picked))
			for i, p := range picked {
				ids[i] = p.RunID
			}
			rows, err := tx.Query(ctx, qualify(queueClaimSet+`
				WHERE run_id = ANY($3::text[]) AND (status = 'pending' OR `+waitDue+`)
				RETURNING `+runColumns, j.schema), c.Owner, c.Lease, ids)
			if err != nil {
				return err
			}
			defer rows.Close()
			for rows.Next() {
				r, err := scanRun(rows)
				if err != nil {
					return err
				}
				took = append(took, journal.ClaimedRun{Run: r})
			}
			return rows.Err()
		})
		if err == nil {
			out = append(out, took...)
		}
		if err != nil {
			return out, fmt.Errorf("queue %s: %w", q, err) // out: claimed by the queues before
		}
	}
	return out, nil
}

// queueCandidates lists a queue's claimable runs of c's workflows and
// versions (sqljournal.QueueCandidates), locked FOR UPDATE SKIP LOCKED:
// due waiting runs, earliest due first, then pending ones by priority and
// age, which resume_runs_by_queue yields in order. $1 queue, $2
// workflows, $3 full keys, $4 runs taken; with versions, claimableVersions
// reads $5 to $9.
func (j *Journal) queueCandidates(c journal.ClaimNextRequest) sqljournal.QueueCandidates {
	with, versionsOK := "", ""
	var vargs []any
	if len(c.Versions) > 0 {
		workflows, versions := splitVersions(c.Versions)
		olderWorkflows, older := splitVersions(c.Older)
		vargs = []any{workflows, versions, c.AdvertisedWithin, olderWorkflows, older}
		with = claimableVersions
		versionsOK = ` AND (workflow || '', version) IN (SELECT workflow, version FROM claimable)`
	}
	cond := `queue = $1 AND queue <> '' AND workflow || '' = ANY($2::text[]) AND (parent_run_id = '' OR detached)
			AND NOT (queue_key = ANY($3::text[])) AND NOT (run_id = ANY($4::text[]))` + versionsOK
	return func(ctx context.Context, tx sqljournal.Executor, q string, full, taken []string, pending bool, n int) ([]sqljournal.QueueCandidate, error) {
		if full == nil {
			full = []string{}
		}
		if taken == nil {
			taken = []string{}
		}
		args := append([]any{q, c.Workflows, full, taken}, vargs...)
		var out []sqljournal.QueueCandidate
		read := func(query string) error {
			rows, err := tx.Query(ctx, qualify(with+query, j.schema), args...)
			if err != nil {
				return err
			}
			defer rows.Close()
			for rows.Next() {
				var c sqljournal.QueueCandidate
				if err := rows.Scan(&c.RunID, &c.Key, &c.Start); err != nil {
					return err
				}
				out = append(out, c)
			}
			return rows.Err()
		}
		if err := read(` SELECT run_id, queue_key, wait_kind = 'start' FROM {schema}.resume_runs
				WHERE ` + waitDue + ` AND ` + cond + `
				ORDER BY wake_at LIMIT ` + strconv.Itoa(n) + ` FOR UPDATE SKIP LOCKED`); err != nil {
			return nil, err
		}
		if !pending || len(out) >= n {
			return out, nil
		}
		if err := read(` SELECT run_id, queue_key, true FROM {schema}.resume_runs
				WHERE status = 'pending' AND ` + cond + `
				ORDER BY priority DESC, created_at, run_id LIMIT ` + strconv.Itoa(n-len(out)) + ` FOR UPDATE SKIP LOCKED`); err != nil {
			return nil, err
		}
		return out, nil
	}
}
