package pgjournal

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/resumegen/resumegen/runtime/internal/sqljournal"
	"github.com/resumegen/resumegen/runtime/journal"
)

var _ journal.BatchClaimer = (*Journal)(nil)

// claimCandidates lists, as the WITH clauses p, x and w, the oldest runs
// of each kind ClaimNext may take, up to lim each, locked FOR UPDATE SKIP
// LOCKED, and as pick the lim oldest of them: pending runs, running runs
// whose lease lapsed, and waiting runs whose wake-up time passed,
// earliest due first. Each is found on its own, so that the claim's cost
// does not grow with the runs queued, claimed, finished or asleep
// (TestClaimBatchPlan): one condition OR-ing the three, ordered by
// created_at, walked past every run claimed or finished since the oldest
// pending one, and a storm of due waiting runs drained ever slower.
//
// Pending and due runs are read a workflow at a time (a LATERAL join over
// the claimer's workflows) from the partial indexes that hold exactly
// them, resume_runs_claim_pending (workflow, created_at, run_id) and
// resume_runs_claim_due (workflow, wake_at), both of the status and of
// no queue. Read from an index of every run of the status instead, a claim
// walked past the pending or due runs it may not take, older than its
// own: a queue's backlog held by its limits, the runs of workflows no
// worker of this program runs (31 ms a batch of 16 behind 100,000 of
// them, against 1.4 ms), and, with no statistics, the planner read every
// due run and sorted them at each claim (380 runs/s in a wake storm
// against 2,600 analyzed). An index whose predicate is the condition
// leaves the planner no cheaper path, whatever it believes of the table
// (TestClaimPastBacklog, BenchmarkWakeStormUnanalyzed).
//
// Running runs whose lease lapsed are few: they are read from
// resume_runs_by_status_created, past the runs running now (as many as
// the workers execute).
//
// A candidate locked and not picked is unlocked as the statement
// commits: other claimers skip it for that long only.
//
// $1 owner, $2 lease, $3 workflows, $4 the runs the claimer holds; more
// is the condition of a worker that lists its versions.
func claimCandidates(lim int, more string) string {
	l := strconv.Itoa(lim)
	of := ` AND workflow || '' = ANY($3::text[]) AND (parent_run_id = '' OR detached)` + more
	ofEach := ` AND (parent_run_id = '' OR detached)` + more
	// OFFSET 0 keeps the list a value the planner does not look into, as
	// claimableVersions' lists: given the workflows as a constant, each
	// custom plan would cost less than the generic one, and the server
	// would plan every claim anew (TestClaimWithVersionsKeepsAGenericPlan).
	workflows := `(SELECT DISTINCT unnest(l.w) AS workflow FROM (SELECT $3::text[] AS w OFFSET 0) l) f`
	return `p AS (SELECT c.run_id, c.created_at FROM ` + workflows + `, LATERAL (
				SELECT run_id, created_at FROM {schema}.resume_runs
				WHERE ` + ofWorkflow("created_at", "'infinity'") + ` AND status = 'pending' AND queue = ''` + ofEach + `
				ORDER BY workflow, created_at, run_id LIMIT ` + l + ` FOR UPDATE SKIP LOCKED) c),
		x AS (SELECT run_id, created_at FROM {schema}.resume_runs
			WHERE ` + ofStatus("running") + ` AND lease_until < clock_timestamp() AND
				NOT (lease_owner = $1::text AND run_id = ANY($4::text[]))` + of + `
			ORDER BY status, created_at, run_id LIMIT ` + l + ` FOR UPDATE SKIP LOCKED),
		w AS (SELECT c.run_id, c.created_at FROM ` + workflows + `, LATERAL (
				SELECT run_id, created_at FROM {schema}.resume_runs
				WHERE ` + ofWorkflow("wake_at", "statement_timestamp()") + ` AND status = 'waiting' AND queue = ''` + ofEach + `
				ORDER BY workflow, wake_at LIMIT ` + l + ` FOR UPDATE SKIP LOCKED) c),
		pick AS (SELECT run_id FROM (SELECT * FROM p UNION ALL SELECT * FROM x UNION ALL SELECT * FROM w) c
			ORDER BY created_at, run_id LIMIT ` + l + `)
		` + claimSet + `
		WHERE run_id IN (SELECT run_id FROM pick) AND ` + claimableNext + `
		RETURNING ` + runColumns
}

