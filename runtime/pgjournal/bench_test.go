package pgjournal_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/resumegen/resumegen/runtime/journal"
	"github.com/resumegen/resumegen/runtime/journaltest"
	"github.com/resumegen/resumegen/runtime/pgjournal"
	"github.com/resumegen/resumegen/runtime/resume"
)

// The benchmarks put journaled steps beside their raw pgx baseline on the
// same pool and server, interleaved in one loop, so machine noise hits both
// alike; they report the ratio. The server must keep its data on a real
// disk with fsync on (scripts/with-postgres.sh does): the commit is the
// cost being compared.

// openBench opens a journal in a fresh schema with its bench_rows table,
// on a pool that counts the statements it sends.
func openBench(b *testing.B, setups ...benchSetup) journaltest.BenchHarness {
	b.Helper()
	return openCountedBench(b, testPool(b), setups...)
}

// benchSetup prepares a benchmark's fresh schema, once its journal is
// open.
type benchSetup func(ctx context.Context, pool *pgxpool.Pool, schema string) error

// unanalyzed keeps autovacuum from ever analyzing resume_runs: a table
// without statistics, as one that grew within autovacuum's first minute.
func unanalyzed(ctx context.Context, pool *pgxpool.Pool, schema string) error {
	_, err := pool.Exec(ctx, `ALTER TABLE `+pgx.Identifier{schema, "resume_runs"}.Sanitize()+` SET (autovacuum_enabled = false)`)
	return err
}

// openCountedBench is openBenchOn on a copy of pool's configuration that
// counts the statements it sends (BenchHarness.Statements).
func openCountedBench(b *testing.B, pool *pgxpool.Pool, setups ...benchSetup) journaltest.BenchHarness {
	b.Helper()
	cfg := pool.Config()
	var sent statementCounter
	cfg.ConnConfig.Tracer = &sent
	counted, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		b.Fatalf("connect: %v", err)
	}
	b.Cleanup(counted.Close)
	h := openBenchOn(b, counted, setups...)
	h.Statements = sent.Load
	return h
}

// statementCounter is a pgx tracer that counts the statements a pool
// sends, each of a batch (BEGIN and COMMIT included) one.
type statementCounter struct{ atomic.Int64 }

func (c *statementCounter) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	c.Add(1)
	return ctx
}

func (c *statementCounter) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

func (c *statementCounter) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	return ctx
}

func (c *statementCounter) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {
	c.Add(1)
}

func (c *statementCounter) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData) {}

