package sqlitejournal_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/resumegen/resumegen/runtime/journal"
	"github.com/resumegen/resumegen/runtime/journaltest"
	"github.com/resumegen/resumegen/runtime/resume"
	"github.com/resumegen/resumegen/runtime/sqlitejournal"
)

// The step benchmarks of journaltest, on a SQLite file under
// RESUME_BENCH_DIR (or the test's temporary folder), which must be a real
// disk: fsync is the cost being compared.

func openBench(b *testing.B) journaltest.BenchHarness {
	b.Helper()
	h, _ := openBenchFile(b)
	return h
}

// openBenchCountingWAL is openBench with the WAL's growth counted
// (BenchHarness.WALBytes): with checkpoints off (on the one write
// connection, the journal's and the baseline's) and the WAL emptied, the
// -wal file only grows, a frame a page written. Checkpoints are then not
// in the timings, of either side.
func openBenchCountingWAL(b *testing.B) journaltest.BenchHarness {
	b.Helper()
	h, path := openBenchFile(b)
	db := h.Journal.(*sqlitejournal.Journal).DB()
	var page int64
	if err := db.QueryRow(`PRAGMA page_size`).Scan(&page); err != nil {
		b.Fatal(err)
	}
	if _, err := db.Exec(`PRAGMA wal_autocheckpoint = 0`); err != nil {
		b.Fatal(err)
	}
	if _, err := db.Exec(`PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
		b.Fatal(err)
	}
	h.WALBytes = func(context.Context) (int64, error) {
		fi, err := os.Stat(path + "-wal")
		if errors.Is(err, fs.ErrNotExist) {
			return 0, nil
		}
		if err != nil {
			return 0, err
		}
		return fi.Size(), nil
	}
	h.WALPage = page + 24 // a frame: the page and its header
	return h
}

// openBenchFile is openBench, and the journal file's path.
func openBenchFile(b *testing.B) (journaltest.BenchHarness, string) {
	b.Helper()
	dir := os.Getenv("RESUME_BENCH_DIR")
	if dir == "" {
		dir = b.TempDir()
	} else {
		var err error
		if dir, err = os.MkdirTemp(dir, "bench-"); err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { os.RemoveAll(dir) })
	}
	ctx := context.Background()
	path := filepath.Join(dir, "bench.db")
	j, err := sqlitejournal.Open(ctx, path)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { j.Close() })
	db := j.DB()
	if _, err := db.Exec(`CREATE TABLE bench_rows (id INTEGER PRIMARY KEY, v INTEGER NOT NULL)`); err != nil {
		b.Fatal(err)
	}
	insert := func(ctx context.Context, q execer) error {
		_, err := q.ExecContext(ctx, `INSERT INTO bench_rows (v) VALUES (?)`, 42)
		return err
	}
	if _, err := db.Exec(`CREATE TABLE bench_jobs (id INTEGER PRIMARY KEY, state TEXT NOT NULL, due TEXT NOT NULL);
		CREATE INDEX bench_jobs_due ON bench_jobs (state, due, id)`); err != nil {
		b.Fatal(err)
	}
	return journaltest.BenchHarness{
		Raw: journaltest.RawQueue{
			Fill: func(ctx context.Context, n int) error {
				_, err := db.ExecContext(ctx, `WITH RECURSIVE n(i) AS (SELECT 1 WHERE ?1 > 0 UNION ALL SELECT i + 1 FROM n WHERE i < ?1)
					INSERT INTO bench_jobs (state, due) SELECT 'queued', strftime('%Y-%m-%dT%H:%M:%f000Z', 'now') FROM n`, n)
				return err
			},
			Take: func(ctx context.Context) (bool, error) {
				var id int64
				err := db.QueryRowContext(ctx, `UPDATE bench_jobs SET state = 'running' WHERE id = (
					SELECT id FROM bench_jobs WHERE state = 'queued' AND due <= strftime('%Y-%m-%dT%H:%M:%f000Z', 'now')
					ORDER BY due, id LIMIT 1) RETURNING id`).Scan(&id)
				if errors.Is(err, sql.ErrNoRows) {
					return false, nil
				}
				if err != nil {
					return false, err
				}
				_, err = db.ExecContext(ctx, `UPDATE bench_jobs SET state = 'done' WHERE id = ?`, id)
				return err == nil, err
			},
		},
		Journal:   j,
		RawInsert: func(ctx context.Context) error { return insert(ctx, db) },
		RawTx: func(ctx context.Context) error {
			tx, err := db.BeginTx(ctx, nil)
			if err != nil {
				return err
			}
			defer tx.Rollback()
			if err := insert(ctx, tx); err != nil {
				return err
			}
			return tx.Commit()
		},
		TxInsert: func(ctx context.Context) error { return insert(ctx, resume.Tx[execer](ctx, db)) },
		Reopen: func(ctx context.Context, runID string) error {
			_, err := db.ExecContext(ctx, `UPDATE resume_runs SET status = 'pending' WHERE run_id = ?`, runID)
			return err
		},
		Abandon: func(ctx context.Context, runID, owner string) error {
			_, err := db.ExecContext(ctx, `UPDATE resume_runs SET status = 'running', lease_owner = ?, lease_until = ?
				WHERE run_id = ?`, owner, time.Now().Add(time.Hour).UTC().Format("2006-01-02T15:04:05.000000Z"), runID)
			return err
		},
		FillRuns: func(ctx context.Context, prefix, wf string, n int, waiting bool) error {
			status, wakeAt := "pending", ""
			if waiting {
				status, wakeAt = "waiting", "2999-01-01T00:00:00.000000Z"
			}
			_, err := db.ExecContext(ctx, `WITH RECURSIVE n(i) AS (SELECT 1 WHERE ?1 > 0 UNION ALL SELECT i + 1 FROM n WHERE i < ?1)
				INSERT INTO resume_runs (run_id, workflow, version, status, input, created_at, updated_at, wait_kind, wake_at)
				SELECT ?2 || i, ?3, 'v1', ?4, '[]', strftime('%Y-%m-%dT%H:%M:%f000Z', '2026-01-01', '+' || i || ' seconds'),
					'2026-01-01T00:00:00.000000Z', CASE WHEN ?5 <> '' THEN 'sleep' ELSE '' END, ?5 FROM n`,
				n, prefix, wf, status, wakeAt)
			return err
		},
		FinishFilled: func(ctx context.Context, prefix string, steps int) error {
			if _, err := db.ExecContext(ctx, `UPDATE resume_runs SET status = 'succeeded' WHERE substr(run_id, 1, length(?1)) = ?1`, prefix); err != nil {
				return err
			}
			_, err := db.ExecContext(ctx, `WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM k WHERE i < ?2)
				INSERT INTO resume_steps (run_id, step_key, name, status, result, attempt, seq, started_at, finished_at)
				SELECT r.run_id, 'S#' || k.i, 'S', 'succeeded', '1', 1, k.i, '2026-01-01T00:00:00.000000Z', '2026-01-01T00:00:00.000000Z'
				FROM resume_runs r, k WHERE substr(r.run_id, 1, length(?1)) = ?1`, prefix, steps)
			return err
		},
		RawDelete: func(ctx context.Context, prefix string) error {
			tx, err := db.BeginTx(ctx, nil)
			if err != nil {
				return err
			}
			defer tx.Rollback()
			for _, q := range []string{`DELETE FROM resume_steps WHERE substr(run_id, 1, length(?1)) = ?1`, `DELETE FROM resume_runs WHERE substr(run_id, 1, length(?1)) = ?1`} {
				if _, err := tx.ExecContext(ctx, q, prefix); err != nil {
					return err
				}
			}
			return tx.Commit()
		},
		RawFork: func(ctx context.Context, from, to string, seq int64) error {
			tx, err := db.BeginTx(ctx, nil)
			if err != nil {
				return err
			}
			defer tx.Rollback()
			now := time.Now().UTC().Format("2006-01-02T15:04:05.000000Z")
			if _, err := tx.ExecContext(ctx, `INSERT INTO resume_runs (run_id, workflow, version, status, input, created_at, updated_at)
				SELECT ?2, workflow, version, 'pending', input, ?3, ?3 FROM resume_runs WHERE run_id = ?1`, from, to, now); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO resume_steps (run_id, step_key, name, status, result, error, attempt, attempt_base,
					seq, started_at, finished_at, error_detail, final, history)
				SELECT ?2, step_key, name, status, result, error, attempt, attempt_base, seq, started_at, finished_at, error_detail, final, history
				FROM resume_steps WHERE run_id = ?1 AND seq < ?3`, from, to, seq); err != nil {
				return err
			}
			return tx.Commit()
		},
		OpenAgain: func(tb testing.TB) journal.Journal {
			j, err := sqlitejournal.Open(context.Background(), path)
			if err != nil {
				tb.Fatal(err)
			}
			return j
		},
	}, path
}

