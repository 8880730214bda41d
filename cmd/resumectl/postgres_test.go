package main

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

// postgresDSN returns the test server's DSN. Without one the test is
// skipped, unless RESUME_REQUIRE_POSTGRES=1 (CI), where it fails.
func postgresDSN(t *testing.T) string {
	t.Helper()
	dsn := os.Getenv("RESUME_TEST_POSTGRES_DSN")
	if dsn == "" {
		if os.Getenv("RESUME_REQUIRE_POSTGRES") == "1" {
			t.Fatal("RESUME_REQUIRE_POSTGRES=1 but RESUME_TEST_POSTGRES_DSN is not set: start one with scripts/with-postgres.sh")
		}
		t.Skip("RESUME_TEST_POSTGRES_DSN is not set: run under scripts/with-postgres.sh (make test does)")
	}
	return dsn
}

var databaseSeq atomic.Int64

// freshDatabase creates an empty database on the test server, dropped when
// the test ends, and returns its DSN.
func freshDatabase(t *testing.T) string {
	t.Helper()
	admin := postgresDSN(t)
	u, err := url.Parse(admin)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		t.Fatalf("RESUME_TEST_POSTGRES_DSN must be a postgres:// URL, got %q", admin)
	}
	name := fmt.Sprintf("resumectl_%d_%d", time.Now().UnixNano(), databaseSeq.Add(1))
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		t.Fatalf("connect to %s: %v", admin, err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		t.Fatalf("create database: %v", err)
	}
	t.Cleanup(func() {
		conn, err := pgx.Connect(ctx, admin)
		if err != nil {
			t.Errorf("drop database %s: %v", name, err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "DROP DATABASE "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)"); err != nil {
			t.Errorf("drop database %s: %v", name, err)
		}
	})
	u.Path = "/" + name
	return u.String()
}