// openBenchOn is openBench on pool.
func openBenchOn(b *testing.B, pool *pgxpool.Pool, setups ...benchSetup) journaltest.BenchHarness {
	b.Helper()
	ctx := context.Background()
	j, schema := openFresh(b, pool)
	for _, setup := range setups {
		if err := setup(ctx, pool, schema); err != nil {
			b.Fatal(err)
		}
	}
	rows := pgx.Identifier{schema, "bench_rows"}.Sanitize()
	if _, err := pool.Exec(ctx, `CREATE TABLE `+rows+` (id bigserial PRIMARY KEY, v bigint NOT NULL)`); err != nil {
		b.Fatal(err)
	}
	insert := func(ctx context.Context, q execer) error {
		_, err := q.Exec(ctx, `INSERT INTO `+rows+` (v) VALUES ($1)`, 42)
		return err
	}
	runs := pgx.Identifier{schema, "resume_runs"}.Sanitize()
	// The WAL position, read on a connection of its own, so that the
	// pool's statements do not count it. The server's WAL is every
	// session's: the benchmark has the server to itself.
	walCfg := pool.Config().ConnConfig.Copy()
	walCfg.Tracer = nil
	walConn, err := pgx.ConnectConfig(ctx, walCfg)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { walConn.Close(context.Background()) })
	jobs := pgx.Identifier{schema, "bench_jobs"}.Sanitize()
	if _, err := pool.Exec(ctx, `CREATE TABLE `+jobs+` (id bigserial PRIMARY KEY, state text NOT NULL, due timestamptz NOT NULL);
		CREATE INDEX ON `+jobs+` (state, due, id)`); err != nil {
		b.Fatal(err)
	}
	return journaltest.BenchHarness{
		WALBytes: func(ctx context.Context) (int64, error) {
			var n int64
			err := walConn.QueryRow(ctx, `SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), '0/0')::bigint`).Scan(&n)
			return n, err
		},
		Raw: journaltest.RawQueue{
			Fill: func(ctx context.Context, n int) error {
				_, err := pool.Exec(ctx, `INSERT INTO `+jobs+` (state, due) SELECT 'queued', now() FROM generate_series(1, $1::int)`, n)
				if err == nil {
					_, err = pool.Exec(ctx, `ANALYZE `+jobs)
				}
				return err
			},
			Take: func(ctx context.Context) (bool, error) {
				var id int64
				err := pool.QueryRow(ctx, `UPDATE `+jobs+` SET state = 'running' WHERE id = (
					SELECT id FROM `+jobs+` WHERE state = 'queued' AND due <= now() ORDER BY due, id LIMIT 1
					FOR UPDATE SKIP LOCKED) RETURNING id`).Scan(&id)
				if errors.Is(err, pgx.ErrNoRows) {
					return false, nil
				}
				if err != nil {
					return false, err
				}
				_, err = pool.Exec(ctx, `UPDATE `+jobs+` SET state = 'done' WHERE id = $1`, id)
				return err == nil, err
			},
		},
		Journal:   j,
		RawInsert: func(ctx context.Context) error { return insert(ctx, pool) },
		RawTx: func(ctx context.Context) error {
			tx, err := pool.Begin(ctx)
			if err != nil {
				return err
			}
			defer tx.Rollback(ctx)
			if err := insert(ctx, tx); err != nil {
				return err
			}
			return tx.Commit(ctx)
		},
		TxInsert: func(ctx context.Context) error { return insert(ctx, resume.Tx[execer](ctx, pool)) },
		Reopen: func(ctx context.Context, runID string) error {
			_, err := pool.Exec(ctx, `UPDATE `+runs+` SET status = 'pending' WHERE run_id = $1`, runID)
			return err
		},
		Abandon: func(ctx context.Context, runID, owner string) error {
			_, err := pool.Exec(ctx, `UPDATE `+runs+` SET status = 'running', lease_owner = $1, lease_until = now() + interval '1 hour'
				WHERE run_id = $2`, owner, runID)
			return err
		},
		FillRuns: func(ctx context.Context, prefix, wf string, n int, waiting bool) error {
			status, wakeAt := "pending", (*time.Time)(nil)
			if waiting {
				t := time.Date(2999, 1, 1, 0, 0, 0, 0, time.UTC)
				status, wakeAt = "waiting", &t
			}
			_, err := pool.Exec(ctx, `INSERT INTO `+runs+` (run_id, workflow, version, status, input, created_at, updated_at, wait_kind, wake_at)
				SELECT $1 || i, $2, 'v1', $3, '[]', timestamptz '2026-01-01' + i * interval '1 second', timestamptz '2026-01-01',
					CASE WHEN $4::timestamptz IS NULL THEN '' ELSE 'sleep' END, $4
				FROM generate_series(1, $5::int) AS i`, prefix, wf, status, wakeAt, n)
			if err == nil {
				_, err = pool.Exec(ctx, `ANALYZE `+runs)
			}
			return err
		},
		FinishFilled: func(ctx context.Context, prefix string, steps int) error {
			if _, err := pool.Exec(ctx, `UPDATE `+runs+` SET status = 'succeeded' WHERE starts_with(run_id, $1)`, prefix); err != nil {
				return err
			}
			_, err := pool.Exec(ctx, `INSERT INTO `+pgx.Identifier{schema, "resume_steps"}.Sanitize()+`
				(run_id, step_key, name, status, result, attempt, seq, started_at, finished_at)
				SELECT r.run_id, 'S#' || k, 'S', 'succeeded', '1', 1, k, timestamptz '2026-01-01', timestamptz '2026-01-01'
				FROM `+runs+` r, generate_series(1, $2::int) AS k WHERE starts_with(r.run_id, $1)`, prefix, steps)
			if err == nil {
				// As autovacuum would have by then: a fresh table's planner
				// statistics say it is empty.
				_, err = pool.Exec(ctx, `ANALYZE `+runs+`, `+pgx.Identifier{schema, "resume_steps"}.Sanitize())
			}
			return err
		},
		RawDelete: func(ctx context.Context, prefix string) error {
			tx, err := pool.Begin(ctx)
			if err != nil {
				return err
			}
			defer tx.Rollback(ctx)
			for _, table := range []string{"resume_steps", "resume_runs"} {
				if _, err := tx.Exec(ctx, `DELETE FROM `+pgx.Identifier{schema, table}.Sanitize()+` WHERE starts_with(run_id, $1)`, prefix); err != nil {
					return err
				}
			}
			return tx.Commit(ctx)
		},
		RawFork: func(ctx context.Context, from, to string, seq int64) error {
			tx, err := pool.Begin(ctx)
			if err != nil {
				return err
			}
			defer tx.Rollback(ctx)
			if _, err := tx.Exec(ctx, `INSERT INTO `+runs+` (run_id, workflow, version, status, input, created_at, updated_at)
				SELECT $2, workflow, version, 'pending', input, now(), now() FROM `+runs+` WHERE run_id = $1 FOR UPDATE`, from, to); err != nil {
				return err
			}
			steps := pgx.Identifier{schema, "resume_steps"}.Sanitize()
			if _, err := tx.Exec(ctx, `INSERT INTO `+steps+` (run_id, step_key, name, status, result, error, attempt, attempt_base,
					seq, started_at, finished_at, error_detail, final, history)
				SELECT $2, step_key, name, status, result, error, attempt, attempt_base, seq, started_at, finished_at, error_detail, final, history
				FROM `+steps+` WHERE run_id = $1 AND seq < $3`, from, to, seq); err != nil {
				return err
			}
			return tx.Commit(ctx)
		},
		OpenAgain: func(tb testing.TB) journal.Journal {
			p, err := pgxpool.NewWithConfig(ctx, pool.Config())
			if err != nil {
				tb.Fatal(err)
			}
			tb.Cleanup(p.Close)
			j, err := pgjournal.Open(ctx, p, pgjournal.WithSchema(schema))
			if err != nil {
				tb.Fatal(err)
			}
			return j
		},
	}
}

