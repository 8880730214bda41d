package sqlitejournal

import (
	"errors"
	"fmt"
	"time"

	"modernc.org/sqlite"
)

// ErrWriteLocked is wrapped by the error of a journal write that waited
// out the busy timeout: another process holds the journal's write lock.
// SQLite admits one writer at a time, so one process stopped inside a tx
// step (whose transaction holds the lock until it ends) stops every other
// process's writes; several processes belong on PostgreSQL.
var ErrWriteLocked = errors.New("another process holds the journal's write lock " +
	"(SQLite admits one writer at a time: a process stopped or stuck inside a tx step keeps the lock until it ends or dies; " +
	"for several worker processes use PostgreSQL)")

// busyTimeout is how long a write waits for another process's write lock
// before it fails with ErrWriteLocked.
var busyTimeout = 10 * time.Second

// writeLock explains SQLITE_BUSY ("database is locked") after the busy
// timeout; any other error, or one explained already, is returned as it
// is.
func writeLock(err error) error {
	var se *sqlite.Error
	if err != nil && !errors.Is(err, ErrWriteLocked) && errors.As(err, &se) && se.Code()&0xff == 5 { // SQLITE_BUSY and its extended codes
		return fmt.Errorf("%w: %w", ErrWriteLocked, err)
	}
	return err
}
