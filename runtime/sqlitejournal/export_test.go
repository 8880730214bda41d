package sqlitejournal

import (
	"context"
	"time"

	"github.com/resumegen/resumegen/runtime/internal/sqljournal"
	"github.com/resumegen/resumegen/runtime/journal"
)

// SchemaV1 is the DDL of schema version 1, for the upgrade test.
var SchemaV1 = migrations[0]

// SetBusyTimeout shortens the wait for another process's write lock, for
// a test, and returns the old value.
func SetBusyTimeout(d time.Duration) time.Duration {
	old := busyTimeout
	busyTimeout = d
	return old
}

// ExplainClaimNext returns SQLite's plan of the statement ClaimNext
// sends for c now, one line per step.
func ExplainClaimNext(ctx context.Context, j *Journal, c journal.ClaimNextRequest) ([]string, error) {
	return ExplainClaimBatch(ctx, j, c, 1)
}

// ExplainClaimBatch returns SQLite's plan of the statement ClaimBatch
// sends for c and up to lim runs now, one line per step.
func ExplainClaimBatch(ctx context.Context, j *Journal, c journal.ClaimNextRequest, lim int) ([]string, error) {
	query, args := j.claimNextSQL(c, time.Now(), lim)
	rows, err := j.db.QueryContext(ctx, "EXPLAIN QUERY PLAN "+query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			return nil, err
		}
		plan = append(plan, detail)
	}
	return plan, rows.Err()
}

// NextWakeQuery is NextWake's query for workflows, and its arguments.
func NextWakeQuery(workflows ...string) (string, []any) {
	return sqljournal.NextWakeQuery(dialect{}, time.Now(), workflows)
}

// GroupWaiting is 1 for a commit under way, plus the number of writes
// queued behind it.
func GroupWaiting(j *Journal) int { return j.group.Waiting() }
