package pgjournal

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/resumegen/resumegen/runtime/journal"
)

// OpenReadOnly opens the journal on pool for reading: it creates no schema,
// table or function and migrates nothing; it reads the schema version once.
// A database (or schema) without a journal is an error wrapping
// [journal.ErrNoJournal]. A journal older than this package's schema is
// refused (a program that opens it with [Open] upgrades it), and so is a
// newer one. The caller keeps ownership of pool.
//
// Nothing stops a write through the journal OpenReadOnly returns but the
// pool's own settings: [ConnectReadOnly] opens a pool whose transactions
// are read-only.
func OpenReadOnly(ctx context.Context, pool *pgxpool.Pool, opts ...Option) (*Journal, error) {
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
	var have int
	err = pool.QueryRow(ctx, qualify(`SELECT version FROM {schema}.resume_schema`, c.schema)).Scan(&have)
	var pgErr *pgconn.PgError
	switch {
	case errors.As(err, &pgErr) && (pgErr.Code == "42P01" || pgErr.Code == "3F000"): // undefined_table, invalid_schema_name
		return nil, fmt.Errorf("pgjournal: schema %s: %w (no resume_schema table)", c.schema, journal.ErrNoJournal)
	case errors.Is(err, pgx.ErrNoRows):
		return nil, fmt.Errorf("pgjournal: schema %s: %w (resume_schema is empty)", c.schema, journal.ErrNoJournal)
	case err != nil:
		return nil, fmt.Errorf("pgjournal: schema %s: read schema version: %w", c.schema, err)
	case have > len(migrations):
		return nil, fmt.Errorf("pgjournal: %w", newerSchema(c.schema, have))
	case have < len(migrations):
		return nil, fmt.Errorf("pgjournal: schema %s: %w (version %d, this program's %d): a program that opens it for writing (a worker) upgrades it",
			c.schema, journal.ErrOlderJournal, have, len(migrations))
	}
	return newJournal(pool, c.schema, p), nil
}

// ConnectReadOnly opens a pool on dsn whose sessions default to read-only
// transactions (default_transaction_read_only), and the journal on it with
// [OpenReadOnly]: the server itself refuses any write. A transaction
// pooler keeps no session setting: behind one (see [Pooler]) it is
// refused, naming the fix. Close closes the pool.
func ConnectReadOnly(ctx context.Context, dsn string, opts ...Option) (*Journal, error) {
	pool, c, err := connectPool(ctx, dsn, opts, true)
	if err != nil {
		return nil, err
	}
	j, err := OpenReadOnly(ctx, pool, append(opts[:len(opts):len(opts)], WithPooler(c.pooler))...)
	if err != nil {
		pool.Close()
		return nil, err
	}
	j.owned = true
	return j, nil
}
