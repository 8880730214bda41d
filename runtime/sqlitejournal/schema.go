package sqlitejournal

import (
	"context"
	"database/sql"
	"fmt"
)

// migrations upgrade the schema one version at a time; migrations[i] takes
// it from version i to i+1. Append, never edit: a database records the
// version it reached in resume_schema.
var migrations = []string{
	// 1: runs, steps and manifests.
	`
CREATE TABLE resume_runs (
	run_id         TEXT PRIMARY KEY,
	workflow       TEXT NOT NULL,
	version        TEXT NOT NULL,
	status         TEXT NOT NULL,
	input          TEXT NOT NULL,
	output         TEXT,
	error          TEXT NOT NULL DEFAULT '',
	attention_step TEXT NOT NULL DEFAULT '',
	attempts       INTEGER NOT NULL DEFAULT 0,
	lease_owner    TEXT NOT NULL DEFAULT '',
	lease_until    TEXT NOT NULL DEFAULT '',
	epoch          INTEGER NOT NULL DEFAULT 0,
	created_at     TEXT NOT NULL,
	updated_at     TEXT NOT NULL
);
CREATE INDEX resume_runs_by_status ON resume_runs (status, created_at);
CREATE TABLE resume_steps (
	run_id       TEXT NOT NULL REFERENCES resume_runs (run_id),
	step_key     TEXT NOT NULL,
	name         TEXT NOT NULL,
	status       TEXT NOT NULL,
	result       TEXT,
	error        TEXT NOT NULL DEFAULT '',
	attempt      INTEGER NOT NULL,
	attempt_base INTEGER NOT NULL DEFAULT 0,
	seq          INTEGER NOT NULL,
	started_at   TEXT NOT NULL,
	finished_at  TEXT NOT NULL DEFAULT '',
	PRIMARY KEY (run_id, step_key)
) WITHOUT ROWID;
CREATE TABLE resume_manifests (
	workflow   TEXT NOT NULL,
	version    TEXT NOT NULL,
	manifest   TEXT NOT NULL,
	created_at TEXT NOT NULL,
	PRIMARY KEY (workflow, version)
);
`,
	// 2: why a run needs attention: '' (it does not), 'step' (a once step's
	// outcome is unknown) or 'version' (its version is not the program's).
	// Runs parked before the column existed are classified by whether they
	// name a step.
	`
ALTER TABLE resume_runs ADD COLUMN attention_kind TEXT NOT NULL DEFAULT '';
UPDATE resume_runs SET attention_kind = CASE WHEN attention_step <> '' THEN 'step' ELSE 'version' END
WHERE status = 'needs_attention';
`,
	// 3: a step's outcome, as the body received it, is history. final marks
	// a failed row the body received (replayed, never executed again);
	// error_detail is what rebuilds its error; history lists every failed
	// attempt (JSON). failed_step is the step whose failure ended a failed
	// run: the one a retry reopens. Runs that failed before: their failed
	// rows were delivered to the body, and the last one ended the run.
	`
ALTER TABLE resume_steps ADD COLUMN error_detail TEXT;
ALTER TABLE resume_steps ADD COLUMN final INTEGER NOT NULL DEFAULT 0;
ALTER TABLE resume_steps ADD COLUMN history TEXT;
ALTER TABLE resume_runs ADD COLUMN failed_step TEXT NOT NULL DEFAULT '';
UPDATE resume_steps SET final = 1
WHERE status = 'failed' AND run_id IN (SELECT run_id FROM resume_runs WHERE status = 'failed');
UPDATE resume_runs SET failed_step = COALESCE((SELECT s.step_key FROM resume_steps s
	WHERE s.run_id = resume_runs.run_id AND s.status = 'failed' ORDER BY s.seq DESC LIMIT 1), '')
WHERE status = 'failed';
`,
	// 4: child runs. parent_run_id names the run that executes this one
	// as a child run ('' for a run of its own); workers never claim a
	// child. error_detail rebuilds a failed run's error with its
	// identities, for the parent that receives it.
	`
ALTER TABLE resume_runs ADD COLUMN parent_run_id TEXT NOT NULL DEFAULT '';
ALTER TABLE resume_runs ADD COLUMN error_detail TEXT;
`,
	// 5: crash loops. progress_attempt is the value of attempts when the
	// run last made progress: a step row written (the triggers set it,
	// whoever writes the row) or an entry finished (FinishRun sets it). attempts - progress_attempt is the
	// claims since: a run whose claims keep ending without progress, its
	// process dying each time, is failed as a crash loop. Existing runs
	// start with a clean count.
	`
ALTER TABLE resume_runs ADD COLUMN progress_attempt INTEGER NOT NULL DEFAULT 0;
UPDATE resume_runs SET progress_attempt = attempts;
CREATE TRIGGER resume_steps_progress_insert AFTER INSERT ON resume_steps BEGIN
	UPDATE resume_runs SET progress_attempt = attempts WHERE run_id = NEW.run_id AND progress_attempt <> attempts;
END;
CREATE TRIGGER resume_steps_progress_update AFTER UPDATE ON resume_steps BEGIN
	UPDATE resume_runs SET progress_attempt = attempts WHERE run_id = NEW.run_id AND progress_attempt <> attempts;
END;
`,
	// 6: schedules (resume.Engine.Schedule). One row per schedule name:
	// what it starts and when, the last tick started and the next one;
	// revision counts the row's writes, which compare and set it.
	`
CREATE TABLE resume_schedules (
	name           TEXT PRIMARY KEY,
	workflow       TEXT NOT NULL,
	spec           TEXT NOT NULL,
	missed         TEXT NOT NULL,
	catch_up_limit INTEGER NOT NULL DEFAULT 0,
	last_tick      TEXT NOT NULL DEFAULT '',
	next_tick      TEXT NOT NULL,
	revision       INTEGER NOT NULL,
	created_at     TEXT NOT NULL,
	updated_at     TEXT NOT NULL
);
`,
	// 7: waiting. A run in status 'waiting' gave up its worker and lease;
	// wait_kind says for what ('sleep', 'signal', 'start', 'child'),
	// wait_name for which event or child run, wake_at until when (''
	// for ever). resume_runs_by_wake lets a claim find the due ones
	// without reading the others. resume_signals keeps the events sent to
	// a run until an await consumes one (consumed_key: the await's step
	// key, at most one signal each).
	`
ALTER TABLE resume_runs ADD COLUMN wait_kind TEXT NOT NULL DEFAULT '';
ALTER TABLE resume_runs ADD COLUMN wait_name TEXT NOT NULL DEFAULT '';
ALTER TABLE resume_runs ADD COLUMN wake_at TEXT NOT NULL DEFAULT '';
CREATE INDEX resume_runs_by_wake ON resume_runs (status, wake_at);
CREATE TABLE resume_signals (
	run_id       TEXT NOT NULL REFERENCES resume_runs (run_id),
	name         TEXT NOT NULL,
	seq          INTEGER NOT NULL,
	payload      TEXT NOT NULL,
	sent_at      TEXT NOT NULL,
	consumed_key TEXT NOT NULL DEFAULT '',
	PRIMARY KEY (run_id, seq)
) WITHOUT ROWID;
CREATE INDEX resume_signals_kept ON resume_signals (run_id, name, seq) WHERE consumed_key = '';
CREATE UNIQUE INDEX resume_signals_consumed ON resume_signals (run_id, consumed_key) WHERE consumed_key <> '';
`,
	// 8: deploys. A manifest's definition is its version's step list (JSON
	// of deploy.Definition, NULL for one stored before), and seq orders a
	// workflow's versions by when the journal first saw them; manifests
	// stored before keep their created_at order. moves lists a run's
	// moves between versions (JSON, NULL for none). resume_workers holds
	// the versions each worker process advertised, and when.
	`
ALTER TABLE resume_manifests ADD COLUMN definition TEXT;
ALTER TABLE resume_manifests ADD COLUMN seq INTEGER NOT NULL DEFAULT 0;
UPDATE resume_manifests SET seq = (SELECT COUNT(*) FROM resume_manifests m
	WHERE m.created_at < resume_manifests.created_at OR (m.created_at = resume_manifests.created_at
		AND (m.workflow < resume_manifests.workflow OR (m.workflow = resume_manifests.workflow AND m.version <= resume_manifests.version))));
ALTER TABLE resume_runs ADD COLUMN moves TEXT;
CREATE TABLE resume_workers (
	owner    TEXT NOT NULL,
	workflow TEXT NOT NULL,
	version  TEXT NOT NULL,
	seen_at  TEXT NOT NULL,
	PRIMARY KEY (owner, workflow, version)
) WITHOUT ROWID;
CREATE INDEX resume_workers_by_version ON resume_workers (workflow, version, seen_at);
`,
	// 9: run listings (resumectl ui) page by keyset on (created_at,
	// run_id), newest or oldest first, whole or by status, without
	// sorting or skipping rows. No index leads with workflow: SQLite's
	// planner, which has no statistics here, would take it for ClaimNext's
	// workflow IN (...) instead of resume_runs_by_wake, reading every
	// waiting run of the workflow; a list by workflow walks
	// resume_runs_by_created instead.
	`
CREATE INDEX resume_runs_by_created ON resume_runs (created_at, run_id);
CREATE INDEX resume_runs_by_status_created ON resume_runs (status, created_at, run_id);
`,
	// 10: operators' surfaces. resume_actions records each operator's
	// write action on a run (resumectl, the web UI): who, what, when, from
	// where, in the action's own transaction. resume_keys lists the ids
	// of the keys that seal the journal's values (resume.WithCodec), so
	// that resumectl knows the journal is sealed before it writes to it.
	`
CREATE TABLE resume_actions (
	run_id TEXT    NOT NULL,
	seq    INTEGER NOT NULL,
	action TEXT    NOT NULL,
	detail TEXT    NOT NULL,
	actor  TEXT    NOT NULL,
	origin TEXT    NOT NULL,
	via    TEXT    NOT NULL,
	at     TEXT    NOT NULL,
	PRIMARY KEY (run_id, seq)
) WITHOUT ROWID;
CREATE TABLE resume_keys (
	key_id          TEXT NOT NULL PRIMARY KEY,
	first_sealed_at TEXT NOT NULL
) WITHOUT ROWID;
`,
	// 11: cancellation and deadlines. cancel_requested_at is when a person
	// asked the run to stop ('' if nobody did): the next engine to execute
	// it unwinds its body, its deferred steps still executing, and it ends
	// cancelled. deadline is when the run is past its deadline ('' for
	// none), by the journal's clock.
	`
ALTER TABLE resume_runs ADD COLUMN cancel_requested_at TEXT NOT NULL DEFAULT '';
ALTER TABLE resume_runs ADD COLUMN deadline TEXT NOT NULL DEFAULT '';
`,
	// 12: keyed starts (debounce, singleton: see startkey.go). One row per
	// workflow and start key: how many runs the key started (seq) and the
	// last one.
	`
CREATE TABLE resume_start_keys (
	workflow  TEXT    NOT NULL,
	start_key TEXT    NOT NULL,
	seq       INTEGER NOT NULL,
	run_id    TEXT    NOT NULL,
	PRIMARY KEY (workflow, start_key)
) WITHOUT ROWID;
`,
	// 13: fan-out (resume.Map). detached marks a child run any worker may
	// claim (ClaimNext takes it like a run of its own); its parent waits
	// for its children ('children') without holding a worker.
	// resume_runs_by_parent answers "does any child still run" without
	// reading the other runs.
	`
ALTER TABLE resume_runs ADD COLUMN detached INTEGER NOT NULL DEFAULT 0;
CREATE INDEX resume_runs_by_parent ON resume_runs (parent_run_id, status) WHERE parent_run_id <> '';
`,
	// 14: continue-as-new (resume.ContinueAsNew). continued_from names
	// the run a run continues ('' for the first of a chain), continued_as
	// the run that continues a run that ended so ('' otherwise); both are
	// written in the commit that ends the one and creates the other, which
	// also moves a start key from the one to the other
	// (resume_start_keys_by_run finds it).
	`
ALTER TABLE resume_runs ADD COLUMN continued_from TEXT NOT NULL DEFAULT '';
ALTER TABLE resume_runs ADD COLUMN continued_as TEXT NOT NULL DEFAULT '';
CREATE INDEX resume_start_keys_by_run ON resume_start_keys (run_id);
`,
	// 15: queues with limits (journal.Queuer). A run names its queue
	// ('' for none), its key under the queue's per-key limit and its
	// priority, written once at its creation; started_at is when a claim
	// first took a run of a queue, which the queue's rate counts.
	// resume_queues holds each queue's limits as the last engine
	// configured them. resume_runs_by_queue yields a queue's runs of one
	// status by priority, then oldest first (and counts those running);
	// resume_runs_by_queue_start counts the starts of a period. Both are
	// partial: the runs of no queue, most of them, cost them nothing.
	`
ALTER TABLE resume_runs ADD COLUMN queue TEXT NOT NULL DEFAULT '';
ALTER TABLE resume_runs ADD COLUMN queue_key TEXT NOT NULL DEFAULT '';
ALTER TABLE resume_runs ADD COLUMN priority INTEGER NOT NULL DEFAULT 0;
ALTER TABLE resume_runs ADD COLUMN started_at TEXT NOT NULL DEFAULT '';
CREATE INDEX resume_runs_by_queue ON resume_runs (queue, status, priority DESC, created_at, run_id) WHERE queue <> '';
CREATE INDEX resume_runs_by_queue_start ON resume_runs (queue, started_at) WHERE queue <> '';
CREATE TABLE resume_queues (
	name          TEXT PRIMARY KEY,
	concurrency   INTEGER NOT NULL,
	per_key       INTEGER NOT NULL,
	rate          INTEGER NOT NULL,
	per_ms        INTEGER NOT NULL,
	configured_by TEXT NOT NULL,
	configured_at TEXT NOT NULL
);
`,
	// 16: a claim reads the pending and the due runs it may take a
	// workflow at a time from indexes that hold exactly those (status,
	// and no queue: a queue's runs start through its own claim), so that
	// neither a queue's backlog nor the runs of other programs' workflows
	// make it walk runs it cannot take (claimNextSQL). Both are partial:
	// a run is in one only while it waits to be claimed.
	`
CREATE INDEX IF NOT EXISTS resume_runs_claim_pending ON resume_runs (workflow, created_at, run_id) WHERE status = 'pending' AND queue = '';
CREATE INDEX IF NOT EXISTS resume_runs_claim_due ON resume_runs (workflow, wake_at) WHERE status = 'waiting' AND queue = '';
`,
	// 17: resume_runs_by_status (status, created_at), of migration 1, is a
	// prefix of resume_runs_by_status_created (status, created_at,
	// run_id): every read it served the longer one serves, and each
	// status change wrote both.
	`
DROP INDEX IF EXISTS resume_runs_by_status;
`,
}

