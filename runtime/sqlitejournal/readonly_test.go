package sqlitejournal_test

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/resumegen/resumegen/runtime/journal"
	"github.com/resumegen/resumegen/runtime/journaltest"
	"github.com/resumegen/resumegen/runtime/sqlitejournal"
)

// fileState is what a read must leave as it was: the bytes, the mode and
// the files beside it.
type fileState struct {
	data  []byte
	mode  os.FileMode
	files []string
}

func stateOf(t *testing.T, path string) fileState {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir(filepath.Dir(path))
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, e := range ents {
		files = append(files, e.Name())
	}
	return fileState{data: data, mode: fi.Mode(), files: files}
}

// sameState compares two states; allowed names files the read may add.
func sameState(t *testing.T, what string, before, after fileState, allowed ...string) {
	t.Helper()
	var files []string
	for _, f := range after.files {
		if !slices.Contains(allowed, f) {
			files = append(files, f)
		}
	}
	after.files = files
	if !bytes.Equal(before.data, after.data) {
		t.Errorf("%s: the file's bytes changed (%d bytes before, %d after)", what, len(before.data), len(after.data))
	}
	if before.mode != after.mode {
		t.Errorf("%s: the file's mode changed from %v to %v", what, before.mode, after.mode)
	}
	if strings.Join(before.files, " ") != strings.Join(after.files, " ") {
		t.Errorf("%s: the folder held %v, now %v", what, before.files, after.files)
	}
}

