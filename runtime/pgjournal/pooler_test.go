package pgjournal_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/resumegen/resumegen/internal/pgtest"
	"github.com/resumegen/resumegen/runtime/journal"
	"github.com/resumegen/resumegen/runtime/pgjournal"
)

// TestPoolerDetected: Open finds a transaction pooler (PgBouncer in
// transaction mode) in front of the server, and finds none on a direct
// connection; behind one it refuses a pool that prepares statements on
// the server, naming the fix, and sends no notifications (the engine
// polls); Connect opens a pool that prepares none, from the DSN alone.
func TestPoolerDetected(t *testing.T) {
	ctx := context.Background()
	direct := testPool(t)
	j, err := pgjournal.Open(ctx, direct, pgjournal.WithSchema(freshSchema(t, direct)))
	if err != nil {
		t.Fatal(err)
	}
	if p := j.Pooler(); p != pgjournal.PoolerNone {
		t.Errorf("on a direct connection Open found %v, want none", p)
	}
	if _, err := j.NotifyWork(ctx); err != nil {
		t.Errorf("NotifyWork on a direct connection: %v", err)
	}
	j.Close()

	dsn := pgtest.PgBouncerDSN(t)
	pooled := pgBouncerPool(t) // QueryExecModeExec
	j, err = pgjournal.Open(ctx, pooled, pgjournal.WithSchema(freshSchema(t, direct)))
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	if p := j.Pooler(); p != pgjournal.PoolerTransaction {
		t.Errorf("through PgBouncer (pool_mode = transaction) Open found %v, want transaction", p)
	}
	if _, err := j.NotifyWork(ctx); !errors.Is(err, journal.ErrNoNotify) {
		t.Errorf("NotifyWork behind a transaction pooler = %v, want ErrNoNotify (no session to LISTEN on)", err)
	}
	if _, err := j.NotifyFinish(ctx); !errors.Is(err, journal.ErrNoNotify) {
		t.Errorf("NotifyFinish behind a transaction pooler = %v, want ErrNoNotify", err)
	}

	// pgx's default mode prepares statements: refused, with the fix.
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	preparing, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer preparing.Close()
	if _, err := pgjournal.Open(ctx, preparing); err == nil || !strings.Contains(err.Error(), "QueryExecModeExec") {
		t.Errorf("Open through PgBouncer on a pool that prepares statements = %v, want a refusal naming QueryExecModeExec", err)
	}

	// Connect needs nothing but the DSN, with or without resume_pooler.
	for _, d := range []string{dsn, dsn + "&resume_pooler=transaction"} {
		cj, err := pgjournal.Connect(ctx, d, pgjournal.WithSchema(freshSchema(t, direct)))
		if err != nil {
			t.Fatalf("Connect(%s): %v", d, err)
		}
		if p, mode := cj.Pooler(), cj.Pool().Config().ConnConfig.DefaultQueryExecMode; p != pgjournal.PoolerTransaction || mode != pgx.QueryExecModeExec {
			t.Errorf("Connect(%s): pooler %v, mode %v; want transaction, exec", d, p, mode)
		}
		var n int
		if err := cj.Pool().QueryRow(ctx, `SELECT count(*) FROM `+pgx.Identifier{cj.Schema(), "resume_runs"}.Sanitize()).Scan(&n); err != nil {
			t.Errorf("a query through the pool Connect opened: %v", err)
		}
		cj.Close()
	}
	// A read-only open needs a session setting: refused behind the pooler,
	// with the fix; on the server directly it opens.
	if _, err := pgjournal.ConnectReadOnly(ctx, dsn); err == nil || !strings.Contains(err.Error(), "on the server directly") {
		t.Errorf("ConnectReadOnly through PgBouncer = %v, want a refusal saying to open it on the server directly", err)
	}
	if ro, err := pgjournal.ConnectReadOnly(ctx, pgtest.DSN(t)+"&resume_pooler=none"); err != nil && !errors.Is(err, journal.ErrNoJournal) {
		t.Errorf("ConnectReadOnly on the server: %v", err)
	} else if err == nil {
		ro.Close()
	}
	if _, err := pgjournal.Connect(ctx, dsn+"&resume_pooler=sometimes"); err == nil || !strings.Contains(err.Error(), "resume_pooler") {
		t.Errorf("Connect with resume_pooler=sometimes = %v, want a refusal naming the parameter", err)
	}
	// Named none, the journal believes it (and would LISTEN).
	cj, err := pgjournal.Connect(ctx, pgtest.DSN(t)+"&resume_pooler=none", pgjournal.WithSchema(freshSchema(t, direct)))
	if err != nil {
		t.Fatal(err)
	}
	if p := cj.Pooler(); p != pgjournal.PoolerNone {
		t.Errorf("resume_pooler=none: %v", p)
	}
	cj.Close()
}