// ofWorkflow selects the runs of workflow f.workflow whose column col is
// at most upTo, as a range of an index (workflow, col, ...) that the
// candidates' order (workflow, col, ...) then follows. Not as
// "workflow = f.workflow": the planner, holding the workflow equal to a
// value, drops it from the order, which resume_runs_by_created then
// yields as well, and read that index from the oldest run on past every
// run of another workflow (and, with statistics that showed every run
// pending, the whole table for a workflow with none). A row comparison is
// no equality: the order keeps its workflow, which only the claim's
// indexes yield.
func ofWorkflow(col, upTo string) string {
	return `(workflow, ` + col + `) >= (f.workflow, '-infinity') AND (workflow, ` + col + `) <= (f.workflow, ` + upTo + `)`
}

// ofStatus selects the runs of status as a range of
// resume_runs_by_status_created (status, created_at, run_id), which the
// candidates' order (status, created_at, run_id) then follows: the one
// plan that reads only the runs of that status. "status = 'pending'"
// let the planner, with statistics from before the runs changed status
// (a burst of runs started, then asleep; a queue filled, then drained),
// read resume_runs_by_created instead, from the oldest run on, past
// every run of another status: 10,000 rows, 11 to 22 ms a claim, in a
// storm of runs just put to sleep (TestClaimBatchPlan). A row comparison
// is no equality: the order keeps its status, which only this index
// yields.
func ofStatus(status string) string {
	return `(status, created_at) >= ('` + status + `', '-infinity') AND (status, created_at) <= ('` + status + `', 'infinity')`
}

// The workflow's test is written "workflow || ''", which no index
// answers, for the same reason: without statistics (a table that grew
// faster than autovacuum analyzes it), the planner read
// resume_runs_by_workflow_created, (workflow, created_at, run_id,
// status), every run of the workflow, and sorted the due ones by wake_at:
// 60 to 90 ms a claim in a storm of 10,000 (TestClaimBatchPlan). Kept
// out of the indexes, it leaves each candidate one index that reads only
// the runs of its status, in order.

// claimBatchSQL is ClaimBatch's statement for up to lim runs: with
// versions, the claim of a worker that lists them (see claimableVersions:
// $5 to $9). The limit is written into the statement, not bound, so that
// the server plans it for the number it is: there are as many statements
// as distinct batch sizes, at most a worker's Concurrency.
func claimBatchSQL(schema string, lim int, versions bool) string {
	if !versions {
		return qualify(`WITH `+claimCandidates(lim, ""), schema)
	}
	return qualify(claimableVersions+`, `+claimCandidates(lim, `
				AND (workflow || '', version) IN (SELECT workflow, version FROM claimable)`), schema)
}

// entryStepsOf is entrySteps (qualified) for several runs ($1), each row
// led by its run's id.
func entryStepsOf(entrySteps string) string {
	s := strings.Replace(entrySteps, "SELECT ", "SELECT run_id, ", 1)
	return strings.Replace(s, "WHERE run_id = $1", "WHERE run_id = ANY($1::text[])", 1)
}

// ClaimNext claims the oldest claimable run of one of c.Workflows, skipping
// runs another worker is claiming at the same moment, and reads its
// journal: ClaimBatch of one. It returns ErrNoRunReady when no run can be
// claimed.
func (j *Journal) ClaimNext(ctx context.Context, c journal.ClaimNextRequest) (journal.RunRecord, []journal.StepRecord, error) {
	return sqljournal.FirstClaimed(j.ClaimBatch(ctx, c, 1))
}

