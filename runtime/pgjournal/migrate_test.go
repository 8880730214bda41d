package pgjournal_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/resumegen/resumegen/runtime/journaltest"
	"github.com/resumegen/resumegen/runtime/pgjournal"
)

// TestUpgradeFromSchemaVersion1 writes a schema at version 1 by hand and
// checks that Open upgrades it in place, keeping its rows and telling the
// parked runs apart.
func TestUpgradeFromSchemaVersion1(t *testing.T) {
	ctx := context.Background()
	pool := testPool(t)
	schema := freshSchema(t, pool)
	s := pgx.Identifier{schema}.Sanitize()
	for _, q := range []string{
		`CREATE SCHEMA ` + s,
		pgjournal.SchemaV1(schema),
		`CREATE TABLE ` + s + `.resume_schema (version integer NOT NULL)`,
		`INSERT INTO ` + s + `.resume_schema (version) VALUES (1)`,
		`INSERT INTO ` + s + `.resume_runs (run_id, workflow, version, status, input, attention_step, created_at, updated_at) VALUES
			('parked-step', 'w', 'v1', 'needs_attention', '[]', 'Notify', '2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z'),
			('parked-version', 'w', 'v0', 'needs_attention', '[]', '', '2026-01-01T00:00:01Z', '2026-01-01T00:00:01Z'),
			('done', 'w', 'v1', 'succeeded', '[]', '', '2026-01-01T00:00:02Z', '2026-01-01T00:00:02Z')`,
		`INSERT INTO ` + s + `.resume_steps (run_id, step_key, name, status, attempt, seq, started_at) VALUES
			('parked-step', 'Notify', 'Notify', 'in_flight', 1, 1, '2026-01-01T00:00:00Z')`,
		`INSERT INTO ` + s + `.resume_manifests (workflow, version, manifest, created_at) VALUES ('w', 'v1', 'Notify x func() once', '2026-01-01T00:00:00Z')`,
		// Inserted out of their created_at order: seq follows created_at.
		`INSERT INTO ` + s + `.resume_manifests (workflow, version, manifest, created_at) VALUES
			('w', 'v2', 'v2', '2026-01-03T00:00:00Z'), ('w', 'v0', 'v0', '2025-12-31T00:00:00Z')`,
	} {
		if _, err := pool.Exec(ctx, q); err != nil {
			t.Fatalf("write a version 1 schema: %v\n%s", err, q)
		}
	}

	j, err := pgjournal.Open(ctx, pool, pgjournal.WithSchema(schema))
	if err != nil {
		t.Fatalf("open a version 1 schema: %v", err)
	}
	var version int
	if err := pool.QueryRow(ctx, `SELECT version FROM `+s+`.resume_schema`).Scan(&version); err != nil || version != pgjournal.SchemaVersion() || version < 2 {
		t.Fatalf("schema version after upgrade = %d (%v), want %d", version, err, pgjournal.SchemaVersion())
	}
	journaltest.CheckUpgradedV1(t, j, 0)
	if _, err := pgjournal.Open(ctx, pool, pgjournal.WithSchema(schema)); err != nil {
		t.Fatalf("reopen: %v", err)
	}
}

// TestUpgradeKeepsFailedRunsRetryable checks schema 5's reading of runs
// journaled before it: a failed run's failed rows were delivered to its
// body (final), and its last failed row is the step a retry reopens; a
// failed row of an unfinished run was cut short and carries on.
func TestUpgradeKeepsFailedRunsRetryable(t *testing.T) {
	ctx := context.Background()
	pool := testPool(t)
	schema := freshSchema(t, pool)
	s := pgx.Identifier{schema}.Sanitize()
	for _, q := range []string{
		`CREATE SCHEMA ` + s,
		pgjournal.SchemaV1(schema),
		`CREATE TABLE ` + s + `.resume_schema (version integer NOT NULL)`,
		`INSERT INTO ` + s + `.resume_schema (version) VALUES (1)`,
		`INSERT INTO ` + s + `.resume_runs (run_id, workflow, version, status, input, created_at, updated_at) VALUES
			('failed', 'w', 'v1', 'failed', '[]', '2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z'),
			('pending', 'w', 'v1', 'pending', '[]', '2026-01-01T00:00:01Z', '2026-01-01T00:00:01Z')`,
		`INSERT INTO ` + s + `.resume_steps (run_id, step_key, name, status, error, attempt, seq, started_at) VALUES
			('failed', 'A', 'A', 'failed', 'a broke', 3, 1, '2026-01-01T00:00:00Z'),
			('failed', 'B', 'B', 'succeeded', '', 1, 2, '2026-01-01T00:00:00Z'),
			('failed', 'C', 'C', 'failed', 'c broke', 1, 3, '2026-01-01T00:00:00Z'),
			('pending', 'A', 'A', 'failed', 'a broke', 1, 1, '2026-01-01T00:00:01Z')`,
	} {
		if _, err := pool.Exec(ctx, q); err != nil {
			t.Fatalf("write a version 1 schema: %v\n%s", err, q)
		}
	}
	j, err := pgjournal.Open(ctx, pool, pgjournal.WithSchema(schema))
	if err != nil {
		t.Fatalf("open a version 1 schema: %v", err)
	}
	journaltest.CheckUpgradedFailedRuns(t, j)
}

// TestClaimIndexesCreatedBeforehand: an operator who built migration 20's
// indexes beforehand, CONCURRENTLY (a table of millions of runs is not
// held against writes while they build), upgrades from 19 with them in
// place: the migration skips them, and the claim reads them.
func TestClaimIndexesCreatedBeforehand(t *testing.T) {
	ctx := context.Background()
	pool := testPool(t)
	j, schema := openFresh(t, pool)
	j.Close()
	s := pgx.Identifier{schema}.Sanitize()
	for _, q := range []string{
		`DROP INDEX ` + s + `.resume_runs_claim_pending`,
		`DROP INDEX ` + s + `.resume_runs_claim_due`,
		`UPDATE ` + s + `.resume_schema SET version = 19`,
		// As the operator would: outside a transaction, concurrently.
		`CREATE INDEX CONCURRENTLY resume_runs_claim_pending ON ` + s + `.resume_runs (workflow, created_at, run_id) WHERE status = 'pending' AND queue = ''`,
		`CREATE INDEX CONCURRENTLY resume_runs_claim_due ON ` + s + `.resume_runs (workflow, wake_at) WHERE status = 'waiting' AND queue = ''`,
	} {
		if _, err := pool.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	j, err := pgjournal.Open(ctx, pool, pgjournal.WithSchema(schema))
	if err != nil {
		t.Fatalf("upgrade from 19 with the indexes built beforehand: %v", err)
	}
	defer j.Close()
	var version int
	if err := pool.QueryRow(ctx, `SELECT version FROM `+s+`.resume_schema`).Scan(&version); err != nil || version != pgjournal.SchemaVersion() {
		t.Fatalf("schema version %d, %v; want %d", version, err, pgjournal.SchemaVersion())
	}
	journaltest.CheckNoneDue(t, j, 1)
}
