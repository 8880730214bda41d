// Package pgjournal is resumegen's PostgreSQL journal, through
// github.com/jackc/pgx/v5. Any number of worker processes on any number of
// hosts share one database: they claim runs with leases ([Journal.ClaimNext]
// skips the runs others are claiming with FOR UPDATE SKIP LOCKED), and a
// process whose lease moved on can no longer write the run's journal.
//
// The tables are resume_runs, resume_steps and resume_manifests, in the
// schema "public" unless [WithSchema] says otherwise, with the same columns
// as the SQLite journal's; timestamps are timestamptz and inputs, outputs
// and results json. A user reads them with plain SQL:
//
//	SELECT step_key, status, attempt, result FROM resume_steps
//	WHERE run_id = 'onboard-42' ORDER BY seq;
//
// [Open] and [Connect] create the tables, and upgrade them, in one
// transaction under an advisory lock, so several processes may start at
// once; a schema written by a newer version of this package is refused.
//
// Idle workers need not poll for new runs: a trigger notifies a channel of
// the schema whenever a run becomes pending, and [Journal.NotifyWork]
// listens on it (journal.WorkNotifier).
//
// On the hot path a default-policy step is one fenced statement in
// autocommit (one round trip, one commit), and entering a run is one round
// trip: the claim and the read of the journal go as one batch.
package pgjournal

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/resumegen/resumegen/runtime/internal/groupcommit"
	"github.com/resumegen/resumegen/runtime/internal/sqljournal"
	"github.com/resumegen/resumegen/runtime/journal"
)

// Journal is a [journal.Journal] in a PostgreSQL database.
type Journal struct {
	pool    *pgxpool.Pool
	owned   bool // Close closes pool
	schema  string
	reads   atomic.Int64
	commits atomic.Int64
	sql     queries
	listen  listener                       // for NotifyWork
	group   *groupcommit.Queue[groupWrite] // writes of concurrent runs, committed together (group.go)
	live    liveness                       // what this process said of its owners (see KeepAlive)
	pooler  Pooler                         // PoolerNone or PoolerTransaction (see WithPooler)
	store   *sqljournal.Store              // the operations every SQL journal shares (dialect.go)
	oneStmt int                            // step rows of a group that go in one statement (group.go)
}

var (
	_ journal.Journal      = (*Journal)(nil)
	_ journal.WorkNotifier = (*Journal)(nil)
	_ journal.Clock        = (*Journal)(nil)
)

// Option configures a Journal.
type Option func(*config)

type config struct {
	schema    string
	pooler    Pooler
	poolerSet bool // given by WithPooler, which wins over the DSN
}

// WithSchema puts the journal's tables in the named schema (created if
// needed) instead of "public".
func WithSchema(name string) Option {
	return func(c *config) { c.schema = name }
}

// Open opens the journal on pool and brings its schema up to date. The
// caller keeps ownership of pool: Close leaves it open. Open looks for a
// transaction pooler between the pool and the server unless told (see
// [Pooler]); behind one, a pool that prepares statements on the server is
// refused, with the fix.
func Open(ctx context.Context, pool *pgxpool.Pool, opts ...Option) (*Journal, error) {
	c := config{schema: "public"}
	for _, o := range opts {
		o(&c)
	}
	if c.schema == "" {
		return nil, errors.New("pgjournal: empty schema name")
	}
	p, err := resolvePooler(ctx, pool, c.pooler)
	if err != nil {
		return nil, err
	}
	if err := migrate(ctx, pool, c.schema); err != nil {
		return nil, fmt.Errorf("pgjournal: %w", err)
	}
	return newJournal(pool, c.schema, p), nil
}

// newJournal is the journal on pool, in schema, behind pooler p, once its
// schema is known.
func newJournal(pool *pgxpool.Pool, schema string, p Pooler) *Journal {
	j := &Journal{pool: pool, schema: schema, sql: newQueries(schema), pooler: p}
	j.group = groupcommit.New(maxGroup, j.commitGroup)
	j.store = newStore(j)
	j.oneStmt = oneStatementFrom(pool)
	return j
}

// Connect opens a pool on dsn (a postgres:// URL or key=value string, as
// pgxpool.ParseConfig reads it, and the resume_pooler parameter, see
// [WithPooler]) and the journal on it. Behind a transaction pooler, found
// or named, the pool prepares no statement on the server
// (QueryExecModeExec). Close closes the pool.
func Connect(ctx context.Context, dsn string, opts ...Option) (*Journal, error) {
	pool, c, err := connectPool(ctx, dsn, opts, false)
	if err != nil {
		return nil, err
	}
	j, err := Open(ctx, pool, append(opts[:len(opts):len(opts)], WithPooler(c.pooler))...)
	if err != nil {
		pool.Close()
		return nil, err
	}
	j.owned = true
	return j, nil
}

