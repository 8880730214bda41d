package resume

import "errors"

// ErrNoJournal is the error of a read-only open (a journal's OpenReadOnly,
// openjournal.OpenReadOnly) of a database that holds no resumegen journal:
// an unrelated SQLite file or an empty PostgreSQL database. A read-only
// open never creates one.
var ErrNoJournal = errors.New("no resumegen journal in this database")

// ErrOlderJournal is the error of a read-only open of a journal whose
// schema is older than the program's: it cannot be read before a program
// that opens it for writing (a worker) upgrades it.
var ErrOlderJournal = errors.New("the journal's schema is older than this program's")
