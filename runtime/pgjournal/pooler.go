package pgjournal

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/resumegen/resumegen/runtime/journal"
)

// Pooler says what stands between the journal's pool and the server: a
// session that lasts (a direct connection, or a pooler in session mode),
// or a transaction pooler (PgBouncer's pool_mode = transaction, Supavisor,
// the pooled URLs of Neon and Supabase) that hands the server connection
// to another client after each transaction, taking its session state
// (prepared statements, LISTEN, session settings) with it.
//
// The journal keeps no session state of its own (its liveness and
// wake-ups need none), so it works behind either. A transaction pooler
// changes two things: statements are not prepared on the server (pgx's
// QueryExecModeExec: each is parsed where it runs, in one round trip, which
// any transaction pooler passes through, where PgBouncer's
// max_prepared_statements needs version 1.21 and its operator's setting),
// and there is no LISTEN: workers and Engine.Wait poll the journal
// (journal.ErrNoNotify), by its clock, as they do anyway when a
// notification is lost.
type Pooler int

const (
	// PoolerDetect, the default, looks at Open whether the pool reaches
	// the server through a transaction pooler: two of its connections
	// that report the same server session at once, or one connection
	// that reports two, can only be a pooler's.
	PoolerDetect Pooler = iota
	// PoolerNone says that sessions last: a direct connection, or a
	// pooler in session mode.
	PoolerNone
	// PoolerTransaction says that a transaction pooler stands between.
	PoolerTransaction
)

// String is the pooler as the resume_pooler DSN parameter names it:
// "detect", "none" or "transaction".
func (p Pooler) String() string {
	switch p {
	case PoolerDetect:
		return "detect"
	case PoolerNone:
		return "none"
	case PoolerTransaction:
		return "transaction"
	}
	return fmt.Sprintf("Pooler(%d)", int(p))
}

// WithPooler says what stands between the pool and the server (default
// [PoolerDetect]). [Connect] also reads it from the DSN parameter
// resume_pooler=detect|none|transaction, which it removes before the DSN
// reaches pgx (a pooler refuses startup parameters it does not know); an
// option given to Connect wins over the parameter.
func WithPooler(p Pooler) Option {
	return func(c *config) { c.pooler, c.poolerSet = p, true }
}

// Pooler returns what the journal found or was told stands between its
// pool and the server: [PoolerNone] or [PoolerTransaction].
func (j *Journal) Pooler() Pooler { return j.pooler }

// poolerParam is the DSN parameter that names the pooler.
const poolerParam = "resume_pooler"

// kvPooler is resume_pooler=VALUE in a key=value DSN.
var kvPooler = regexp.MustCompile(`(^|\s)` + poolerParam + `\s*=\s*('[^']*'|\S*)`)

// cutPooler removes the resume_pooler parameter from dsn (a URL or a
// key=value string) and returns the DSN without it and the pooler it
// named; found is false when it names none.
func cutPooler(dsn string) (rest string, p Pooler, found bool, err error) {
	var value string
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		u, perr := url.Parse(dsn)
		if perr != nil {
			return dsn, PoolerDetect, false, nil // pgx says what is wrong with it
		}
		q := u.Query()
		if !q.Has(poolerParam) {
			return dsn, PoolerDetect, false, nil
		}
		value = q.Get(poolerParam)
		q.Del(poolerParam)
		u.RawQuery = q.Encode()
		rest = u.String()
	} else {
		loc := kvPooler.FindStringSubmatchIndex(dsn)
		if loc == nil {
			return dsn, PoolerDetect, false, nil
		}
		// The match with the blank before it: the blank after stays.
		value = strings.Trim(dsn[loc[4]:loc[5]], "'")
		rest = strings.TrimSpace(dsn[:loc[0]] + dsn[loc[1]:])
	}
	for _, c := range []Pooler{PoolerDetect, PoolerNone, PoolerTransaction} {
		if value == c.String() {
			return rest, c, true, nil
		}
	}
	return dsn, PoolerDetect, false, fmt.Errorf("pgjournal: the DSN's %s=%q: want detect, none or transaction", poolerParam, value)
}

// detectPooler reports whether pool reaches the server through a
// transaction pooler. Connection a reads its server session's pid; then,
// while connection b holds a transaction open (and so a server
// connection), a reads it again. Without a pooler, a's session is one
// server session and b's another: the three reads give two pids, a's twice.
// Behind a transaction pooler, b's transaction gets the server connection
// a just gave back (PgBouncer hands out the last one returned), or a gets
// another one: a pid seen twice across a and b, or a's two reads differ.
// The probe prepares no statement (the simple protocol), so it is safe
// behind a pooler whatever the pool's query mode. A pool of one
// connection cannot be probed: it is taken for direct.
func detectPooler(ctx context.Context, pool *pgxpool.Pool) (bool, error) {
	if pool.Config().MaxConns < 2 {
		return false, nil
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	pid := func(q interface {
		QueryRow(context.Context, string, ...any) pgx.Row
	}) (int32, error) {
		var n int32
		err := q.QueryRow(ctx, `SELECT pg_backend_pid()`, pgx.QueryExecModeSimpleProtocol).Scan(&n)
		return n, err
	}
	a, err := pool.Acquire(ctx)
	if err != nil {
		return false, err
	}
	defer a.Release()
	b, err := pool.Acquire(ctx)
	if err != nil {
		return false, err
	}
	defer b.Release()
	a1, err := pid(a)
	if err != nil {
		return false, err
	}
	tx, err := b.BeginTx(ctx, pgx.TxOptions{})
	if err != nil {
		return false, err
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	bp, err := pid(tx)
	if err != nil {
		return false, err
	}
	a2, err := pid(a)
	if err != nil {
		return false, err
	}
	return a1 == bp || a1 != a2, nil
}

// resolvePooler decides what stands between pool and the server, and
// checks that the pool's statements survive it: behind a transaction
// pooler, a pool that prepares statements on the server (pgx's default,
// QueryExecModeCacheStatement) is refused with the fix.
func resolvePooler(ctx context.Context, pool *pgxpool.Pool, p Pooler) (Pooler, error) {
	if p == PoolerDetect {
		behind, err := detectPooler(ctx, pool)
		if err != nil {
			return p, fmt.Errorf("pgjournal: look for a transaction pooler: %w", err)
		}
		p = PoolerNone
		if behind {
			p = PoolerTransaction
		}
	}
	if p == PoolerTransaction && pool.Config().ConnConfig.DefaultQueryExecMode == pgx.QueryExecModeCacheStatement {
		return p, errors.New("pgjournal: the pool reaches the server through a transaction pooler, and it prepares its statements on the server " +
			"(pgx's default QueryExecModeCacheStatement), which the pooler gives to other clients: set the pool's " +
			"ConnConfig.DefaultQueryExecMode to pgx.QueryExecModeExec (or default_query_exec_mode=exec in its DSN), or open it with pgjournal.Connect")
	}
	return p, nil
}

// errNoListen is why a journal behind a transaction pooler sends no
// notifications.
var errNoListen = fmt.Errorf("pgjournal: behind a transaction pooler there is no session to LISTEN on: %w", journal.ErrNoNotify)
