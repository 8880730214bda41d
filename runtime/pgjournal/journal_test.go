package pgjournal_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/resumegen/resumegen/internal/pgtest"
	"github.com/resumegen/resumegen/runtime/journal"
	"github.com/resumegen/resumegen/runtime/journaltest"
	"github.com/resumegen/resumegen/runtime/pgjournal"
	"github.com/resumegen/resumegen/runtime/resume"
)

// The tests need a PostgreSQL server: RESUME_TEST_POSTGRES_DSN names it
// (scripts/with-postgres.sh starts a throwaway one and sets it). Each test
// works in a schema of its own, dropped at the end.

// execer is what the effect insert needs: *pgxpool.Pool and pgx.Tx both fit.
type execer interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
}

// testPool connects to the test server, or skips the test when there is
// none, unless RESUME_REQUIRE_POSTGRES=1 makes that a failure.
func testPool(tb testing.TB) *pgxpool.Pool {
	tb.Helper()
	cfg, err := pgxpool.ParseConfig(pgtest.DSN(tb))
	if err != nil {
		tb.Fatalf("RESUME_TEST_POSTGRES_DSN: %v", err)
	}
	if cfg.MaxConns < 20 {
		cfg.MaxConns = 20
	}
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		tb.Fatalf("connect: %v", err)
	}
	tb.Cleanup(pool.Close)
	return pool
}

var schemaSeq atomic.Int64

// freshSchema returns a schema name no other test uses, and drops the schema
// openFresh opens a journal in a fresh schema of pool (freshSchema) and
// returns it with the schema's name; the caller closes it.
func openFresh(tb testing.TB, pool *pgxpool.Pool) (*pgjournal.Journal, string) {
	tb.Helper()
	schema := freshSchema(tb, pool)
	j, err := pgjournal.Open(context.Background(), pool, pgjournal.WithSchema(schema))
	if err != nil {
		tb.Fatal(err)
	}
	return j, schema
}

// when the test ends.
func freshSchema(tb testing.TB, pool *pgxpool.Pool) string {
	tb.Helper()
	name := fmt.Sprintf("rt_%d_%d_%d", os.Getpid(), time.Now().UnixNano()%1e9, schemaSeq.Add(1))
	tb.Cleanup(func() {
		_, _ = pool.Exec(context.Background(), `DROP SCHEMA IF EXISTS `+pgx.Identifier{name}.Sanitize()+` CASCADE`)
	})
	return name
}

func TestConformance(t *testing.T) {
	conformance(t, testPool(t))
}

// TestConformancePgBouncer runs the conformance suite a second time,
// through a PgBouncer in transaction pooling mode: no session state
// survives a transaction there.
func TestConformancePgBouncer(t *testing.T) {
	conformance(t, pgBouncerPool(t))
}

// pgBouncerPool connects to the test server through PgBouncer, or skips
// the test when there is none, unless RESUME_REQUIRE_PGBOUNCER=1 makes
// that a failure.
func pgBouncerPool(tb testing.TB) *pgxpool.Pool {
	tb.Helper()
	cfg, err := pgxpool.ParseConfig(pgtest.PgBouncerDSN(tb))
	if err != nil {
		tb.Fatalf("RESUME_TEST_PGBOUNCER_DSN: %v", err)
	}
	if cfg.MaxConns < 20 {
		cfg.MaxConns = 20
	}
	// Server-side prepared statements do not survive a transaction
	// behind a transaction pooler (PgBouncer 1.18 has no
	// max_prepared_statements).
	cfg.ConnConfig.DefaultQueryExecMode = pgx.QueryExecModeExec
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		tb.Fatalf("connect: %v", err)
	}
	tb.Cleanup(pool.Close)
	return pool
}

