package pgjournal_test

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/resumegen/resumegen/internal/pgtest"
	"github.com/resumegen/resumegen/runtime/journal"
	"github.com/resumegen/resumegen/runtime/journaltest"
	"github.com/resumegen/resumegen/runtime/pgjournal"
)

// userObjects counts the tables, schemas and functions a user (or a
// journal) made in the database dsn names.
func userObjects(t *testing.T, dsn string) int {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var n int
	err = conn.QueryRow(ctx, `SELECT
		(SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
			WHERE n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg_toast%')
		+ (SELECT count(*) FROM pg_namespace WHERE nspname NOT IN ('pg_catalog', 'information_schema', 'public') AND nspname NOT LIKE 'pg_toast%' AND nspname NOT LIKE 'pg_temp%')
		+ (SELECT count(*) FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
			WHERE n.nspname NOT IN ('pg_catalog', 'information_schema'))`).Scan(&n)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestReadOnlyOnEmptyDatabase is issue 10's attack: `runs list` on an
// empty PostgreSQL database created the journal's tables. A read-only open
// says there is no journal and creates nothing, in the default schema or a
// named one.
func TestReadOnlyOnEmptyDatabase(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.FreshDatabase(t)
	before := userObjects(t, dsn)
	for _, opts := range [][]pgjournal.Option{nil, {pgjournal.WithSchema("jobs")}} {
		j, err := pgjournal.ConnectReadOnly(ctx, dsn, opts...)
		if err == nil {
			j.Close()
			t.Fatalf("ConnectReadOnly(%d options) of an empty database succeeded", len(opts))
		}
		if !errors.Is(err, journal.ErrNoJournal) {
			t.Errorf("ConnectReadOnly(%d options): %v, want ErrNoJournal", len(opts), err)
		}
	}
	if after := userObjects(t, dsn); after != before {
		t.Errorf("the database held %d objects, now %d", before, after)
	}
}

// TestReadOnlyReadsJournal reads a journal through ConnectReadOnly, whose
// sessions the server keeps read-only: a write is refused.
func TestReadOnlyReadsJournal(t *testing.T) {
	ctx := context.Background()
	pool := testPool(t)
	j, schema := openFresh(t, pool)
	now := time.Now()
	if _, _, err := j.CreateRun(ctx, journal.RunRecord{RunID: "r1", Workflow: "w", Version: "v", Input: []byte(`[1]`), CreatedAt: now, UpdatedAt: now,
		Queue: "emails", QueueKey: "acme"}); err != nil {
		t.Fatal(err)
	}
	if _, err := j.ConfigureQueues(ctx, "worker-1", []journal.QueueLimits{{Name: "emails", Concurrency: 3}}); err != nil {
		t.Fatal(err)
	}
	ro, err := pgjournal.ConnectReadOnly(ctx, os.Getenv("RESUME_TEST_POSTGRES_DSN"), pgjournal.WithSchema(schema))
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	runs, err := ro.ListRuns(ctx, journal.RunFilter{})
	if err != nil || len(runs) != 1 || runs[0].RunID != "r1" {
		t.Errorf("ListRuns = %v, %v; want run r1", runs, err)
	}
	if _, _, err := ro.CreateRun(ctx, journal.RunRecord{RunID: "r2", Workflow: "w", Version: "v", Input: []byte(`[2]`), CreatedAt: now, UpdatedAt: now}); err == nil {
		t.Error("CreateRun through a read-only journal succeeded")
	}
	journaltest.CheckReadOnlyQueues(t, ro)
	// A schema at an older version is not read (its columns differ): the
	// program that writes it upgrades it first.
	if _, err := pool.Exec(ctx, `UPDATE `+pgx.Identifier{schema}.Sanitize()+`.resume_schema SET version = 1`); err != nil {
		t.Fatal(err)
	}
	if _, err := pgjournal.OpenReadOnly(ctx, pool, pgjournal.WithSchema(schema)); !errors.Is(err, journal.ErrOlderJournal) {
		t.Errorf("OpenReadOnly of a version 1 schema: %v, want an error saying it is older", err)
	}
}
