// Package openjournal opens the journal a target string names, so that a
// command or a service can take one -db flag (or environment variable) for
// both journals:
//
//	postgres://... or postgresql://...  a PostgreSQL database (pgjournal)
//	host=... user=... dbname=...        a PostgreSQL key=value DSN (pgjournal)
//	anything else                       a SQLite file path (sqlitejournal)
//
// A key=value DSN is recognized by its first word: a libpq keyword
// followed by "=" (host=, dbname=, user=, service=, ...). A SQLite file
// whose name starts that way is named with a folder: ./host=x.db.
//
// It links both drivers into the program; a program that needs only one
// should open that journal directly.
//
// No error of this package contains the target's password: [Redact] hides
// it in the target, and any driver message that repeats it is scrubbed.
package openjournal

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/resumegen/resumegen/runtime/journal"
	"github.com/resumegen/resumegen/runtime/pgjournal"
	"github.com/resumegen/resumegen/runtime/sqlitejournal"
)

// libpqKeywords are the connection parameters a key=value DSN may start
// with (libpq's, which pgx reads).
var libpqKeywords = map[string]bool{
	"host": true, "hostaddr": true, "port": true, "dbname": true, "user": true,
	"password": true, "passfile": true, "service": true, "servicefile": true,
	"connect_timeout": true, "options": true, "application_name": true,
	"sslmode": true, "sslcert": true, "sslkey": true, "sslrootcert": true,
	"sslpassword": true, "sslnegotiation": true, "sslsni": true,
	"target_session_attrs": true, "channel_binding": true,
	"krbsrvname": true, "gssencmode": true, "client_encoding": true,
	"search_path": true, "statement_cache_capacity": true,
	"default_query_exec_mode": true, "description_cache_capacity": true,
	"pool_max_conns": true, "pool_min_conns": true,
	"resume_pooler": true, // pgjournal's own (see pgjournal.WithPooler)
}

// IsPostgres reports whether target names a PostgreSQL database: a
// postgres:// or postgresql:// URL, or a key=value DSN whose first word
// is a libpq keyword ("host=db user=app dbname=jobs").
func IsPostgres(target string) bool {
	if strings.HasPrefix(target, "postgres://") || strings.HasPrefix(target, "postgresql://") {
		return true
	}
	first := strings.TrimLeft(target, " \t\n")
	key, _, ok := strings.Cut(first, "=")
	return ok && libpqKeywords[strings.TrimSpace(key)]
}

// Open opens the journal target names and brings its schema up to date: a
// PostgreSQL DSN through [pgjournal.Connect], any other target as a SQLite
// file through [sqlitejournal.Open] (created if missing, mode 0600). A
// database that cannot be reached is an error naming the target, with any
// password redacted, and why.
func Open(ctx context.Context, target string) (journal.Journal, error) {
	if target == "" {
		return nil, errors.New("open journal: no database named (a SQLite path or a postgres:// DSN)")
	}
	if IsPostgres(target) {
		j, err := pgjournal.Connect(ctx, target)
		if err != nil {
			return nil, scrub(target, fmt.Errorf("open journal %s: %w", Redact(target), err))
		}
		return j, nil
	}
	j, err := sqlitejournal.Open(ctx, target)
	if err != nil {
		return nil, fmt.Errorf("open journal %s: %w", target, err)
	}
	return j, nil
}

// OpenReadOnly opens the journal target names for reading only, as an
// operator's tool must: no file, table or migration is created and
// nothing is changed (see [sqlitejournal.OpenReadOnly] and
// [pgjournal.ConnectReadOnly]). A SQLite file must exist. A database
// without a journal is an error wrapping [journal.ErrNoJournal].
func OpenReadOnly(ctx context.Context, target string) (journal.Journal, error) {
	if target == "" {
		return nil, errors.New("open journal: no database named (a SQLite path or a postgres:// DSN)")
	}
	if IsPostgres(target) {
		j, err := pgjournal.ConnectReadOnly(ctx, target)
		if err != nil {
			return nil, scrub(target, fmt.Errorf("open journal %s: %w", Redact(target), err))
		}
		return j, nil
	}
	j, err := sqlitejournal.OpenReadOnly(ctx, target)
	if err != nil {
		return nil, fmt.Errorf("open journal %s: %w", target, err)
	}
	return j, nil
}