// SchemaVersion returns the schema version this package creates and reads.
func SchemaVersion() int { return len(migrations) }

// migrate brings the database to SchemaVersion in one immediate
// transaction, so processes opening the same file at once apply each
// migration exactly once. A database newer than this package is refused.
func migrate(ctx context.Context, db *sql.DB) error {
	tx, err := db.BeginTx(ctx, nil) // _txlock=immediate: takes the write lock now
	if err != nil {
		return fmt.Errorf("migrate: begin: %w", err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS resume_schema (version INTEGER NOT NULL)`); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	var have int
	err = tx.QueryRowContext(ctx, `SELECT version FROM resume_schema`).Scan(&have)
	switch {
	case err == sql.ErrNoRows:
		if _, err := tx.ExecContext(ctx, `INSERT INTO resume_schema (version) VALUES (0)`); err != nil {
			return fmt.Errorf("migrate: %w", err)
		}
	case err != nil:
		return fmt.Errorf("migrate: read schema version: %w", err)
	}
	if have > len(migrations) {
		return fmt.Errorf("migrate: the database has schema version %d, newer than this program's %d: upgrade the program", have, len(migrations))
	}
	for v := have; v < len(migrations); v++ {
		if _, err := tx.ExecContext(ctx, migrations[v]); err != nil {
			return fmt.Errorf("migrate to schema version %d: %w", v+1, err)
		}
	}
	if _, err := tx.ExecContext(ctx, `UPDATE resume_schema SET version = ?`, len(migrations)); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	return tx.Commit()
}