// connectPool opens a pool on dsn for Connect and ConnectReadOnly: it reads
// the resume_pooler parameter (opts win over it), looks for a transaction
// pooler unless told (on a pool of its own, closed after), and behind one
// opens the pool without server-side prepared statements. With readOnly
// the pool's sessions default to read-only transactions, which a
// transaction pooler cannot carry: that is refused. The returned config
// names the pooler found.
func connectPool(ctx context.Context, dsn string, opts []Option, readOnly bool) (*pgxpool.Pool, config, error) {
	var c config
	for _, o := range opts {
		o(&c)
	}
	rest, p, found, err := cutPooler(dsn)
	if err != nil {
		return nil, c, err
	}
	if !c.poolerSet && found {
		c.pooler = p
	}
	cfg, err := pgxpool.ParseConfig(rest)
	if err != nil {
		return nil, c, fmt.Errorf("pgjournal: connect: %w", err)
	}
	if c.pooler == PoolerDetect {
		probe, err := pgxpool.NewWithConfig(ctx, cfg.Copy())
		if err != nil {
			return nil, c, fmt.Errorf("pgjournal: connect: %w", err)
		}
		behind, err := detectPooler(ctx, probe)
		probe.Close()
		if err != nil {
			return nil, c, fmt.Errorf("pgjournal: connect: look for a transaction pooler: %w", err)
		}
		c.pooler = PoolerNone
		if behind {
			c.pooler = PoolerTransaction
		}
	}
	if c.pooler == PoolerTransaction {
		if readOnly {
			return nil, c, errors.New("pgjournal: a read-only open makes the server refuse every write of its sessions " +
				"(default_transaction_read_only), and a transaction pooler keeps no session setting (PgBouncer refuses it at connect): " +
				"open it on the server directly, or through a pooler in session mode")
		}
		if cfg.ConnConfig.DefaultQueryExecMode == pgx.QueryExecModeCacheStatement {
			cfg.ConnConfig.DefaultQueryExecMode = pgx.QueryExecModeExec
		}
	}
	if readOnly {
		cfg.ConnConfig.RuntimeParams["default_transaction_read_only"] = "on"
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, c, fmt.Errorf("pgjournal: connect: %w", err)
	}
	return pool, c, nil
}

// Pool returns the journal's connection pool, for the user's own tables: tx
// steps write through [resume.Tx] with Pool as the fallback outside a
// workflow (both *pgxpool.Pool and pgx.Tx offer Exec, Query and QueryRow).
func (j *Journal) Pool() *pgxpool.Pool { return j.pool }

// Schema returns the name of the schema holding the journal's tables.
func (j *Journal) Schema() string { return j.schema }

// Close stops listening for work (see [Journal.NotifyWork]), says that
// this process's owners stopped (see [Journal.Release]: their runs are
// taken over at once) and closes the pool if Connect opened it. Close a
// journal once the engines that use it returned.
func (j *Journal) Close() error {
	j.stopListening()
	j.closeLiveness()
	if j.owned {
		j.pool.Close()
	}
	return nil
}

// Now returns the server's clock (journal.Clock): clock_timestamp(), the
// clock every lease and wake-up time of the journal is counted by.
// Engines take their durable times from it, whatever their host's clock
// says.
func (j *Journal) Now(ctx context.Context) (time.Time, error) {
	var now time.Time
	if err := j.pool.QueryRow(ctx, `SELECT clock_timestamp()`).Scan(&now); err != nil {
		return time.Time{}, fmt.Errorf("pgjournal: read the server's clock: %w", err)
	}
	return now.UTC(), nil
}

// Counters returns the reads and commits since Open.
func (j *Journal) Counters() journal.Counters {
	return journal.Counters{Reads: j.reads.Load(), Commits: j.commits.Load()}
}

// queries are the journal's statements, qualified with its schema once.
type queries struct {
	createRun, selectRun, selectRunForUpdate, entrySteps         string
	claimedSteps, refusedRun, keepAlive, stopOwner, forgetOwners string
	claim, writeStep, writeStepTx, finish                        string
	writeSteps                                                   string // group.go
}

