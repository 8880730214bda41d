// Package openjournal opens the journal a target string names, so that a
// command or a service can take one -db flag (or environment variable) for
// both journals:
//
//	postgres://... or postgresql://...  a PostgreSQL database (pgjournal)
//	anything else                       a SQLite file path (sqlitejournal)
//
// It links both drivers into the program; a program that needs only one
// should open that journal directly.
package openjournal

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/resumegen/resumegen/runtime/pgjournal"
	"github.com/resumegen/resumegen/runtime/resume"
	"github.com/resumegen/resumegen/runtime/sqlitejournal"
)

// IsPostgres reports whether target names a PostgreSQL database (a
// postgres:// or postgresql:// URL).
func IsPostgres(target string) bool {
	return strings.HasPrefix(target, "postgres://") || strings.HasPrefix(target, "postgresql://")
}

// Open opens the journal target names and brings its schema up to date: a
// PostgreSQL DSN through [pgjournal.Connect], any other target as a SQLite
// file through [sqlitejournal.Open] (created if missing). A database that
// cannot be reached is an error naming the target, with any password
// redacted, and why.
func Open(ctx context.Context, target string) (resume.Journal, error) {
	if target == "" {
		return nil, errors.New("open journal: no database named (a SQLite path or a postgres:// DSN)")
	}
	if IsPostgres(target) {
		j, err := pgjournal.Connect(ctx, target)
		if err != nil {
			return nil, fmt.Errorf("open journal %s: %w", Redact(target), err)
		}
		return j, nil
	}
	j, err := sqlitejournal.Open(ctx, target)
	if err != nil {
		return nil, fmt.Errorf("open journal %s: %w", target, err)
	}
	return j, nil
}

// Redact returns target with the password of a URL replaced by "xxxxx", for
// messages.
func Redact(target string) string {
	u, err := url.Parse(target)
	if err != nil || u.User == nil {
		return target
	}
	return u.Redacted()
}