// ClaimBatch claims up to max runs of c.Workflows (journal.BatchClaimer),
// oldest first, skipping those another claimer is taking, in one
// statement, then reads their journals in one query: two round trips
// whatever max, the claim committed first.
func (j *Journal) ClaimBatch(ctx context.Context, c journal.ClaimNextRequest, max int) ([]journal.ClaimedRun, error) {
	if len(c.Workflows) == 0 {
		return nil, fmt.Errorf("claim next for %s: no workflows: %w", c.Owner, journal.ErrNoRunReady)
	}
	if max < 1 {
		max = 1
	}
	holding := c.Holding
	if holding == nil {
		holding = []string{}
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("claim next for %s: %w", c.Owner, err)
	}
	// Once sent, the claim commits whatever becomes of ctx: a claim
	// cancelled in flight, or a journal read cancelled after it, would
	// leave runs running under a live owner that does not know it holds
	// them, and that no other worker may take. The claim takes no lock it
	// waits for (SKIP LOCKED, try-locks only): the bound covers a server
	// that stopped answering.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), claimBound)
	defer cancel()
	args := []any{c.Owner, c.Lease, c.Workflows, holding}
	if len(c.Versions) > 0 {
		workflows, versions := splitVersions(c.Versions)
		olderWorkflows, older := splitVersions(c.Older)
		args = append(args, workflows, versions, c.AdvertisedWithin, olderWorkflows, older)
	}
	// A queue's runs first: their limits bound them, so they cannot
	// starve the runs of no queue for long; the other way round, a
	// backlog of those would hold a queue's free slots empty.
	runs, err := j.claimQueued(ctx, c, max)
	if err != nil {
		// Each queue's claim commits on its own: one that failed took
		// nothing, but those before it did.
		for i := range runs {
			runs[i].Err = fmt.Errorf("run %s: %w", runs[i].Run.RunID, err)
		}
		if len(runs) > 0 {
			return runs, nil
		}
		return nil, fmt.Errorf("claim next for %s: %w", c.Owner, err)
	}
	queued := len(runs) // committed, each queue's claim on its own
	var rows pgx.Rows
	if len(runs) < max {
		rows, err = j.pool.Query(ctx, claimBatchSQL(j.schema, max-len(runs), len(c.Versions) > 0), args...)
	}
	if err == nil && rows != nil {
		for rows.Next() {
			r, serr := scanRun(rows)
			if serr != nil {
				err = serr
				break
			}
			runs = append(runs, journal.ClaimedRun{Run: r})
		}
		rows.Close()
		err = cmp.Or(err, rows.Err())
	}
	switch {
	case err != nil && queued == 0:
		// The statement failed as a whole: nothing was claimed.
		return nil, fmt.Errorf("claim next for %s: %w", c.Owner, err)
	case err != nil:
		// The statement failed as a whole, after the queues' claims
		// committed: those runs are ours all the same.
		runs = runs[:queued]
	}
	if len(runs) == 0 {
		j.reads.Add(1) // a look that found nothing: an idle worker's query
		return nil, fmt.Errorf("claim next for %s: %w", c.Owner, journal.ErrNoRunReady)
	}
	j.commits.Add(1)
	slices.SortFunc(runs, func(a, b journal.ClaimedRun) int {
		return cmp.Or(a.Run.CreatedAt.Compare(b.Run.CreatedAt), cmp.Compare(a.Run.RunID, b.Run.RunID))
	})
	// The leases are ours from here on: the journals cannot change under
	// them.
	ids := make([]string, len(runs))
	at := make(map[string]int, len(runs))
	for i, r := range runs {
		ids[i], at[r.Run.RunID] = r.Run.RunID, i
	}
	j.reads.Add(1)
	srows, err := j.pool.Query(ctx, entryStepsOf(j.sql.entrySteps), ids)
	if err == nil {
		for srows.Next() {
			var id string
			s, serr := scanEntryStep(srows, &id)
			s.RunID = id
			if serr != nil {
				err = serr
				break
			}
			i := at[id]
			runs[i].Steps = append(runs[i].Steps, s)
		}
		srows.Close()
		err = cmp.Or(err, srows.Err())
	}
	if err != nil {
		// The runs are claimed: returned each with the error, so that
		// the caller knows it holds them (their leases lapse, and the
		// engine claims them again, see journal.ClaimNextRequest.Holding).
		for i := range runs {
			runs[i].Steps = nil
			runs[i].Err = fmt.Errorf("run %s: read journal: %w", runs[i].Run.RunID, err)
		}
	}
	return runs, nil
}