const runColumns = `run_id, workflow, version, status, input, output, error, attention_step, attention_kind,
	attempts, lease_owner, lease_until, epoch, created_at, updated_at, failed_step, parent_run_id, error_detail,
	attempts - progress_attempt, wait_kind, wait_name, wake_at, moves, cancel_requested_at, deadline,
	continued_from, continued_as, queue, queue_key, priority`

// Lease times come from the server's clock: clock_timestamp(), read when
// the statement evaluates the row, so a claim that waited for a row lock
// counts its lease from after the wait, and workers whose clocks disagree
// compare every expiry on one clock.

// claimableNext is the condition under which ClaimNext takes a run:
// pending, due after a wait, or running under a lease that expired by the
// server's clock, unless the claimer ($1) holds that lease and executes
// the run now ($4, the runs it holds: it is renewing, or stopping). A
// lapsed lease is taken whoever holds it, and whatever its sessions: an
// owner that cannot renew stops itself before its lease expires (see
// liveness.go).
const claimableNext = `(status = 'pending' OR (status = 'running' AND lease_until < clock_timestamp() AND
		NOT (lease_owner = $1::text AND run_id = ANY($4::text[])))
		OR ` + waitDue + `)`

// claimSet takes a run: $1 owner, $2 lease length.
const claimSet = `UPDATE {schema}.resume_runs SET
		status = 'running', attempts = attempts + 1, epoch = epoch + 1,
		lease_owner = $1::text, lease_until = clock_timestamp() + $2::interval, updated_at = clock_timestamp(),
		error = '', attention_step = '', attention_kind = '', ` + claimWaitSet

// ownerGone is true when the run's owner said its process stopped
// (resume_owners.stopped_at, see liveness.go): the one signal that takes
// a run over before its lease expires.
const ownerGone = `(EXISTS (SELECT 1 FROM {schema}.resume_owners o
		WHERE o.owner = resume_runs.lease_owner AND o.stopped_at IS NOT NULL))`