// BenchmarkDefaultStep: an empty default-policy step against a raw
// single-row INSERT in autocommit on the same pool. Target: step/raw <= 1.15.
func BenchmarkDefaultStep(b *testing.B) {
	journaltest.BenchStep(b, openBench(b), resume.PolicyDefault)
}

// BenchmarkTxStep: a one-row user INSERT in a tx step against the same
// INSERT in a plain transaction. Target (SQLite's): step/raw <= 1.1.
func BenchmarkTxStep(b *testing.B) {
	journaltest.BenchStep(b, openBench(b), resume.PolicyTx)
}

// BenchmarkOnceStep: an empty once step (in_flight, then succeeded) against
// one raw autocommit INSERT. Targets (SQLite's): 2 step-commits/op, step/raw
// <= 2.2.
func BenchmarkOnceStep(b *testing.B) {
	journaltest.BenchStep(b, openBench(b), resume.PolicyOnce)
}

// BenchmarkDefaultStepPgBouncer, BenchmarkTxStepPgBouncer and
// BenchmarkOnceStepPgBouncer are the step benchmarks through PgBouncer in
// transaction pooling mode: the journal prepares no statement there
// (QueryExecModeExec), and neither does the raw baseline, on the same pool.
func BenchmarkDefaultStepPgBouncer(b *testing.B) {
	journaltest.BenchStep(b, openBenchOn(b, pgBouncerPool(b)), resume.PolicyDefault)
}