// TestOpenReadOnlyUnrelatedDatabase is issue 10's attack: reading an
// unrelated SQLite database created four resume_* tables and switched it
// to WAL. A read-only open says there is no journal and leaves the file's
// bytes, mode and folder as they were.
func TestOpenReadOnlyUnrelatedDatabase(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "app.db")
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TABLE notes (body TEXT); INSERT INTO notes VALUES ('keep me')`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if err := os.Chmod(path, 0o640); err != nil {
		t.Fatal(err)
	}
	before := stateOf(t, path)

	j, err := sqlitejournal.OpenReadOnly(ctx, path)
	if err == nil {
		j.Close()
		t.Fatal("OpenReadOnly of an unrelated database succeeded")
	}
	if !errors.Is(err, journal.ErrNoJournal) {
		t.Errorf("error %v, want ErrNoJournal", err)
	}
	sameState(t, "read-only open of an unrelated database", before, stateOf(t, path))

	// A file that is not a database at all.
	text := filepath.Join(t.TempDir(), "notes.txt")
	if err := os.WriteFile(text, []byte("not a database, just some text that is long enough to have a header\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	before = stateOf(t, text)
	if _, err := sqlitejournal.OpenReadOnly(ctx, text); !errors.Is(err, journal.ErrNoJournal) {
		t.Errorf("a text file: %v, want ErrNoJournal", err)
	}
	sameState(t, "read-only open of a text file", before, stateOf(t, text))
}

// TestOpenNamesDirectoryAndMissingFile: a directory is said to be one
// (SQLite says "out of memory (14)"), and a read-only open of a missing
// file creates nothing.
func TestOpenNamesDirectoryAndMissingFile(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	for name, open := range map[string]func(context.Context, string) (*sqlitejournal.Journal, error){
		"Open": func(ctx context.Context, path string) (*sqlitejournal.Journal, error) {
			return sqlitejournal.Open(ctx, path)
		},
		"OpenReadOnly": sqlitejournal.OpenReadOnly,
	} {
		if _, err := open(ctx, dir); err == nil || !strings.Contains(err.Error(), "is a directory") {
			t.Errorf("%s(directory): %v, want an error saying it is a directory", name, err)
		}
	}
	missing := filepath.Join(dir, "missing.db")
	if _, err := sqlitejournal.OpenReadOnly(ctx, missing); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("OpenReadOnly(missing file): %v, want does not exist", err)
	}
	if _, err := os.Stat(missing); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("OpenReadOnly created %s (%v)", missing, err)
	}
}

// TestOpenReadOnlyReadsJournal reads a journal on a file that cannot be
// written (chmod 0400, in a folder of mode 0500; as root, where modes do
// not stop writes, mode=ro still does) and checks that nothing changed and
// that a write is refused. Before issue 10 this read failed with "attempt
// to write a readonly database".
func TestOpenReadOnlyReadsJournal(t *testing.T) {
	asNobody(t)
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "journal.db")
	j, err := sqlitejournal.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	if _, _, err := j.CreateRun(ctx, journal.RunRecord{RunID: "r1", Workflow: "w", Version: "v", Input: []byte(`[1]`), CreatedAt: now, UpdatedAt: now,
		Queue: "emails", QueueKey: "acme"}); err != nil {
		t.Fatal(err)
	}
	if _, err := j.ConfigureQueues(ctx, "worker-1", []journal.QueueLimits{{Name: "emails", Concurrency: 3}}); err != nil {
		t.Fatal(err)
	}
	if err := j.Close(); err != nil { // checkpoints the WAL and removes -wal and -shm
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o400); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o500); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(dir, 0o700) })
	before := stateOf(t, path)

	ro, err := sqlitejournal.OpenReadOnly(ctx, path)
	if err != nil {
		t.Fatalf("OpenReadOnly of a read-only journal: %v", err)
	}
	runs, err := ro.ListRuns(ctx, journal.RunFilter{})
	if err != nil || len(runs) != 1 || runs[0].RunID != "r1" {
		t.Errorf("ListRuns = %v, %v; want run r1", runs, err)
	}
	if _, _, err := ro.LoadRun(ctx, "r1"); err != nil {
		t.Errorf("LoadRun: %v", err)
	}
	if _, _, err := ro.CreateRun(ctx, journal.RunRecord{RunID: "r2", Workflow: "w", Version: "v", Input: []byte(`[2]`), CreatedAt: now, UpdatedAt: now}); err == nil {
		t.Error("CreateRun through a read-only journal succeeded")
	}
	journaltest.CheckReadOnlyQueues(t, ro)
	if err := ro.Close(); err != nil {
		t.Error(err)
	}
	// Reading a WAL database takes SQLite's shared-memory index: where the
	// folder lets it, SQLite makes the -wal and -shm files a writer would
	// (empty: nothing was written), with the database file's mode.
	sameState(t, "read-only open of a journal", before, stateOf(t, path), "journal.db-wal", "journal.db-shm")
	if fi, err := os.Stat(path + "-wal"); err == nil && fi.Size() != 0 {
		t.Errorf("the read wrote %d bytes of WAL", fi.Size())
	}
}

// TestJournalFilesAreOwnerOnly: a journal holds inputs and results, so the
// file Open creates, and its -wal and -shm, are mode 0600 whatever the
// umask lets through.
func TestJournalFilesAreOwnerOnly(t *testing.T) {
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "journal.db")
	j, err := sqlitejournal.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	now := time.Now()
	if _, _, err := j.CreateRun(ctx, journal.RunRecord{RunID: "r1", Workflow: "w", Version: "v", Input: []byte(`[1]`), CreatedAt: now, UpdatedAt: now}); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Errorf("%s: %v", filepath.Base(p), err)
			continue
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("%s has mode %v, want 0600", filepath.Base(p), fi.Mode().Perm())
		}
	}
}

// asNobody runs the calling test again as the user nobody when the tests
// run as root (where file modes stop no write), then lets it go on as root; where
// runuser or nobody is missing it runs as root, with the reason logged.
func asNobody(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 || os.Getenv("SQLITEJOURNAL_AS_NOBODY") != "" {
		return
	}
	runuser, err := exec.LookPath("runuser")
	if err != nil {
		t.Logf("running as root: %v", err)
		return
	}
	dir, err := os.MkdirTemp("", "asnobody")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	bin, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	test := filepath.Join(dir, "journal.test")
	if err := os.WriteFile(test, bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(runuser, "-u", "nobody", "--", test, "-test.run", "^"+t.Name()+"$", "-test.v", "-test.count=1")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "SQLITEJOURNAL_AS_NOBODY=1", "TMPDIR="+os.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s as nobody: %v\n%s", t.Name(), err, out)
	}
	if !strings.Contains(string(out), "--- PASS: "+t.Name()) {
		t.Fatalf("%s as nobody did not pass:\n%s", t.Name(), out)
	}
	t.Logf("passed as the user nobody; now as root, where mode=ro alone stops writes")
}