func newQueries(schema string) queries {
	q := queries{
		// A child run ($12) takes its parent's deadline when that is
		// earlier than its own ($15, a length counted from the server's
		// clock; LEAST skips NULLs), and its parent's cancellation.
		createRun: `INSERT INTO {schema}.resume_runs
			(run_id, workflow, version, status, input, created_at, updated_at, lease_owner, lease_until, epoch, attempts, parent_run_id,
				wait_kind, wake_at, deadline, cancel_requested_at, queue, queue_key, priority)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, clock_timestamp() + $9::interval, $10, $11, $12, $13, $14,
				LEAST(clock_timestamp() + $15::interval, (SELECT p.deadline FROM {schema}.resume_runs p WHERE p.run_id = $12)),
				(SELECT p.cancel_requested_at FROM {schema}.resume_runs p WHERE p.run_id = $12), $16, $17, $18)
			ON CONFLICT (run_id) DO NOTHING
			RETURNING lease_until, deadline, cancel_requested_at`,
		selectRun:          `SELECT ` + runColumns + ` FROM {schema}.resume_runs WHERE run_id = $1`,
		selectRunForUpdate: `SELECT ` + runColumns + ` FROM {schema}.resume_runs WHERE run_id = $1 FOR UPDATE`,
		// $3 run id, $4 and $5 the abandoned lease (owner, epoch), if
		// any, $6 whether an owner whose process ended may be taken from.
		// A queue's pending and waiting runs start through its claim
		// only, within its limits (claimQueued).
		claim: claimSet + `
			WHERE run_id = $3 AND ((queue = '' AND (status = 'pending' OR status = 'waiting')) OR (status = 'running' AND
				(lease_until < clock_timestamp() OR (lease_owner = $4 AND epoch = $5)
				OR ($6::boolean AND lease_owner <> $1::text AND ` + ownerGone + `))))
			RETURNING ` + runColumns,
		// writeSteps is writeStep for a group's rows (group.go), one
		// array a column of stepArgs, json passed as text: each row is
		// written only if its own lease ($15-$17) still holds its run,
		// share-locked in run id order. It returns the rows it wrote.
		writeSteps: `WITH input AS (
				SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[],
					$7::integer[], $8::integer[], $9::bigint[], $10::timestamptz[], $11::timestamptz[],
					$12::text[], $13::boolean[], $14::text[], $15::text[], $16::text[], $17::bigint[])
				AS i(run_id, step_key, name, status, result, error, attempt, attempt_base, seq, started_at, finished_at,
					error_detail, final, history, lease_run, lease_owner, lease_epoch)),
			run AS (
				SELECT run_id, lease_owner, epoch, attempts <> progress_attempt AS first FROM {schema}.resume_runs
				WHERE run_id = ANY($15::text[]) AND (run_id, lease_owner, epoch) IN (SELECT lease_run, lease_owner, lease_epoch FROM input)
				ORDER BY run_id FOR SHARE),
			progress AS (
				UPDATE {schema}.resume_runs SET progress_attempt = attempts
				WHERE run_id IN (SELECT run_id FROM run WHERE first))
			INSERT INTO {schema}.resume_steps (` + sqljournal.StepColumns + `)
			SELECT i.run_id, i.step_key, i.name, i.status, i.result::json, i.error, i.attempt, i.attempt_base, i.seq,
				i.started_at, i.finished_at, i.error_detail::json, i.final, i.history::json
			FROM input i JOIN run r ON r.run_id = i.lease_run AND r.lease_owner = i.lease_owner AND r.epoch = i.lease_epoch
			` + sqljournal.UpsertStep + `
			RETURNING run_id, step_key`,
		keepAlive: `INSERT INTO {schema}.resume_owners (owner, since) VALUES ($1, clock_timestamp())
			ON CONFLICT (owner) DO UPDATE SET stopped_at = NULL`,
		stopOwner: `INSERT INTO {schema}.resume_owners (owner, since, stopped_at) VALUES ($1, clock_timestamp(), clock_timestamp())
			ON CONFLICT (owner) DO UPDATE SET stopped_at = clock_timestamp()`,
		// Owners that no running run names: what they said is needed no
		// more (an owner not listed is never taken for stopped).
		forgetOwners: `DELETE FROM {schema}.resume_owners o
			WHERE NOT EXISTS (SELECT 1 FROM {schema}.resume_runs r WHERE r.lease_owner = o.owner AND r.status = 'running')`,
	}
	// The hot path's statements shared with every SQL journal
	// (sqljournal), in this schema.
	d := dialect{schema}
	q.entrySteps = sqljournal.EntryStepsSQL(d)
	q.writeStep, q.finish = sqljournal.WriteStepSQL(d), sqljournal.FinishSQL(d)
	// claimedSteps is entrySteps behind a claim in the same batch: it reads
	// the journal only if the claim took the run (the transaction wrote a
	// row, so it has a transaction id), so a refused claim reads nothing.
	q.claimedSteps = q.entrySteps + ` AND txid_current_if_assigned() IS NOT NULL`
	// refusedRun, last in the batch, reads the run's row only if the claim
	// did not take it.
	q.refusedRun = q.selectRun + ` AND txid_current_if_assigned() IS NULL`
	// writeStepTx is writeStep for a tx step's pipelined commit: the same
	// fenced upsert, failing (resume_lease_lost) where writeStep would
	// write nothing, so the COMMIT queued behind it cannot commit the
	// step's writes without its row.
	q.writeStepTx = stepFence + `, w AS (` + sqljournal.InsertStep(stepFenced) + `
			RETURNING 1)
		SELECT CASE WHEN EXISTS (SELECT 1 FROM w) THEN 1 ELSE {schema}.resume_lease_lost($15, $17) END`
	for _, s := range []*string{
		&q.createRun, &q.selectRun, &q.selectRunForUpdate,
		&q.claimedSteps, &q.refusedRun, &q.keepAlive, &q.stopOwner, &q.forgetOwners,
		&q.claim, &q.writeStepTx, &q.writeSteps,
	} {
		*s = qualify(*s, schema)
	}
	return q
}

// querier is what *pgxpool.Pool and pgx.Tx both offer.
type querier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// nullTime maps the zero time to NULL.
func nullTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

func timeOf(t *time.Time) time.Time {
	if t == nil {
		return time.Time{}
	}
	return t.UTC()
}

