package sqlitejournal_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/resumegen/resumegen/runtime/journal"
	"github.com/resumegen/resumegen/runtime/sqlitejournal"
)

// TestWriteLockedSaysWho is issue 10's attack: a process stopped inside a
// tx step holds SQLite's only write lock, and every other process failed
// with "database is locked". That is SQLite's limit; the error now says
// that another process holds the journal's write lock, and points to
// PostgreSQL for several processes.
func TestWriteLockedSaysWho(t *testing.T) {
	old := sqlitejournal.SetBusyTimeout(200 * time.Millisecond)
	defer sqlitejournal.SetBusyTimeout(old)
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "journal.db")
	stopped, err := sqlitejournal.Open(ctx, path) // the process stopped in a tx step
	if err != nil {
		t.Fatal(err)
	}
	defer stopped.Close()
	other, err := sqlitejournal.Open(ctx, path) // another process: its own connections
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	now := time.Now()
	if _, _, err := stopped.CreateRun(ctx, journal.RunRecord{RunID: "r1", Workflow: "w", Version: "v", Input: []byte(`[]`),
		LeaseOwner: "stopped", LeaseUntil: now.Add(time.Hour), CreatedAt: now, UpdatedAt: now}); err != nil {
		t.Fatal(err)
	}
	tx, err := stopped.BeginStep(ctx, journal.Lease{RunID: "r1", Owner: "stopped", Epoch: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()

	_, _, err = other.CreateRun(ctx, journal.RunRecord{RunID: "r2", Workflow: "w", Version: "v", Input: []byte(`[]`), CreatedAt: now, UpdatedAt: now})
	if !errors.Is(err, sqlitejournal.ErrWriteLocked) || !strings.Contains(err.Error(), "another process holds the journal's write lock") {
		t.Errorf("CreateRun while another process holds the write lock: %v, want ErrWriteLocked", err)
	}
	if _, err := other.BeginStep(ctx, journal.Lease{RunID: "r1", Owner: "x", Epoch: 1}); !errors.Is(err, sqlitejournal.ErrWriteLocked) {
		t.Errorf("BeginStep while another process holds the write lock: %v, want ErrWriteLocked", err)
	}
	if _, _, err := other.Claim(ctx, journal.ClaimRequest{RunID: "r1", Owner: "x", Lease: time.Minute}); !errors.Is(err, sqlitejournal.ErrWriteLocked) {
		t.Errorf("Claim while another process holds the write lock: %v, want ErrWriteLocked", err)
	}
	// Reading goes on: WAL readers never wait for the writer.
	if _, _, err := other.LoadRun(ctx, "r1"); err != nil {
		t.Errorf("LoadRun while another process holds the write lock: %v", err)
	}
}
