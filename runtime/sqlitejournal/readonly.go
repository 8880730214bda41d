package sqlitejournal

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"strings"

	"github.com/resumegen/resumegen/runtime/internal/groupcommit"
	"github.com/resumegen/resumegen/runtime/journal"
)

// OpenReadOnly opens the journal in the existing SQLite file at path for
// reading only (SQLite's mode=ro and query_only): it never creates the
// file, a table or a migration, and never changes the file's journal mode,
// so it reads a journal on a read-only file or directory and leaves any
// other database as it was. Writes through the returned journal fail.
//
// A file that is not a SQLite database, or a database without a journal,
// is an error wrapping [journal.ErrNoJournal]. A journal whose schema is
// older than this package's is refused (a program that opens it with
// [Open] upgrades it), and so is a newer one.
//
// Reading a WAL database needs its -shm index: where the folder is
// writable SQLite creates the -wal and -shm files a writer would (empty,
// with the database file's mode). Where it is not and no -wal file exists
// (no writer has the journal open), the file is read as immutable: a
// writer that starts during the read is not seen.
func OpenReadOnly(ctx context.Context, path string) (*Journal, error) {
	if err := checkPath(path, false); err != nil {
		return nil, err
	}
	open := func(immutable bool) (*sql.DB, int, error) {
		q := url.Values{}
		q.Set("mode", "ro")
		if immutable {
			q.Set("immutable", "1")
		}
		q.Add("_pragma", "busy_timeout(10000)")
		q.Add("_pragma", "query_only(ON)")
		db, err := sql.Open("sqlite", "file:"+(&url.URL{Path: path}).EscapedPath()+"?"+q.Encode())
		if err != nil {
			return nil, 0, err
		}
		db.SetMaxOpenConns(4)
		var have int
		if err := db.QueryRowContext(ctx, `SELECT version FROM resume_schema`).Scan(&have); err != nil {
			return db, 0, err
		}
		return db, have, nil
	}
	db, have, err := open(false)
	if err != nil && strings.Contains(err.Error(), "(1544)") && !exists(path+"-wal") {
		// SQLITE_READONLY_DIRECTORY: a WAL database whose folder we
		// cannot write has no -shm file to read through. With no -wal
		// file no writer has it open (a writer keeps one), so the file
		// is the whole database: read it as immutable.
		db.Close()
		db, have, err = open(true)
	}
	if db == nil {
		return nil, fmt.Errorf("sqlitejournal: open %s: %w", path, err)
	}
	switch {
	case err != nil && strings.Contains(err.Error(), "no such table"):
		db.Close()
		return nil, fmt.Errorf("sqlitejournal: %s: %w (no resume_schema table)", path, journal.ErrNoJournal)
	case err != nil && strings.Contains(err.Error(), "not a database"):
		db.Close()
		return nil, fmt.Errorf("sqlitejournal: %s: %w: the file is not a SQLite database", path, journal.ErrNoJournal)
	case err == sql.ErrNoRows:
		db.Close()
		return nil, fmt.Errorf("sqlitejournal: %s: %w (resume_schema is empty)", path, journal.ErrNoJournal)
	case err != nil:
		db.Close()
		return nil, fmt.Errorf("sqlitejournal: %s: read schema version: %w", path, err)
	case have > len(migrations):
		db.Close()
		return nil, fmt.Errorf("sqlitejournal: %s: the database has schema version %d, newer than this program's %d: upgrade the program", path, have, len(migrations))
	case have < len(migrations):
		db.Close()
		return nil, fmt.Errorf("sqlitejournal: %s: %w (version %d, this program's %d): a program that opens it for writing (a worker) upgrades it", path, journal.ErrOlderJournal, have, len(migrations))
	}
	j := &Journal{db: db, read: db}
	j.group = groupcommit.New(maxGroup, j.commitGroup) // its writes are refused by the database
	j.store = newStore(j)
	if err := j.prepare(ctx); err != nil {
		j.Close()
		return nil, fmt.Errorf("sqlitejournal: %s: prepare: %w", path, err)
	}
	return j, nil
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// checkPath says what is wrong with path as a journal file before SQLite
// gives a misleading answer (a directory is "out of memory (14)"). With
// create, a missing file is created empty, mode 0600, so that the journal
// and its -wal and -shm files (SQLite gives them the database file's mode)
// are readable by their owner only: they hold inputs and results.
func checkPath(path string, create bool) error {
	if path == "" {
		return errors.New("sqlitejournal: empty path")
	}
	fi, err := os.Stat(path)
	switch {
	case err == nil && fi.IsDir():
		return fmt.Errorf("sqlitejournal: %s is a directory, not a SQLite file", path)
	case err == nil:
		return nil
	case errors.Is(err, fs.ErrNotExist) && create:
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) {
			return nil // another process created it meanwhile
		}
		if err != nil {
			return fmt.Errorf("sqlitejournal: create %s: %w", path, err)
		}
		return f.Close()
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("sqlitejournal: %s does not exist", path)
	}
	return fmt.Errorf("sqlitejournal: %w", err)
}