// scanRun scans runColumns, then extra destinations.
func scanRun(row pgx.Row, extra ...any) (journal.RunRecord, error) {
	var r journal.RunRecord
	var input, output, detail, moves []byte
	var leaseUntil, wakeAt, cancelAt, deadline *time.Time
	var created, updated time.Time
	err := row.Scan(append([]any{&r.RunID, &r.Workflow, &r.Version, &r.Status, &input, &output, &r.Error,
		&r.AttentionStep, &r.AttentionKind, &r.Attempts, &r.LeaseOwner, &leaseUntil, &r.Epoch, &created, &updated, &r.FailedStep,
		&r.Parent, &detail, &r.ClaimsSinceProgress, &r.WaitKind, &r.WaitName, &wakeAt, &moves, &cancelAt, &deadline,
		&r.ContinuedFrom, &r.ContinuedAs, &r.Queue, &r.QueueKey, &r.Priority}, extra...)...)
	if err != nil {
		return r, err
	}
	if detail != nil {
		r.ErrorDetail = detail
	}
	r.Input = input
	if output != nil {
		r.Output = output
	}
	r.LeaseUntil, r.CreatedAt, r.UpdatedAt, r.WakeAt = timeOf(leaseUntil), created.UTC(), updated.UTC(), timeOf(wakeAt)
	r.CancelRequested, r.Deadline = timeOf(cancelAt), timeOf(deadline)
	if r.Moves, err = journal.DecodeMoves(moves); err != nil {
		r.Unreadable = err.Error()
	}
	return r, nil
}

func scanStep(row pgx.Row) (journal.StepRecord, error) {
	var s journal.StepRecord
	var result, detail, history []byte
	var started time.Time
	var finished *time.Time
	err := row.Scan(&s.RunID, &s.StepKey, &s.Name, &s.Status, &result, &s.Error,
		&s.Attempt, &s.AttemptBase, &s.Seq, &started, &finished, &detail, &s.Final, &history)
	if err != nil {
		return s, err
	}
	if result != nil {
		s.Result = result
	}
	if detail != nil {
		s.ErrorDetail = detail
	}
	s.StartedAt, s.FinishedAt = started.UTC(), timeOf(finished)
	s.History, s.Unreadable = parseHistory(history)
	return s, nil
}

// parseHistory reads the history column, and what makes it unusable.
func parseHistory(h []byte) ([]journal.AttemptRecord, string) {
	out, err := journal.DecodeHistory(h)
	if err != nil {
		return nil, err.Error()
	}
	return out, ""
}

// stepArgs are the arguments of writeStep and writeStepTx, once the row
// is within the journal's limits (sqljournal.StepArgs).
func stepArgs(l journal.Lease, s journal.StepRecord) ([]any, error) {
	return sqljournal.StepArgs(dialect{}, l, s)
}

func (j *Journal) run(ctx context.Context, q querier, sql, runID string) (journal.RunRecord, error) {
	j.reads.Add(1)
	r, err := scanRun(q.QueryRow(ctx, sql, runID))
	if errors.Is(err, pgx.ErrNoRows) {
		return r, fmt.Errorf("run %s: %w", runID, journal.ErrRunNotFound)
	}
	if err != nil {
		return r, fmt.Errorf("run %s: read: %w", runID, err)
	}
	return r, nil
}

// scanEntrySteps reads the rows of the entrySteps query.
func scanEntrySteps(rows pgx.Rows, runID string) ([]journal.StepRecord, error) {
	defer rows.Close()
	var out []journal.StepRecord
	for rows.Next() {
		s, err := scanEntryStep(rows)
		if err != nil {
			return nil, err
		}
		s.RunID = runID
		out = append(out, s)
	}
	return out, rows.Err()
}

// scanEntryStep reads one row of entrySteps, whose leading columns, if
// any, scan into lead (ClaimBatch's run id).
func scanEntryStep(rows pgx.Rows, lead ...any) (journal.StepRecord, error) {
	var s journal.StepRecord
	var result, detail, history []byte
	var errText *string
	var attempt, base *int
	var started, finished *time.Time
	var final *bool
	if err := rows.Scan(append(lead, &s.StepKey, &s.Status, &result, &s.Seq, &errText, &attempt, &base, &started,
		&finished, &detail, &final, &history)...); err != nil {
		return s, err
	}
	if detail != nil {
		s.ErrorDetail = detail
	}
	s.Final = final != nil && *final
	s.FinishedAt = timeOf(finished)
	s.History, s.Unreadable = parseHistory(history)
	if result != nil {
		s.Result = result
	}
	if errText != nil {
		s.Error = *errText
	}
	if attempt != nil {
		s.Attempt = *attempt
	}
	if base != nil {
		s.AttemptBase = *base
	}
	s.StartedAt = timeOf(started)
	return s, nil
}