func BenchmarkTxStepPgBouncer(b *testing.B) {
	journaltest.BenchStep(b, openBenchOn(b, pgBouncerPool(b)), resume.PolicyTx)
}

func BenchmarkOnceStepPgBouncer(b *testing.B) {
	journaltest.BenchStep(b, openBenchOn(b, pgBouncerPool(b)), resume.PolicyOnce)
}

// BenchmarkConcurrent: journaltest.BenchConcurrent at each rung of the
// concurrency ladder, 20 steps a run, on a pool of 20 connections (or the
// DSN's, if more). Target (issue 23): at 16 runs, at least 1.5x the raw
// single-row commits of 16 writers. It replaces ConcurrentRuns16 (16 runs
// of 100 steps), whose figures docs/benchmarks.md keeps.
func BenchmarkConcurrent(b *testing.B) {
	for _, runs := range journaltest.ConcurrencyLadder {
		b.Run(fmt.Sprintf("runs=%d", runs), func(b *testing.B) { journaltest.BenchConcurrent(b, openBench(b), runs, 20) })
	}
}

// BenchmarkClaimDepth: journaltest.BenchClaimDepth along the claim
// ladder, as many pending runs as waiting ones. Target (issue 23): flat.
// BenchmarkConcurrentPgBouncer is BenchmarkConcurrent at 16 runs through
// PgBouncer in transaction pooling mode, where no statement is prepared
// on the server (QueryExecModeExec): each statement of a group is parsed
// and planned where it runs.
func BenchmarkConcurrentPgBouncer(b *testing.B) {
	journaltest.BenchConcurrent(b, openCountedBench(b, pgBouncerPool(b)), 16, 20)
}

func BenchmarkClaimDepth(b *testing.B) {
	for _, n := range journaltest.ClaimLadder {
		b.Run(fmt.Sprintf("queued=%d", n), func(b *testing.B) { journaltest.BenchClaimDepth(b, openBench(b), n, n) })
	}
}

// BenchmarkFork: resume.Engine.Fork of a succeeded run from its last
// step, by journal length, beside the same copy in plain SQL, and the
// fork resumed beside a fresh start (see journaltest.BenchFork).
func BenchmarkFork(b *testing.B) {
	for _, steps := range []int{10, 100, 1000} {
		b.Run(fmt.Sprintf("steps=%d", steps), func(b *testing.B) { journaltest.BenchFork(b, openBench(b), steps) })
	}
}

// BenchmarkResume1000: entering a run whose 1000 steps all succeeded: claim
// and one read of the journal in one round trip, 1000 replays, finish.
// Target: <= 5 ms.
func BenchmarkResume1000(b *testing.B) {
	journaltest.BenchResume(b, openBench(b), 1000)
}

// BenchmarkResumeCrashed1000: the crash path: a 1000-step run left running
// by a killed process (its lease an hour away) is taken over by Resume at
// once, in one batch that claims it, checking the owner's liveness lock,
// and reads the journal. Target: one read, <= 5 ms.
func BenchmarkResumeCrashed1000(b *testing.B) {
	journaltest.BenchResumeCrashed(b, openBench(b), 1000)
}

// BenchmarkReattachFinished1000: Start on a finished 1000-step run returns
// its outcome from the run's row. Target: no step read.
func BenchmarkReattachFinished1000(b *testing.B) {
	journaltest.BenchReattachFinished(b, openBench(b), 1000)
}

