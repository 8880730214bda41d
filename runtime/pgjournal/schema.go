package pgjournal

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// migrations upgrade the schema one version at a time; migrations[i] takes
// it from version i to i+1. Append, never edit: a database records the
// version it reached in resume_schema. "{schema}." stands for the journal's
// quoted schema name.
//
// input, output and result are json, not jsonb: json keeps the text as
// written, so a stored input compares equal to the same input sent again.
//
// Unlike SQLite's, resume_steps.run_id has no foreign key: every step write
// already checks, and share-locks, its run's row (the lease fence), so the
// key's trigger would only add its cost, ~5% of a default step.
var migrations = []string{
	// 1: runs, steps and manifests.
	`
CREATE TABLE {schema}.resume_runs (
	run_id         text PRIMARY KEY,
	workflow       text NOT NULL,
	version        text NOT NULL,
	status         text NOT NULL,
	input          json NOT NULL,
	output         json,
	error          text NOT NULL DEFAULT '',
	attention_step text NOT NULL DEFAULT '',
	attempts       integer NOT NULL DEFAULT 0,
	lease_owner    text NOT NULL DEFAULT '',
	lease_until    timestamptz,
	epoch          bigint NOT NULL DEFAULT 0,
	created_at     timestamptz NOT NULL,
	updated_at     timestamptz NOT NULL
);
CREATE INDEX resume_runs_by_status ON {schema}.resume_runs (status, created_at);
CREATE TABLE {schema}.resume_steps (
	run_id       text NOT NULL,
	step_key     text NOT NULL,
	name         text NOT NULL,
	status       text NOT NULL,
	result       json,
	error        text NOT NULL DEFAULT '',
	attempt      integer NOT NULL,
	attempt_base integer NOT NULL DEFAULT 0,
	seq          bigint NOT NULL,
	started_at   timestamptz NOT NULL,
	finished_at  timestamptz,
	PRIMARY KEY (run_id, step_key)
);
CREATE TABLE {schema}.resume_manifests (
	workflow   text NOT NULL,
	version    text NOT NULL,
	manifest   text NOT NULL,
	created_at timestamptz NOT NULL,
	PRIMARY KEY (workflow, version)
);
`,
	// 2: why a run needs attention: '' (it does not), 'step' (a once step's
	// outcome is unknown) or 'version' (its version is not the program's).
	// Runs parked before the column existed are classified by whether they
	// name a step.
	`
ALTER TABLE {schema}.resume_runs ADD COLUMN attention_kind text NOT NULL DEFAULT '';
UPDATE {schema}.resume_runs SET attention_kind = CASE WHEN attention_step <> '' THEN 'step' ELSE 'version' END
WHERE status = 'needs_attention';
`,
	// 3: resume_lease_lost fails the statement that calls it. A tx step's
	// journal row and its COMMIT go to the server in one round trip, so a
	// row the lease fence refuses must abort the transaction (and with it
	// the step's own writes), not just write nothing. VOLATILE (plpgsql's
	// default): the planner never evaluates it ahead of time.
	`
CREATE FUNCTION {schema}.resume_lease_lost(run_id text, epoch bigint) RETURNS integer
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
	RAISE EXCEPTION 'resume: run %, epoch %: the lease moved on to another owner', run_id, epoch
		USING ERRCODE = 'RSM01';
END
$$;
`,
	// 4: a run becoming pending (created, released, retried, resolved,
	// accepted, or set so by hand) notifies the schema's work channel,
	// which idle workers LISTEN on (see workChannel). Only runs' status
	// changes fire it, never a step's write.
	`
CREATE FUNCTION {schema}.resume_notify_work() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
	PERFORM pg_notify('resume_work_' || left(md5(TG_TABLE_SCHEMA), 16), NEW.workflow);
	RETURN NULL;
END
$$;
CREATE TRIGGER resume_runs_notify_work AFTER INSERT OR UPDATE OF status ON {schema}.resume_runs
	FOR EACH ROW WHEN (NEW.status = 'pending') EXECUTE FUNCTION {schema}.resume_notify_work();
`,
	// 5: a step's outcome, as the body received it, is history. final marks
	// a failed row the body received (replayed, never executed again);
	// error_detail is what rebuilds its error; history lists every failed
	// attempt. failed_step is the step whose failure ended a failed run:
	// the one a retry reopens. Runs that failed before: their failed rows
	// were delivered to the body, and the last one ended the run.
	`
ALTER TABLE {schema}.resume_steps ADD COLUMN error_detail json;
ALTER TABLE {schema}.resume_steps ADD COLUMN final boolean NOT NULL DEFAULT false;
ALTER TABLE {schema}.resume_steps ADD COLUMN history json;
ALTER TABLE {schema}.resume_runs ADD COLUMN failed_step text NOT NULL DEFAULT '';
UPDATE {schema}.resume_steps SET final = true
WHERE status = 'failed' AND run_id IN (SELECT run_id FROM {schema}.resume_runs WHERE status = 'failed');
UPDATE {schema}.resume_runs SET failed_step = COALESCE((SELECT s.step_key FROM {schema}.resume_steps s
	WHERE s.run_id = resume_runs.run_id AND s.status = 'failed' ORDER BY s.seq DESC LIMIT 1), '')
WHERE status = 'failed';
`,
	// 6: child runs. parent_run_id names the run that executes this one
	// as a child run ('' for a run of its own); workers never claim a
	// child. error_detail rebuilds a failed run's error with its
	// identities, for the parent that receives it.
	`
ALTER TABLE {schema}.resume_runs ADD COLUMN parent_run_id text NOT NULL DEFAULT '';
ALTER TABLE {schema}.resume_runs ADD COLUMN error_detail json;
`,
	// 7: crash loops. progress_attempt is the value of attempts when the
	// run last made progress: the entry's first step row written (the
	// step write sets it) or an entry finished (FinishRun sets it).
	// attempts - progress_attempt is the claims since: a run whose claims
	// keep ending without progress, its process dying each time, is
	// failed as a crash loop. Existing runs start with a clean count.
	`
ALTER TABLE {schema}.resume_runs ADD COLUMN progress_attempt integer NOT NULL DEFAULT 0;
UPDATE {schema}.resume_runs SET progress_attempt = attempts;
`,
	// 8: the owners that hold a liveness lock (see liveness.go): a run of
	// an owner listed here whose lock is free is taken over at once; an
	// owner never listed (a worker of an older version) has its lease
	// waited out.
	`
CREATE TABLE {schema}.resume_owners (
	owner text PRIMARY KEY,
	since timestamptz NOT NULL
);
`,
	// 9: schedules (resume.Engine.Schedule). One row per schedule name:
	// what it starts and when, the last tick started and the next one;
	// revision counts the row's writes, which compare and set it.
	`
CREATE TABLE {schema}.resume_schedules (
	name           text PRIMARY KEY,
	workflow       text NOT NULL,
	spec           text NOT NULL,
	missed         text NOT NULL,
	catch_up_limit integer NOT NULL DEFAULT 0,
	last_tick      timestamptz,
	next_tick      timestamptz NOT NULL,
	revision       bigint NOT NULL,
	created_at     timestamptz NOT NULL,
	updated_at     timestamptz NOT NULL
);
`,
	// 10: waiting. A run in status 'waiting' gave up its worker and lease;
	// wait_kind says for what ('sleep', 'signal', 'start', 'child'),
	// wait_name for which event or child run, wake_at until when (NULL
	// for ever). resume_runs_by_wake lets a claim find the due ones
	// without reading the others. resume_signals keeps the events sent to
	// a run until an await consumes one (consumed_key: the await's step
	// key, at most one signal each). A run that finishes notifies the
	// schema's done channel, for Engine.Wait (see doneChannel).
	`
ALTER TABLE {schema}.resume_runs ADD COLUMN wait_kind text NOT NULL DEFAULT '';
ALTER TABLE {schema}.resume_runs ADD COLUMN wait_name text NOT NULL DEFAULT '';
ALTER TABLE {schema}.resume_runs ADD COLUMN wake_at timestamptz;
CREATE INDEX resume_runs_by_wake ON {schema}.resume_runs (status, wake_at);
CREATE TABLE {schema}.resume_signals (
	run_id       text NOT NULL,
	name         text NOT NULL,
	seq          bigint NOT NULL,
	payload      json NOT NULL,
	sent_at      timestamptz NOT NULL,
	consumed_key text NOT NULL DEFAULT '',
	PRIMARY KEY (run_id, seq)
);
CREATE INDEX resume_signals_kept ON {schema}.resume_signals (run_id, name, seq) WHERE consumed_key = '';
CREATE UNIQUE INDEX resume_signals_consumed ON {schema}.resume_signals (run_id, consumed_key) WHERE consumed_key <> '';
CREATE FUNCTION {schema}.resume_notify_done() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
	PERFORM pg_notify('resume_done_' || left(md5(TG_TABLE_SCHEMA), 16), NEW.run_id);
	RETURN NULL;
END
$$;
CREATE TRIGGER resume_runs_notify_done AFTER UPDATE OF status ON {schema}.resume_runs
	FOR EACH ROW WHEN (NEW.status IN ('succeeded', 'failed', 'cancelled', 'needs_attention')) EXECUTE FUNCTION {schema}.resume_notify_done();
`,
	// 11: deploys. A manifest's definition is its version's step list (JSON
	// of deploy.Definition, NULL for one stored before), and seq orders a
	// workflow's versions by when the journal first saw them; manifests
	// stored before keep their created_at order. moves lists a run's
	// moves between versions (NULL for none; jsonb, so that a move is
	// appended in place). resume_workers holds the versions each worker
	// process advertised, and when.
	`
ALTER TABLE {schema}.resume_manifests ADD COLUMN definition json;
ALTER TABLE {schema}.resume_manifests ADD COLUMN seq bigint;
UPDATE {schema}.resume_manifests m SET seq = o.n
FROM (SELECT workflow, version, row_number() OVER (ORDER BY created_at, workflow, version) AS n FROM {schema}.resume_manifests) o
WHERE m.workflow = o.workflow AND m.version = o.version;
ALTER TABLE {schema}.resume_manifests ALTER COLUMN seq SET NOT NULL;
CREATE UNIQUE INDEX resume_manifests_by_seq ON {schema}.resume_manifests (workflow, seq);
ALTER TABLE {schema}.resume_runs ADD COLUMN moves jsonb;
CREATE TABLE {schema}.resume_workers (
	owner    text NOT NULL,
	workflow text NOT NULL,
	version  text NOT NULL,
	seen_at  timestamptz NOT NULL,
	PRIMARY KEY (owner, workflow, version)
);
CREATE INDEX resume_workers_by_version ON {schema}.resume_workers (workflow, version, seen_at);
`,
	// 12: run listings (resumectl ui) page by keyset on (created_at,
	// run_id), newest or oldest first, whole or by status or workflow,
	// without sorting or skipping rows; the workflow index holds the
	// status so that counting a workflow's runs per status reads it alone.
	`
CREATE INDEX resume_runs_by_created ON {schema}.resume_runs (created_at, run_id);
CREATE INDEX resume_runs_by_status_created ON {schema}.resume_runs (status, created_at, run_id);
CREATE INDEX resume_runs_by_workflow_created ON {schema}.resume_runs (workflow, created_at, run_id, status);
`,
	// 13: operators' surfaces. resume_actions records each operator's
	// write action on a run (resumectl, the web UI): who, what, when, from
	// where, in the action's own transaction. resume_keys lists the ids
	// of the keys that seal the journal's values (resume.WithCodec), so
	// that resumectl knows the journal is sealed before it writes to it.
	`
CREATE TABLE {schema}.resume_actions (
	run_id text        NOT NULL,
	seq    bigint      NOT NULL,
	action text        NOT NULL,
	detail text        NOT NULL,
	actor  text        NOT NULL,
	origin text        NOT NULL,
	via    text        NOT NULL,
	at     timestamptz NOT NULL,
	PRIMARY KEY (run_id, seq)
);
CREATE TABLE {schema}.resume_keys (
	key_id          text        NOT NULL PRIMARY KEY,
	first_sealed_at timestamptz NOT NULL
);
`,
	// 14: cancellation and deadlines. cancel_requested_at is when a person
	// asked the run to stop (NULL if nobody did): the next engine to
	// execute it unwinds its body, its deferred steps still executing, and
	// it ends cancelled. deadline is when the run is past its deadline
	// (NULL for none), by the server's clock.
	`
ALTER TABLE {schema}.resume_runs ADD COLUMN cancel_requested_at timestamptz;
ALTER TABLE {schema}.resume_runs ADD COLUMN deadline timestamptz;
`,
	// 15: liveness without session state (see liveness.go): an owner says
	// it stopped by setting stopped_at; advisory locks say nothing any
	// more.
	`
ALTER TABLE {schema}.resume_owners ADD COLUMN stopped_at timestamptz;
`,
	// 16: keyed starts (debounce, singleton: see startkey.go). One row per
	// workflow and start key: how many runs the key started (seq) and the
	// last one; the row is the key's lock.
	`
CREATE TABLE {schema}.resume_start_keys (
	workflow  text   NOT NULL,
	start_key text   NOT NULL,
	seq       bigint NOT NULL,
	run_id    text   NOT NULL,
	PRIMARY KEY (workflow, start_key)
);
`,
	// 17: fan-out (resume.Map). detached marks a child run any worker may
	// claim (ClaimNext takes it like a run of its own); its parent waits
	// for its children ('children') without holding a worker.
	// resume_runs_by_parent answers "does any child still run" without
	// reading the other runs.
	`
ALTER TABLE {schema}.resume_runs ADD COLUMN detached boolean NOT NULL DEFAULT false;
CREATE INDEX resume_runs_by_parent ON {schema}.resume_runs (parent_run_id, status) WHERE parent_run_id <> '';
`,
	// 18: continue-as-new (resume.ContinueAsNew). continued_from names
	// the run a run continues ('' for the first of a chain), continued_as
	// the run that continues a run that ended so ('' otherwise); both are
	// written in the commit that ends the one and creates the other, which
	// also moves a start key from the one to the other
	// (resume_start_keys_by_run finds it).
	`
ALTER TABLE {schema}.resume_runs ADD COLUMN continued_from text NOT NULL DEFAULT '';
ALTER TABLE {schema}.resume_runs ADD COLUMN continued_as text NOT NULL DEFAULT '';
CREATE INDEX resume_start_keys_by_run ON {schema}.resume_start_keys (run_id);
`,
	// 19: queues with limits (journal.Queuer). A run names its queue
	// ('' for none), its key under the queue's per-key limit and its
	// priority, written once at its creation; started_at is when a claim
	// first took a run of a queue, which the queue's rate counts.
	// resume_queues holds each queue's limits as the last engine
	// configured them; a claim of a queue's runs locks its row, so that
	// claimers of one queue decide one at a time. resume_runs_by_queue
	// yields a queue's runs of one status by priority, then oldest first
	// (and counts those running); resume_runs_by_queue_start counts the
	// starts of a period. Both are partial: the runs of no queue, most of
	// them, cost them nothing.
	`
ALTER TABLE {schema}.resume_runs ADD COLUMN queue text NOT NULL DEFAULT '';
ALTER TABLE {schema}.resume_runs ADD COLUMN queue_key text NOT NULL DEFAULT '';
ALTER TABLE {schema}.resume_runs ADD COLUMN priority integer NOT NULL DEFAULT 0;
ALTER TABLE {schema}.resume_runs ADD COLUMN started_at timestamptz;
CREATE INDEX resume_runs_by_queue ON {schema}.resume_runs (queue, status, priority DESC, created_at, run_id) WHERE queue <> '';
CREATE INDEX resume_runs_by_queue_start ON {schema}.resume_runs (queue, started_at) WHERE queue <> '';
CREATE TABLE {schema}.resume_queues (
	name          text PRIMARY KEY,
	concurrency   integer NOT NULL,
	per_key       integer NOT NULL,
	rate          integer NOT NULL,
	per_ms        bigint NOT NULL,
	configured_by text NOT NULL,
	configured_at timestamptz NOT NULL
);
`,
	// 20: a claim reads the pending and the due runs it may take a
	// workflow at a time from indexes that hold exactly those (status,
	// and no queue: a queue's runs start through its own claim), so that
	// neither a queue's backlog, the runs of other programs' workflows
	// nor a table without statistics makes it walk runs it cannot take
	// (claimCandidates). Both are partial: a run is in one only while it
	// waits to be claimed.
	`
CREATE INDEX IF NOT EXISTS resume_runs_claim_pending ON {schema}.resume_runs (workflow, created_at, run_id) WHERE status = 'pending' AND queue = '';
CREATE INDEX IF NOT EXISTS resume_runs_claim_due ON {schema}.resume_runs (workflow, wake_at) WHERE status = 'waiting' AND queue = '';
`,
	// 21: resume_runs_by_status (status, created_at), of migration 1, is a
	// prefix of resume_runs_by_status_created (status, created_at,
	// run_id), of migration 12: every read it served the longer one
	// serves, and the planner, given both, sometimes read the lapsed
	// leases of a claim from the shorter one and sorted them
	// (TestClaimBatchPlan). Each status change wrote both.
	`
DROP INDEX IF EXISTS {schema}.resume_runs_by_status;
`,
}