// conformance runs the journal conformance suite on pool.
func conformance(t *testing.T, pool *pgxpool.Pool) {
	ctx := context.Background()
	var effects string // the effects table of the journal opened last
	var schema string  // the schema of the journal opened last
	journaltest.Run(t, journaltest.Harness{
		Open: func(t *testing.T) journal.Journal {
			schema = freshSchema(t, pool)
			j, err := pgjournal.Open(ctx, pool, pgjournal.WithSchema(schema))
			if err != nil {
				t.Fatal(err)
			}
			effects = pgx.Identifier{schema, "effects"}.Sanitize()
			if _, err := pool.Exec(ctx, `CREATE TABLE `+effects+` (run_id text NOT NULL)`); err != nil {
				t.Fatal(err)
			}
			return j
		},
		InsertEffect: func(ctx context.Context, runID string) error {
			_, err := resume.Tx[execer](ctx, pool).Exec(ctx, `INSERT INTO `+effects+` (run_id) VALUES ($1)`, runID)
			return err
		},
		CountEffects: func(ctx context.Context, runID string) (n int, err error) {
			err = pool.QueryRow(ctx, `SELECT count(*) FROM `+effects+` WHERE run_id = $1`, runID).Scan(&n)
			return n, err
		},
		OpenAgain: func(t *testing.T) journal.Journal {
			// A pool of its own: other sessions, as another process has.
			p, err := pgxpool.NewWithConfig(ctx, pool.Config())
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(p.Close)
			j, err := pgjournal.Open(ctx, p, pgjournal.WithSchema(schema))
			if err != nil {
				t.Fatal(err)
			}
			return j
		},
		Exec: func(ctx context.Context, query string) error {
			// The statement names the tables unqualified: it runs with
			// the journal's schema first on the search path.
			return pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
				if _, err := tx.Exec(ctx, `SET LOCAL search_path TO `+pgx.Identifier{schema}.Sanitize()); err != nil {
					return err
				}
				_, err := tx.Exec(ctx, query)
				return err
			})
		},
	})
}

// TestConcurrentMigrations opens the journal from several goroutines at
// once on a schema that does not exist yet: every Open succeeds and the
// schema is migrated once.
func TestConcurrentMigrations(t *testing.T) {
	ctx := context.Background()
	pool := testPool(t)
	schema := freshSchema(t, pool)
	const n = 8
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// A pool each: separate sessions, like separate processes.
			p, err := pgxpool.NewWithConfig(ctx, pool.Config())
			if err != nil {
				errs[i] = err
				return
			}
			defer p.Close()
			j, err := pgjournal.Open(ctx, p, pgjournal.WithSchema(schema))
			if err != nil {
				errs[i] = err
				return
			}
			errs[i] = j.Close()
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("Open %d: %v", i, err)
		}
	}
	var version, rows int
	err := pool.QueryRow(ctx, `SELECT max(version), count(*) FROM `+pgx.Identifier{schema, "resume_schema"}.Sanitize()).Scan(&version, &rows)
	if err != nil {
		t.Fatal(err)
	}
	if version != pgjournal.SchemaVersion() || rows != 1 {
		t.Errorf("resume_schema holds %d rows, version %d; want 1 row, version %d", rows, version, pgjournal.SchemaVersion())
	}
}

// TestNewerSchemaRefused: a schema migrated by a newer program is refused
// with a message that says so, and left alone.
func TestNewerSchemaRefused(t *testing.T) {
	ctx := context.Background()
	pool := testPool(t)
	schema := freshSchema(t, pool)
	if _, err := pgjournal.Open(ctx, pool, pgjournal.WithSchema(schema)); err != nil {
		t.Fatal(err)
	}
	table := pgx.Identifier{schema, "resume_schema"}.Sanitize()
	if _, err := pool.Exec(ctx, `UPDATE `+table+` SET version = version + 1`); err != nil {
		t.Fatal(err)
	}
	_, err := pgjournal.Open(ctx, pool, pgjournal.WithSchema(schema))
	if err == nil || !strings.Contains(err.Error(), "newer than this program") {
		t.Fatalf("Open on a newer schema: err = %v, want a refusal naming the newer version", err)
	}
	var version int
	if err := pool.QueryRow(ctx, `SELECT version FROM `+table).Scan(&version); err != nil || version != pgjournal.SchemaVersion()+1 {
		t.Errorf("schema version after the refusal = %d (%v), want %d untouched", version, err, pgjournal.SchemaVersion()+1)
	}
}

