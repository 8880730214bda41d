package resume

import "errors"

// ErrNoJournal is the error of a read-only open (a journal's OpenReadOnly,
// openjournal.OpenReadOnly) of a database that holds no resumegen journal:
// an unrelated SQLite file or an empty PostgreSQL database. A read-only
// open never creates one.
var ErrNoJournal = errors.New("no resumegen journal in this database")