// CreateRun inserts r as a pending run unless its run id exists, and
// returns the stored run.
func (j *Journal) CreateRun(ctx context.Context, r journal.RunRecord) (journal.RunRecord, bool, error) {
	if err := journal.CheckRun(r); err != nil {
		return r, false, fmt.Errorf("create run: %w", err)
	}
	r = r.Created()
	var lease *time.Duration // the lease's length, counted by the server
	if r.LeaseOwner != "" {
		d := r.LeaseUntil.Sub(r.CreatedAt)
		lease = &d
	}
	var timeout *time.Duration // the deadline's distance, counted by the server
	if !r.Deadline.IsZero() {
		d := r.Deadline.Sub(r.CreatedAt)
		timeout = &d
	}
	r, created, err := j.insertRun(ctx, j.pool, r, lease, timeout)
	if err != nil {
		return r, false, err
	}
	j.commits.Add(1)
	if created {
		return r, true, nil
	}
	stored, err := j.run(ctx, j.pool, j.sql.selectRun, r.RunID)
	return stored, false, err
}

// insertRun inserts r (as CreateRun stores it) through q unless its id
// exists, and reports whether it did; the lease and deadline are lengths
// counted by the server (nil for none).
func (j *Journal) insertRun(ctx context.Context, q querier, r journal.RunRecord, lease, timeout *time.Duration) (journal.RunRecord, bool, error) {
	var until, deadline, cancelAt *time.Time
	err := q.QueryRow(ctx, j.sql.createRun,
		r.RunID, r.Workflow, r.Version, string(r.Status), string(r.Input), r.CreatedAt, r.UpdatedAt,
		r.LeaseOwner, lease, r.Epoch, r.Attempts, r.Parent, r.WaitKind, nullTime(r.WakeAt), timeout,
		r.Queue, r.QueueKey, r.Priority).Scan(&until, &deadline, &cancelAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return r, false, nil
	}
	if err != nil {
		return r, false, fmt.Errorf("run %s: create: %w", r.RunID, err)
	}
	r.LeaseUntil, r.Deadline, r.CancelRequested = timeOf(until), timeOf(deadline), timeOf(cancelAt)
	return r, true, nil
}

// Claim takes the run if it is pending, its lease expired, c.Abandoned
// holds it, or (with c.TakeOverDead) its owner's liveness lock is free, and
// reads its journal: the claim and the read go to the server as one batch,
// one round trip and one implicit transaction; the read returns no row
// unless the claim took the run. A run it cannot take is returned, read
// by one more query of its row alone, with ErrRunBusy.
func (j *Journal) Claim(ctx context.Context, c journal.ClaimRequest) (journal.RunRecord, []journal.StepRecord, error) {
	runID := c.RunID
	var deadOwner string
	var deadEpoch int64 = -1
	if c.Abandoned != nil {
		deadOwner, deadEpoch = c.Abandoned.Owner, c.Abandoned.Epoch
	}
	if err := ctx.Err(); err != nil {
		return journal.RunRecord{}, nil, fmt.Errorf("run %s: claim: %w", runID, err)
	}
	// Once sent, the claim and its journal read complete whatever becomes
	// of ctx, as in ClaimNext: a reply lost to a cancellation after the
	// batch committed would leave the run running under a live owner that
	// does not know it holds it.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), claimBound)
	defer cancel()
	b := &pgx.Batch{}
	b.Queue(j.sql.claim, c.Owner, c.Lease, runID, deadOwner, deadEpoch, c.TakeOverDead)
	b.Queue(j.sql.claimedSteps, runID)
	b.Queue(j.sql.refusedRun, runID)
	j.reads.Add(1)
	br := j.pool.SendBatch(ctx, b)
	defer br.Close()
	r, err := scanRun(br.QueryRow())
	claimed := err == nil
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return r, nil, fmt.Errorf("run %s: claim: %w", runID, err)
	}
	var steps []journal.StepRecord
	rows, err := br.Query()
	if err == nil {
		steps, err = scanEntrySteps(rows, runID)
	}
	if err != nil {
		return r, nil, fmt.Errorf("run %s: read journal: %w", runID, err)
	}
	if !claimed {
		r, err = scanRun(br.QueryRow())
		if errors.Is(err, pgx.ErrNoRows) {
			return r, nil, fmt.Errorf("run %s: %w", runID, journal.ErrRunNotFound)
		}
		if err != nil {
			return r, nil, fmt.Errorf("run %s: claim: %w", runID, err)
		}
	}
	if err := br.Close(); err != nil {
		return r, nil, fmt.Errorf("run %s: claim: %w", runID, err)
	}
	if claimed {
		j.commits.Add(1)
		return r, steps, nil
	}
	return r, nil, fmt.Errorf("run %s is %s: %w", runID, r.Status, journal.ErrRunBusy)
}

