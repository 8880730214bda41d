package sqlitejournal

import "time"

// SchemaV1 is the DDL of schema version 1, for the upgrade test.
var SchemaV1 = migrations[0]

// SetBusyTimeout shortens the wait for another process's write lock, for
// a test, and returns the old value.
func SetBusyTimeout(d time.Duration) time.Duration {
	old := busyTimeout
	busyTimeout = d
	return old
}