// BenchmarkDefaultStep: an empty default-policy step against a raw
// single-row INSERT + commit on the same file. Target: step/raw <= 1.15.
func BenchmarkDefaultStep(b *testing.B) {
	journaltest.BenchStep(b, openBench(b), resume.PolicyDefault)
}

// BenchmarkTxStep: a one-row user INSERT in a tx step against the same
// INSERT in a plain transaction. Target: step/raw <= 1.1.
func BenchmarkTxStep(b *testing.B) {
	journaltest.BenchStep(b, openBench(b), resume.PolicyTx)
}

// BenchmarkOnceStep: an empty once step (in_flight, then succeeded) against
// one raw single commit. Targets: exactly 2 step-commits/op, step/raw <= 2.2.
func BenchmarkOnceStep(b *testing.B) {
	journaltest.BenchStep(b, openBench(b), resume.PolicyOnce)
}

// BenchmarkStepByRunLength: the per-step cost of default steps in runs of
// 10, 100 and 10,000 steps. Target: flat.
func BenchmarkStepByRunLength(b *testing.B) {
	for _, length := range []int{10, 100, 10000} {
		b.Run(fmt.Sprintf("steps=%d", length), func(b *testing.B) {
			journaltest.BenchRunLength(b, openBench(b), length)
		})
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

// BenchmarkResume1000: entering a run whose 1000 steps all succeeded: claim,
// one read of the journal, 1000 replays, finish. Target: <= 5 ms.
func BenchmarkResume1000(b *testing.B) {
	journaltest.BenchResume(b, openBench(b), 1000)
}

// BenchmarkResumeCrashed1000: the crash path: a 1000-step run left running
// by a killed process (its lease an hour away) is taken over by Resume at
// once, in one claim that reads the journal. Target: one read, <= 5 ms.
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
// journaltest.BenchListRuns), seeded in one transaction.
func BenchmarkListRuns(b *testing.B) {
	h := openBench(b)
	db := h.Journal.(*sqlitejournal.Journal).DB()
	journaltest.BenchListRuns(b, h.Journal, func(ctx context.Context) error {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		defer tx.Rollback()
		run, err := tx.PrepareContext(ctx, `INSERT INTO resume_runs (run_id, workflow, version, status, input, created_at, updated_at) VALUES (?, ?, 'v1', ?, '[]', ?, ?)`)
		if err != nil {
			return err
		}
		step, err := tx.PrepareContext(ctx, `INSERT INTO resume_steps (run_id, step_key, name, status, result, attempt, seq, started_at) VALUES (?, ?, ?, 'succeeded', 'null', 1, ?, ?)`)
		if err != nil {
			return err
		}
		for i := range journaltest.ListingRuns {
			id, at := fmt.Sprintf("run-%06d", i), journaltest.ListingBase.Add(time.Duration(i)*time.Second).Format("2006-01-02T15:04:05.000000Z")
			if _, err := run.ExecContext(ctx, id, journaltest.ListingWorkflow(i), string(journaltest.ListingStatus(i)), at, at); err != nil {
				return err
			}
			for s, key := range []string{"A", "B"} {
				if _, err := step.ExecContext(ctx, id, key, key, s+1, at); err != nil {
					return err
				}
			}
		}
		if _, err := tx.ExecContext(ctx, `ANALYZE`); err != nil {
			return err
		}
		return tx.Commit()
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
// run's resumption by one worker, 200 runs signalled 20ms apart: p50 and
// p99. SQLite has no notification: the worker's poll is the bound.
func BenchmarkSignalLatency(b *testing.B) {
	journaltest.BenchSignalLatency(b, openBench(b).Journal, 200, 20*time.Millisecond)
}

// BenchmarkConcurrent: journaltest.BenchConcurrent at each rung of the
// concurrency ladder, 20 steps a run. Target (issue 23): at 16 runs, at
// least 3x the raw single-row commits of 16 writers; at 1 run, at least
// 1/1.1 of them.
func BenchmarkConcurrent(b *testing.B) {
	for _, runs := range journaltest.ConcurrencyLadder {
		b.Run(fmt.Sprintf("runs=%d", runs), func(b *testing.B) { journaltest.BenchConcurrent(b, openBenchCountingWAL(b), runs, 20) })
	}
}

// BenchmarkClaimDepth: journaltest.BenchClaimDepth along the claim
// ladder, as many pending runs as waiting ones. Target (issue 23): flat.
func BenchmarkClaimDepth(b *testing.B) {
	for _, n := range journaltest.ClaimLadder {
		b.Run(fmt.Sprintf("queued=%d", n), func(b *testing.B) { journaltest.BenchClaimDepth(b, openBench(b), n, n) })
	}
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
// instant, 4 workers on one file.
func BenchmarkWakeStorm(b *testing.B) {
	journaltest.BenchWakeStorm(b, openBench(b), 10_000)
}

// BenchmarkQueueDrain: journaltest.BenchQueueDrain, 5,000 and 100,000
// queued one-step runs, 4 workers on one file. Target (issue 23): steady
// (last/second near 1).
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