// claimBound bounds ClaimNext once sent, whatever its caller's context.
const claimBound = time.Minute

// RenewLease extends the lease to d from now, by the server's clock, if it
// is still held.
func (j *Journal) RenewLease(ctx context.Context, l journal.Lease, d time.Duration) error {
	return j.store.RenewLease(ctx, l, d)
}

// leaseHeld is the outcome of a fenced write whose answer was tag.
func leaseHeld(tag pgconn.CommandTag, l journal.Lease) error {
	return sqljournal.LeaseHeld(tag.RowsAffected(), l)
}

func (j *Journal) writeStep(ctx context.Context, q querier, l journal.Lease, s journal.StepRecord) error {
	args, err := stepArgs(l, s)
	if err != nil {
		return err
	}
	tag, err := q.Exec(ctx, j.sql.writeStep, args...)
	if err != nil {
		return fmt.Errorf("run %s, step %s: write: %w", s.RunID, s.StepKey, err)
	}
	if err := leaseHeld(tag, l); err != nil {
		return fmt.Errorf("step %s: %w", s.StepKey, err)
	}
	return nil
}

// WriteStep upserts the step's row, fenced, in one statement and one commit.
//
// Rows that concurrent runs write meanwhile commit together, in one
// transaction (see group.go).
func (j *Journal) WriteStep(ctx context.Context, l journal.Lease, s journal.StepRecord) error {
	args, err := stepArgs(l, s)
	if err != nil {
		return err
	}
	return j.write(ctx, groupWrite{sql: j.sql.writeStep, args: args, lease: l, what: "run " + s.RunID + ", step " + s.StepKey, step: &s})
}

// BeginStep opens a transaction for a tx step: the step's writes and its
// journal row commit together. Its Handle is a pgx.Tx (see [stepHandle]).
//
// The transaction costs the round trips of a plain one: BEGIN, the step's
// own statements, and one more in which the fenced journal row and the
// COMMIT travel together, pipelined.
func (j *Journal) BeginStep(ctx context.Context, l journal.Lease) (journal.StepTx, error) {
	conn, err := j.pool.Acquire(ctx)
	if err != nil {
		return nil, fmt.Errorf("run %s: begin step: %w", l.RunID, err)
	}
	tx, err := conn.Begin(ctx)
	if err != nil {
		conn.Release()
		return nil, fmt.Errorf("run %s: begin step: %w", l.RunID, err)
	}
	return &stepTx{j: j, conn: conn, tx: tx, handle: &stepHandle{Tx: tx, tx: tx}, lease: l}, nil
}

// stepTx is a tx step's transaction on a connection it holds until Commit
// or Rollback.
type stepTx struct {
	j      *Journal
	conn   *pgxpool.Conn
	tx     pgx.Tx
	handle *stepHandle
	lease  journal.Lease
	done   bool
}

// Handle returns the pgx.Tx the step's code writes through.
func (t *stepTx) Handle() any { return t.handle }

// Commit sends the step's row, fenced, and COMMIT in one round trip. If the
// fence refuses the row, the transaction aborts and COMMIT does not run:
// the step's writes are rolled back with it.
func (t *stepTx) Commit(ctx context.Context, s journal.StepRecord) error {
	args, err := stepArgs(t.lease, s)
	if err != nil {
		return err // Rollback, deferred by the engine, ends the transaction
	}
	t.handle.close()
	t.done = true
	b := &pgx.Batch{}
	b.Queue(t.j.sql.writeStepTx, args...)
	b.Queue("COMMIT")
	br := t.tx.SendBatch(ctx, b)
	_, err = br.Exec()
	if err == nil {
		var tag pgconn.CommandTag
		if tag, err = br.Exec(); err == nil && tag.String() != "COMMIT" {
			err = fmt.Errorf("the server answered %q: the transaction was rolled back", tag)
		}
	}
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		// Aborted or broken: a rollback leaves the connection idle, or
		// closes it, before it goes back to the pool.
		t.tx.Rollback(context.WithoutCancel(ctx))
		t.conn.Release()
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) && pgErr.Code == leaseLostCode {
			return fmt.Errorf("step %s: run %s, epoch %d: %w", s.StepKey, t.lease.RunID, t.lease.Epoch, journal.ErrLeaseLost)
		}
		return fmt.Errorf("run %s, step %s: commit: %w", s.RunID, s.StepKey, err)
	}
	// COMMIT went through the batch, not t.tx, so pgx still counts t.tx as
	// open: nothing uses it again, and the connection is idle.
	t.conn.Release()
	t.j.commits.Add(1)
	return nil
}

