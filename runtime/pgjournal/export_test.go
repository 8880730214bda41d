package pgjournal

import (
	"time"

	"github.com/resumegen/resumegen/runtime/internal/sqljournal"
)

// SchemaV1 returns the DDL of schema version 1 in schema, for the upgrade
// test.
func SchemaV1(schema string) string { return qualify(migrations[0], schema) }

// WorkChannel is workChannel, for the tests of NotifyWork.
func WorkChannel(schema string) string { return workChannel(schema) }

// ClaimBatchSQL is the statement of ClaimBatch for up to lim runs (of a
// worker that lists its versions, with versions), for the plan tests.
// ClaimNext is ClaimBatch of one.
func ClaimBatchSQL(j *Journal, lim int, versions bool) string {
	return claimBatchSQL(j.schema, lim, versions)
}

// GroupWaiting is 1 for a group commit under way, plus the number of
// writes queued behind it.
func GroupWaiting(j *Journal) int { return j.group.Waiting() }

// StepsInOneStatement makes j's groups write their step rows in one
// statement from n rows on, whatever its pool.
func StepsInOneStatement(j *Journal, n int) { j.oneStmt = n }

// OneStatementFrom is oneStatementFrom, for its test.
var OneStatementFrom = oneStatementFrom

// NextWakeQuery is NextWake's query for workflows, and its arguments, for
// the plan tests.
func NextWakeQuery(j *Journal, workflows ...string) (string, []any) {
	return sqljournal.NextWakeQuery(dialect{j.schema}, time.Now(), workflows)
}
