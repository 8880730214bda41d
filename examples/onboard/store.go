package main

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/resumegen/resumegen/runtime/openjournal"
	"github.com/resumegen/resumegen/runtime/pgjournal"
	"github.com/resumegen/resumegen/runtime/resume"
	"github.com/resumegen/resumegen/runtime/sqlitejournal"
)

// scoreStore keeps the scores table in the journal's own database, so that
// WriteScores (a tx step) commits its rows with its journal row.
type scoreStore interface {
	// Insert writes scores through the tx step's transaction, or directly
	// when called outside a workflow.
	Insert(ctx context.Context, scores []Score) error
	// Count returns the number of score rows.
	Count(ctx context.Context) (int, error)
}

// isPostgres reports whether -db names a PostgreSQL database: a URL or a
// key=value DSN (openjournal.IsPostgres).
func isPostgres(db string) bool { return openjournal.IsPostgres(db) }

// openJournal opens the journal -db names, a SQLite file or a PostgreSQL
// DSN, and the scores table beside it.
func openJournal(ctx context.Context, db string) (resume.Journal, scoreStore, error) {
	if isPostgres(db) {
		j, err := pgjournal.Connect(ctx, db)
		if err != nil {
			return nil, nil, fmt.Errorf("open journal %s: %w", openjournal.Redact(db), err)
		}
		s := pgStore{pool: j.Pool()}
		if _, err := s.pool.Exec(ctx, `CREATE TABLE IF NOT EXISTS scores (
			record_id text NOT NULL, owner text NOT NULL, points integer NOT NULL)`); err != nil {
			j.Close()
			return nil, nil, fmt.Errorf("create scores table: %w", err)
		}
		return j, s, nil
	}
	j, err := sqlitejournal.Open(ctx, db)
	if err != nil {
		return nil, nil, err
	}
	s := sqliteStore{db: j.DB()}
	if _, err := s.db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS scores (
		record_id TEXT NOT NULL, owner TEXT NOT NULL, points INTEGER NOT NULL)`); err != nil {
		j.Close()
		return nil, nil, fmt.Errorf("create scores table: %w", err)
	}
	return j, s, nil
}

// sqlExecer is what database/sql handles offer: *sql.DB outside a workflow,
// the tx step's *sql.Tx inside one.
type sqlExecer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

type sqliteStore struct{ db *sql.DB }

func (s sqliteStore) Insert(ctx context.Context, scores []Score) error {
	q := resume.Tx[sqlExecer](ctx, s.db)
	for _, sc := range scores {
		if _, err := q.ExecContext(ctx, `INSERT INTO scores (record_id, owner, points) VALUES (?, ?, ?)`,
			sc.RecordID, sc.Owner, sc.Points); err != nil {
			return fmt.Errorf("insert score of %s: %w", sc.RecordID, err)
		}
	}
	return nil
}

func (s sqliteStore) Count(ctx context.Context) (n int, err error) {
	err = s.db.QueryRowContext(ctx, `SELECT count(*) FROM scores`).Scan(&n)
	return n, err
}

// pgExecer is what pgx handles offer: *pgxpool.Pool outside a workflow, the
// tx step's pgx.Tx inside one.
type pgExecer interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
}

type pgStore struct{ pool *pgxpool.Pool }

func (s pgStore) Insert(ctx context.Context, scores []Score) error {
	q := resume.Tx[pgExecer](ctx, s.pool)
	for _, sc := range scores {
		if _, err := q.Exec(ctx, `INSERT INTO scores (record_id, owner, points) VALUES ($1, $2, $3)`,
			sc.RecordID, sc.Owner, sc.Points); err != nil {
			return fmt.Errorf("insert score of %s: %w", sc.RecordID, err)
		}
	}
	return nil
}

func (s pgStore) Count(ctx context.Context) (n int, err error) {
	err = s.pool.QueryRow(ctx, `SELECT count(*) FROM scores`).Scan(&n)
	return n, err
}