// Rollback abandons the transaction; after Commit it does nothing.
//
// A connection that closed has nothing to roll back: the server aborts the
// transaction of a session that ends (terminated, restarted), and pgx
// closes the connection of a statement whose context ended while it was
// on the wire (the step's context, cancelled by a stop, mid-INSERT), or
// that got a FATAL error. That is reported as journal.ErrTxLost: nothing
// of the transaction committed.
func (t *stepTx) Rollback() error {
	if t.done {
		return nil
	}
	t.done = true
	t.handle.close()
	defer t.conn.Release()
	err := t.tx.Rollback(context.Background())
	if err != nil && t.conn.Conn().IsClosed() {
		return fmt.Errorf("%w (%w)", journal.ErrTxLost, err)
	}
	return err
}

// FinishRun records the run's status and releases its lease, fenced. A
// run suspending for a signal kept already, or for a child that no longer
// waits, is stored pending instead (see finishWaiting).
func (j *Journal) FinishRun(ctx context.Context, l journal.Lease, r journal.RunRecord) error {
	if err := journal.CheckValue("output", r.Output); err != nil {
		return fmt.Errorf("run %s: finish: %w", l.RunID, err)
	}
	if r.Status == journal.StatusWaiting && (r.WaitKind == journal.WaitSignal || r.WaitKind == journal.WaitChild || r.WaitKind == journal.WaitChildren) {
		return j.finishWaiting(ctx, l, r)
	}
	return j.write(ctx, groupWrite{sql: j.sql.finish, args: finishArgs(l, r), lease: l, what: "run " + l.RunID + ": finish"})
}

func (j *Journal) finish(ctx context.Context, q querier, l journal.Lease, r journal.RunRecord) error {
	tag, err := q.Exec(ctx, j.sql.finish, finishArgs(l, r)...)
	if err != nil {
		return fmt.Errorf("run %s: finish: %w", l.RunID, err)
	}
	return leaseHeld(tag, l)
}

// finishArgs are the arguments of the finish statement.
func finishArgs(l journal.Lease, r journal.RunRecord) []any {
	return sqljournal.FinishArgs(dialect{}, l, r)
}

// LoadRun reads a run and its full journal, ordered by seq.
func (j *Journal) LoadRun(ctx context.Context, runID string) (journal.RunRecord, []journal.StepRecord, error) {
	return j.store.LoadRun(ctx, runID)
}

// ListRuns lists runs matching f, oldest first (newest first with
// f.Newest).
func (j *Journal) ListRuns(ctx context.Context, f journal.RunFilter) ([]journal.RunRecord, error) {
	return j.store.ListRuns(ctx, f)
}

// CountRuns counts the runs matching f per status, ignoring f.Statuses,
// f.After and f.Limit.
func (j *Journal) CountRuns(ctx context.Context, f journal.RunFilter) (map[journal.Status]int, error) {
	return j.store.CountRuns(ctx, f)
}

// Resolve applies a person's resolution to an in_flight step of a run in
// needs_attention, atomically, with the run and step rows locked.
func (j *Journal) Resolve(ctx context.Context, runID, stepKey string, res journal.Resolution) error {
	return j.store.Resolve(ctx, runID, stepKey, res)
}

// Retry makes a failed run pending and reopens the step whose failure ended
// it, with a fresh budget; other failed rows stay final.
func (j *Journal) Retry(ctx context.Context, runID string) error {
	return j.store.Retry(ctx, runID)
}

// Manifest returns a stored manifest, or "" when the version is unknown.
func (j *Journal) Manifest(ctx context.Context, workflow, version string) (string, error) {
	return j.store.Manifest(ctx, workflow, version)
}

// AcceptVersion moves a run stopped on a version change to version,
// pending, with its row locked; any other run is refused and left
// unchanged. The move is stamped with the server's clock.
func (j *Journal) AcceptVersion(ctx context.Context, runID, version string) error {
	return j.store.AcceptVersion(ctx, runID, version)
}

// inTx runs fn in a transaction and commits it if fn succeeds.
func (j *Journal) inTx(ctx context.Context, fn func(pgx.Tx) error) error {
	tx, err := j.pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	defer tx.Rollback(ctx)
	if err := fn(tx); err != nil {
		return err
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	j.commits.Add(1)
	return nil
}
