package sqlitejournal_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/resumegen/resumegen/runtime/journaltest"
	"github.com/resumegen/resumegen/runtime/sqlitejournal"
)

// TestUpgradeFromSchemaVersion1 opens a file written by schema version 1
// and checks that Open upgrades it in place, keeping its rows and telling
// the parked runs apart.
func TestUpgradeFromSchemaVersion1(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "v1.db")
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		sqlitejournal.SchemaV1,
		`CREATE TABLE resume_schema (version INTEGER NOT NULL)`,
		`INSERT INTO resume_schema (version) VALUES (1)`,
		`INSERT INTO resume_runs (run_id, workflow, version, status, input, attention_step, created_at, updated_at) VALUES
			('parked-step', 'w', 'v1', 'needs_attention', '[]', 'Notify', '2026-01-01T00:00:00.000000Z', '2026-01-01T00:00:00.000000Z'),
			('parked-version', 'w', 'v0', 'needs_attention', '[]', '', '2026-01-01T00:00:01.000000Z', '2026-01-01T00:00:01.000000Z'),
			('done', 'w', 'v1', 'succeeded', '[]', '', '2026-01-01T00:00:02.000000Z', '2026-01-01T00:00:02.000000Z')`,
		`INSERT INTO resume_steps (run_id, step_key, name, status, attempt, seq, started_at) VALUES
			('parked-step', 'Notify', 'Notify', 'in_flight', 1, 1, '2026-01-01T00:00:00.000000Z')`,
		`INSERT INTO resume_manifests (workflow, version, manifest, created_at) VALUES ('w', 'v1', 'Notify x func() once', '2026-01-01T00:00:00.000000Z')`,
		// Inserted out of their created_at order: seq follows created_at.
		`INSERT INTO resume_manifests (workflow, version, manifest, created_at) VALUES
			('w', 'v2', 'v2', '2026-01-03T00:00:00.000000Z'), ('w', 'v0', 'v0', '2025-12-31T00:00:00.000000Z')`,
		// Runs entered many times before progress was tracked are not crash loops.
		`UPDATE resume_runs SET attempts = 9`,
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatalf("write a version 1 database: %v\n%s", err, q)
		}
	}
	db.Close()

	j, err := sqlitejournal.Open(ctx, path)
	if err != nil {
		t.Fatalf("open a version 1 database: %v", err)
	}
	defer j.Close()
	var version int
	if err := j.DB().QueryRowContext(ctx, `SELECT version FROM resume_schema`).Scan(&version); err != nil || version != sqlitejournal.SchemaVersion() || version < 2 {
		t.Fatalf("schema version after upgrade = %d (%v), want %d", version, err, sqlitejournal.SchemaVersion())
	}
	journaltest.CheckUpgradedV1(t, j, 9)
	// Opening again applies nothing twice.
	j2, err := sqlitejournal.Open(ctx, path)
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	j2.Close()
}

// TestUpgradeKeepsFailedRunsRetryable checks schema 3's reading of runs
// journaled before it: a failed run's failed rows were delivered to its
// body (final), and its last failed row is the step a retry reopens; a
// failed row of an unfinished run was cut short and carries on.
func TestUpgradeKeepsFailedRunsRetryable(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "v1.db")
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		sqlitejournal.SchemaV1,
		`CREATE TABLE resume_schema (version INTEGER NOT NULL)`,
		`INSERT INTO resume_schema (version) VALUES (1)`,
		`INSERT INTO resume_runs (run_id, workflow, version, status, input, created_at, updated_at) VALUES
			('failed', 'w', 'v1', 'failed', '[]', '2026-01-01T00:00:00.000000Z', '2026-01-01T00:00:00.000000Z'),
			('pending', 'w', 'v1', 'pending', '[]', '2026-01-01T00:00:01.000000Z', '2026-01-01T00:00:01.000000Z')`,
		`INSERT INTO resume_steps (run_id, step_key, name, status, error, attempt, seq, started_at) VALUES
			('failed', 'A', 'A', 'failed', 'a broke', 3, 1, '2026-01-01T00:00:00.000000Z'),
			('failed', 'B', 'B', 'succeeded', '', 1, 2, '2026-01-01T00:00:00.000000Z'),
			('failed', 'C', 'C', 'failed', 'c broke', 1, 3, '2026-01-01T00:00:00.000000Z'),
			('pending', 'A', 'A', 'failed', 'a broke', 1, 1, '2026-01-01T00:00:01.000000Z')`,
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatalf("write a version 1 database: %v\n%s", err, q)
		}
	}
	db.Close()
	j, err := sqlitejournal.Open(ctx, path)
	if err != nil {
		t.Fatalf("open a version 1 database: %v", err)
	}
	defer j.Close()
	journaltest.CheckUpgradedFailedRuns(t, j)
}