// TestConnectDefaultSchema: Connect owns its pool, and the tables land in
// public by default, readable with plain SQL. The test borrows public only
// if the server's public schema has no journal yet.
func TestConnectDefaultSchema(t *testing.T) {
	ctx := context.Background()
	pool := testPool(t)
	var exists bool
	if err := pool.QueryRow(ctx, `SELECT to_regclass('public.resume_runs') IS NOT NULL`).Scan(&exists); err != nil {
		t.Fatal(err)
	}
	if exists {
		t.Skip("public.resume_runs exists on the test server: not touching it")
	}
	// Everything the migrations made in public goes, tables and
	// functions, or the next run on this server would migrate over it.
	t.Cleanup(func() {
		_, err := pool.Exec(ctx, `DO $$ DECLARE o record; BEGIN
			FOR o IN SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
				WHERE n.nspname = 'public' AND c.relkind = 'r' AND c.relname LIKE 'resume\_%' LOOP
				EXECUTE format('DROP TABLE IF EXISTS public.%I CASCADE', o.relname);
			END LOOP;
			FOR o IN SELECT p.oid::regprocedure AS f FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
				WHERE n.nspname = 'public' AND p.proname LIKE 'resume\_%' LOOP
				EXECUTE format('DROP FUNCTION IF EXISTS %s CASCADE', o.f);
			END LOOP;
		END $$`)
		if err != nil {
			t.Errorf("drop the journal from public: %v", err)
		}
	})
	j, err := pgjournal.Connect(ctx, os.Getenv("RESUME_TEST_POSTGRES_DSN"))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	if _, _, err := j.CreateRun(ctx, journal.RunRecord{RunID: "plain", Workflow: "w", Version: "v",
		Input: []byte(`[{"b": 1, "a": 2}]`), CreatedAt: now, UpdatedAt: now}); err != nil {
		t.Fatal(err)
	}
	j.Close()
	if err := j.Pool().Ping(ctx); err == nil {
		t.Error("the pool Connect opened is still open after Close")
	}
	var input string
	if err := pool.QueryRow(ctx, `SELECT input::text FROM resume_runs WHERE run_id = 'plain'`).Scan(&input); err != nil {
		t.Fatal(err)
	}
	if input != `[{"b": 1, "a": 2}]` {
		t.Errorf("stored input = %s, want the text as written", input)
	}
}

// TestClaimNextConcurrent: workers claiming at once over the same pending
// runs take each run exactly once (FOR UPDATE SKIP LOCKED), and none waits
// for another's claim.
func TestClaimNextConcurrent(t *testing.T) {
	ctx := context.Background()
	pool := testPool(t)
	j, err := pgjournal.Open(ctx, pool, pgjournal.WithSchema(freshSchema(t, pool)))
	if err != nil {
		t.Fatal(err)
	}
	const runs, workers = 40, 8
	created := time.Now().Add(-time.Minute)
	for i := range runs {
		at := created.Add(time.Duration(i) * time.Millisecond)
		r := journal.RunRecord{RunID: fmt.Sprintf("r%02d", i), Workflow: "w", Version: "v", Input: []byte(`[]`), CreatedAt: at, UpdatedAt: at}
		if _, _, err := j.CreateRun(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	var mu sync.Mutex
	claimed := map[string]int{}
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req := journal.ClaimNextRequest{Owner: fmt.Sprintf("worker-%d", w), Lease: time.Minute, Workflows: []string{"other", "w"}}
			for {
				r, _, err := j.ClaimNext(ctx, req)
				if errors.Is(err, journal.ErrNoRunReady) {
					return
				}
				if err != nil {
					t.Error(err)
					return
				}
				if r.Status != journal.StatusRunning || r.LeaseOwner != req.Owner || r.Epoch != 1 {
					t.Errorf("claimed %+v", r)
				}
				mu.Lock()
				claimed[r.RunID]++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(claimed) != runs {
		t.Errorf("%d of %d runs claimed", len(claimed), runs)
	}
	for id, n := range claimed {
		if n != 1 {
			t.Errorf("run %s claimed %d times", id, n)
		}
	}
}
