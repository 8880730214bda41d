package main

import (
	"testing"

	"github.com/resumegen/resumegen/internal/pgtest"
)

// freshDatabase creates an empty database on the test server, dropped when
// the test ends, and returns its DSN.
func freshDatabase(t *testing.T) string { return pgtest.FreshDatabase(t) }