// BenchmarkResumeNested1000: resuming a run that died inside its child run,
// 500 steps on each side (the parent's through a helper): both journals
// read once each, 999 replays, the child's last step and both finishes.
// Target: within the resume budget, 5 ms per 1000 journaled steps, plus
// the resume's four commits.
func BenchmarkResumeNested1000(b *testing.B) {
	journaltest.BenchResumeNested(b, openBench(b), 500)
}

// BenchmarkClaimNext: ClaimNext of the worker's versions beside the
// claim of any version, with no run to skip and behind 200 runs the claim
// with versions skips (newer, or older and advertised).
func BenchmarkClaimNext(b *testing.B) {
	b.Run("skip0", func(b *testing.B) { journaltest.BenchClaimNext(b, openBench(b), 0) })
	b.Run("skip200", func(b *testing.B) { journaltest.BenchClaimNext(b, openBench(b), 200) })
}

// BenchmarkListRuns: the web UI's runs list over 100,000 runs (see
// journaltest.BenchListRuns), seeded by generate_series.
func BenchmarkListRuns(b *testing.B) {
	pool := testPool(b)
	j, schema := openFresh(b, pool)
	b.Cleanup(func() { j.Close() })
	runs, steps := pgx.Identifier{schema, "resume_runs"}.Sanitize(), pgx.Identifier{schema, "resume_steps"}.Sanitize()
	journaltest.BenchListRuns(b, j, func(ctx context.Context) error {
		// The statuses and workflows of journaltest.ListingStatus and ListingWorkflow.
		_, err := pool.Exec(ctx, `INSERT INTO `+runs+` (run_id, workflow, version, status, input, created_at, updated_at)
			SELECT format('run-%s', lpad(i::text, 6, '0')), format('example.com/bench.W%s', i % 4), 'v1',
				CASE WHEN i % 100 = 0 THEN 'needs_attention' WHEN i % 100 BETWEEN 1 AND 4 THEN 'failed'
					WHEN i % 100 BETWEEN 5 AND 7 THEN 'pending' WHEN i % 100 = 8 THEN 'cancelled' ELSE 'succeeded' END,
				'[]', $1::timestamptz + i * interval '1 second', $1::timestamptz + i * interval '1 second'
			FROM generate_series(0, $2 - 1) i;
			`, journaltest.ListingBase, journaltest.ListingRuns)
		if err != nil {
			return err
		}
		_, err = pool.Exec(ctx, `INSERT INTO `+steps+` (run_id, step_key, name, status, result, attempt, seq, started_at)
			SELECT r.run_id, k.key, k.key, 'succeeded', 'null', 1, k.seq, r.created_at
			FROM `+runs+` r, (VALUES ('A', 1), ('B', 2)) k(key, seq)`)
		if err != nil {
			return err
		}
		_, err = pool.Exec(ctx, `ANALYZE `+runs+`; ANALYZE `+steps)
		return err
	})
}

// BenchmarkIdleWaiting: an idle worker's journal queries and CPU time per
// second with 10,000 waiting runs (half asleep, half awaiting an event)
// against none. Target: flat.
func BenchmarkIdleWaiting(b *testing.B) {
	journaltest.BenchIdleWaiting(b, openBench(b).Journal, openBench(b).Journal, 10000, 5*time.Second)
}

// BenchmarkClaimIdle: an idle worker's two queries (a ClaimNext that finds
// nothing, NextWake) with 10,000 waiting runs against none. Target: flat.
func BenchmarkClaimIdle(b *testing.B) {
	journaltest.BenchClaimIdle(b, openBench(b).Journal, openBench(b).Journal, 10000)
}

// BenchmarkWakeLatency: how late one worker resumes 200 runs after their
// sleeps' due times, 20ms apart: p50 and p99.
func BenchmarkWakeLatency(b *testing.B) {
	journaltest.BenchWakeLatency(b, openBench(b).Journal, 200, 20*time.Millisecond)
}