// redacted stands for a password in messages.
const redacted = "xxxxx"

var (
	// userinfo is a URL's user:password@, found without parsing the
	// URL (an unparsable URL still holds a password); the password runs
	// to the last @ before the path.
	userinfo = regexp.MustCompile(`^([a-zA-Z][a-zA-Z0-9+.-]*://[^:@/?#]*:)([^/?#]*)@`)
	// queryPassword is a password= query parameter of a URL.
	queryPassword = regexp.MustCompile(`([?&](?:ssl)?password=)([^&#]*)`)
	// kvPassword is a password (or sslpassword) of a key=value DSN:
	// quoted with backslash escapes, or up to the next blank.
	kvPassword = regexp.MustCompile(`((?:^|\s)(?:ssl)?password\s*=\s*)('(?:[^'\\]|\\.)*'|[^\s']\S*|'[^']*$)`)
)

// Redact returns target with any password replaced by "xxxxx", for
// messages: the user information of a URL, parsable or not, a password=
// query parameter, and the password of a key=value DSN. A SQLite path
// comes back as it is.
func Redact(target string) string {
	if !IsPostgres(target) {
		return target
	}
	if strings.Contains(target, "://") {
		target = userinfo.ReplaceAllString(target, "${1}"+redacted+"@")
		return queryPassword.ReplaceAllString(target, "${1}"+redacted)
	}
	return kvPassword.ReplaceAllString(target, "${1}"+redacted)
}

// passwords returns the secrets target holds, as written and decoded, for
// scrubbing from a driver's messages: the password pgx's own DSN parser
// (pgconn.ParseConfig) finds, PGPASSWORD included, and what the patterns
// of Redact find, for a DSN pgx cannot parse.
func passwords(target string) []string {
	out := pgxPasswords(target)
	return append(out, patternPasswords(target)...)
}

// pgxPasswords are the passwords pgconn.ParseConfig reads from target (and
// from PGPASSWORD or a passfile it names), nil when it does not parse.
func pgxPasswords(target string) []string {
	cfg, err := pgconn.ParseConfig(target)
	if err != nil {
		return nil
	}
	if cfg.Password == "" {
		return nil
	}
	return []string{cfg.Password}
}

// patternPasswords are the secrets Redact's patterns find in target.
func patternPasswords(target string) []string {
	var out []string
	add := func(s string) {
		if len(s) >= 1 {
			out = append(out, s)
			if d, err := url.PathUnescape(s); err == nil && d != s {
				out = append(out, d)
			}
			if d, err := url.QueryUnescape(s); err == nil && d != s {
				out = append(out, d)
			}
		}
	}
	if m := userinfo.FindStringSubmatch(target); m != nil {
		add(m[2])
	}
	for _, m := range queryPassword.FindAllStringSubmatch(target, -1) {
		add(m[2])
	}
	if !strings.Contains(target, "://") {
		for _, m := range kvPassword.FindAllStringSubmatch(target, -1) {
			v := m[2]
			if strings.HasPrefix(v, "'") {
				v = strings.TrimSuffix(strings.TrimPrefix(v, "'"), "'")
				add(v)
				v = strings.NewReplacer(`\'`, `'`, `\\`, `\`).Replace(v)
			}
			add(v)
		}
	}
	return out
}

// scrubbed is an error whose message had secrets removed; it still
// unwraps to the error it came from.
type scrubbed struct {
	msg string
	err error
}

func (e *scrubbed) Error() string { return e.msg }
func (e *scrubbed) Unwrap() error { return e.err }

// scrub removes the passwords target holds from err's message.
func scrub(target string, err error) error {
	msg := err.Error()
	changed := false
	for _, p := range passwords(target) {
		if strings.Contains(msg, p) {
			msg = strings.ReplaceAll(msg, p, redacted)
			changed = true
		}
	}
	if !changed {
		return err
	}
	return &scrubbed{msg: msg, err: err}
}