// leaseLostCode is the SQLSTATE resume_lease_lost raises.
const leaseLostCode = "RSM01"

// SchemaVersion returns the schema version this package creates and reads.
func SchemaVersion() int { return len(migrations) }

// migrationLock is the first key of the advisory lock that serializes
// migrations; the second is the schema name's hash, so journals in
// different schemas migrate independently.
const migrationLock = 0x7265_7375 // "resu"

// migrate brings the schema to SchemaVersion in one transaction holding an
// advisory lock, so processes opening the same database at once apply each
// migration exactly once. A schema newer than this package is refused.
//
// A schema already at SchemaVersion is recognized by one read, without a
// transaction or any privilege beyond reading resume_schema.
func migrate(ctx context.Context, pool *pgxpool.Pool, schema string) error {
	q := func(sql string) string { return qualify(sql, schema) }
	var have int
	if err := pool.QueryRow(ctx, q(`SELECT version FROM {schema}.resume_schema`)).Scan(&have); err == nil {
		if have > len(migrations) {
			return newerSchema(schema, have)
		}
		if have == len(migrations) {
			return nil
		}
	}
	tx, err := pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("migrate: begin: %w", err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1, hashtext($2))`, migrationLock, schema); err != nil {
		return fmt.Errorf("migrate: lock: %w", err)
	}
	// CREATE SCHEMA needs the CREATE privilege on the database even when
	// the schema exists: only ask for it when it does not.
	var exists bool
	if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1)`, schema).Scan(&exists); err != nil {
		return fmt.Errorf("migrate: look up schema %s: %w", schema, err)
	}
	if !exists {
		if _, err := tx.Exec(ctx, `CREATE SCHEMA `+pgx.Identifier{schema}.Sanitize()); err != nil {
			return fmt.Errorf("migrate: create schema %s: %w", schema, err)
		}
	}
	if _, err := tx.Exec(ctx, q(`CREATE TABLE IF NOT EXISTS {schema}.resume_schema (version integer NOT NULL)`)); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	have = 0
	err = tx.QueryRow(ctx, q(`SELECT version FROM {schema}.resume_schema`)).Scan(&have)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		if _, err := tx.Exec(ctx, q(`INSERT INTO {schema}.resume_schema (version) VALUES (0)`)); err != nil {
			return fmt.Errorf("migrate: %w", err)
		}
	case err != nil:
		return fmt.Errorf("migrate: read schema version: %w", err)
	}
	if have > len(migrations) {
		return newerSchema(schema, have)
	}
	if have == len(migrations) {
		return nil // up to date; the rollback releases the lock
	}
	for v := have; v < len(migrations); v++ {
		if _, err := tx.Exec(ctx, q(migrations[v])); err != nil {
			return fmt.Errorf("migrate schema %s to version %d: %w", schema, v+1, err)
		}
	}
	if _, err := tx.Exec(ctx, q(`UPDATE {schema}.resume_schema SET version = $1`), len(migrations)); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("migrate: commit: %w", err)
	}
	return nil
}

func newerSchema(schema string, have int) error {
	return fmt.Errorf("migrate: schema %s has version %d, newer than this program's %d: upgrade the program", schema, have, len(migrations))
}

// qualify replaces "{schema}" in sql with the quoted schema name.
func qualify(sql, schema string) string {
	return strings.ReplaceAll(sql, "{schema}", pgx.Identifier{schema}.Sanitize())
}