// BenchmarkSignalLatency: from Engine.Signal's return to the awaiting
// run's resumption by one worker (woken by NOTIFY), 200 runs signalled
// 20ms apart: p50 and p99.
func BenchmarkSignalLatency(b *testing.B) {
	journaltest.BenchSignalLatency(b, openBench(b).Journal, 200, 20*time.Millisecond)
}

// BenchmarkKeyedStart is a singleton start (a new key each op) and a
// debounce (one key: a replacement each op after the first) against
// Enqueue and a raw INSERT in the same loop.
func BenchmarkKeyedStart(b *testing.B) {
	for _, mode := range []string{"singleton", "debounce"} {
		b.Run(mode, func(b *testing.B) { journaltest.BenchKeyedStart(b, openBench(b), mode) })
	}
}

// BenchmarkPurge: retention on a journal of 20,000 finished 5-step runs:
// the engine's batched purge against one raw DELETE transaction, and a
// worker's step latency beside each (see journaltest.BenchPurge).
func BenchmarkPurge(b *testing.B) {
	journaltest.BenchPurge(b, openBench(b), 20000, 5)
}

// BenchmarkWakeStorm: journaltest.BenchWakeStorm, 10,000 runs due at one
// instant, 4 workers. Target (issue 23): >= 1,000 runs/s.
func BenchmarkWakeStorm(b *testing.B) {
	journaltest.BenchWakeStorm(b, openBench(b), 10_000)
}

// BenchmarkWakeStormUnanalyzed is BenchmarkWakeStorm on a resume_runs
// that autovacuum never analyzes. Target (issue 23): the rate of
// BenchmarkWakeStorm (before the claim read its candidates a workflow at a
// time from partial indexes: 380 runs/s against 2,600 analyzed).
func BenchmarkWakeStormUnanalyzed(b *testing.B) {
	journaltest.BenchWakeStorm(b, openBench(b, unanalyzed), 10_000)
}

// BenchmarkQueueDrain: journaltest.BenchQueueDrain, 5,000 and 100,000
// queued one-step runs, 4 workers. Target (issue 23): steady (last/second
// near 1).
func BenchmarkQueueDrain(b *testing.B) {
	for _, n := range []int{5_000, 100_000} {
		b.Run(fmt.Sprintf("queued=%d", n), func(b *testing.B) { journaltest.BenchQueueDrain(b, openBench(b), n) })
	}
}

// BenchmarkClaimBatchDepth: journaltest.BenchClaimBatchDepth, batches of
// 16, along the claim ladder, as many pending runs as waiting ones.
// Target (issue 23): flat.
func BenchmarkClaimBatchDepth(b *testing.B) {
	for _, n := range journaltest.ClaimLadder {
		b.Run(fmt.Sprintf("queued=%d", n), func(b *testing.B) { journaltest.BenchClaimBatchDepth(b, openBench(b), n, n, 16) })
	}
}

// BenchmarkPoller: one wake-up of a long-lived poller that polled
// history times already, beside two raw INSERTs: one run replaying
// every earlier poll, or a chain continuing as new each time
// (journaltest.BenchPoller). Target: continued flat across history.
func BenchmarkPoller(b *testing.B) {
	for _, history := range []int{10, 1000, 4000} {
		b.Run(fmt.Sprintf("one-run/history=%d", history), func(b *testing.B) {
			journaltest.BenchPoller(b, openBench(b), history, false)
		})
		b.Run(fmt.Sprintf("continued/history=%d", history), func(b *testing.B) {
			journaltest.BenchPoller(b, openBench(b), history, true)
		})
	}
}

// BenchmarkQueueLimits: journaltest.BenchQueueLimits, 2,000 runs drained
// by 4 workers of 16, of no queue and of a queue whose limits do not bind:
// the overhead of a limited claim.
func BenchmarkQueueLimits(b *testing.B) {
	journaltest.BenchQueueLimits(b, openBench(b), 2_000)
}
