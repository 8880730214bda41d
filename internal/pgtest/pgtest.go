// Package pgtest gives tests a PostgreSQL server: the one named by
// RESUME_TEST_POSTGRES_DSN (scripts/with-postgres.sh starts a throwaway one
// and sets it). Without it a test is skipped, unless RESUME_REQUIRE_POSTGRES
// is 1 (CI): a PostgreSQL test that skips in CI is a failed test. The same
// holds for the PgBouncer in front of it (RESUME_TEST_PGBOUNCER_DSN, set by
// scripts/with-pgbouncer.sh; RESUME_REQUIRE_PGBOUNCER=1 in CI).
package pgtest

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// DSN returns the test server's DSN, or skips (or, in CI, fails) tb.
func DSN(tb testing.TB) string {
	tb.Helper()
	dsn := os.Getenv("RESUME_TEST_POSTGRES_DSN")
	if dsn == "" {
		if os.Getenv("RESUME_REQUIRE_POSTGRES") == "1" {
			tb.Fatal("RESUME_REQUIRE_POSTGRES=1 but RESUME_TEST_POSTGRES_DSN is not set: run the tests under scripts/with-postgres.sh (make test does)")
		}
		tb.Skip("RESUME_TEST_POSTGRES_DSN is not set: run under scripts/with-postgres.sh (make test does) to include the PostgreSQL tests")
	}
	return dsn
}

// PgBouncerDSN returns the DSN of the test server through a PgBouncer in
// transaction pooling mode, or skips (or, in CI, fails) tb.
func PgBouncerDSN(tb testing.TB) string {
	tb.Helper()
	dsn := os.Getenv("RESUME_TEST_PGBOUNCER_DSN")
	if dsn == "" {
		if os.Getenv("RESUME_REQUIRE_PGBOUNCER") == "1" {
			tb.Fatal("RESUME_REQUIRE_PGBOUNCER=1 but RESUME_TEST_PGBOUNCER_DSN is not set: run the tests under scripts/with-postgres.sh scripts/with-pgbouncer.sh (make test does; apt-get install pgbouncer)")
		}
		tb.Skip("RESUME_TEST_PGBOUNCER_DSN is not set: install pgbouncer (apt-get install pgbouncer) and run under scripts/with-postgres.sh scripts/with-pgbouncer.sh (make test does) to include the tests through a transaction pooler")
	}
	return dsn
}

var seq atomic.Int64

// FreshDatabase creates an empty database on the test server, dropped when
// tb ends, and returns its DSN. The server's DSN must be a postgres:// URL.
func FreshDatabase(tb testing.TB) string {
	tb.Helper()
	admin := DSN(tb)
	u, err := url.Parse(admin)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		tb.Fatalf("RESUME_TEST_POSTGRES_DSN must be a postgres:// URL, got %q", admin)
	}
	name := pgx.Identifier{fmt.Sprintf("t_%d_%d_%d", os.Getpid(), time.Now().UnixNano()%1e9, seq.Add(1))}
	if err := exec(admin, "CREATE DATABASE "+name.Sanitize()); err != nil {
		tb.Fatalf("create database: %v", err)
	}
	tb.Cleanup(func() {
		if err := exec(admin, "DROP DATABASE "+name.Sanitize()+" WITH (FORCE)"); err != nil {
			tb.Errorf("drop database %s: %v", name[0], err)
		}
	})
	u.Path = "/" + name[0]
	return u.String()
}

func exec(dsn, sql string) error {
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, sql)
	return err
}
