package main

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/resumegen/resumegen/internal/pgtest"
	"github.com/resumegen/resumegen/runtime/journal"
	"github.com/resumegen/resumegen/runtime/resume"
	"github.com/resumegen/resumegen/runtime/sqlitejournal"
)

// ctl runs resumectl in this process and returns its exit status and
// output.
func ctl(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

// snapshot is a file's bytes and mode and its folder's names.
func snapshot(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(path)
	ents, _ := os.ReadDir(filepath.Dir(path))
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return fi.Mode().String() + " " + strings.Join(names, ",") + "\n" + string(b)
}

// TestReadingNeverWrites is issue 10's attack: runs list on an unrelated
// SQLite database created four resume_* tables and switched it to WAL.
// Every command on it now says there is no journal, exits 2, and leaves
// the file as it was; -db naming a directory says so (it said "out of
// memory (14)").
func TestReadingNeverWrites(t *testing.T) {
	path := filepath.Join(t.TempDir(), "app.db")
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TABLE orders (id INTEGER PRIMARY KEY); INSERT INTO orders VALUES (1)`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	before := snapshot(t, path)
	for _, args := range [][]string{
		{"runs", "list"}, {"runs", "show", "r1"}, {"runs", "list", "-json"},
		{"runs", "retry", "r1"}, {"runs", "cancel", "r1"}, {"runs", "resolve", "r1", "S", "-redo"}, {"runs", "accept-version", "r1"},
	} {
		code, _, stderr := ctl(t, append(args, "-db", path)...)
		if code != exitUsage || !strings.Contains(stderr, "no resumegen journal") {
			t.Errorf("%v on an unrelated database: exit %d, %q; want 2 and no journal", args, code, stderr)
		}
	}
	if after := snapshot(t, path); after != before {
		t.Errorf("resumectl changed an unrelated database:\nbefore %q\nafter  %q", before[:40], after[:40])
	}
	dir := t.TempDir()
	for _, args := range [][]string{{"runs", "list"}, {"runs", "retry", "r1"}} {
		code, _, stderr := ctl(t, append(args, "-db", dir)...)
		if code == exitOK || !strings.Contains(stderr, "is a directory") {
			t.Errorf("%v on a directory: exit %d, %q; want an error saying it is a directory", args, code, stderr)
		}
	}
}

// TestReadingNeverWritesPostgres: on an empty PostgreSQL database runs
// list created the journal's tables. It now exits 2, creating nothing.
func TestReadingNeverWritesPostgres(t *testing.T) {
	dsn := pgtest.FreshDatabase(t)
	for _, args := range [][]string{{"runs", "list"}, {"runs", "show", "r1"}, {"runs", "retry", "r1"}} {
		code, _, stderr := ctl(t, append(args, "-db", dsn)...)
		if code != exitUsage || !strings.Contains(stderr, "no resumegen journal") {
			t.Errorf("%v on an empty database: exit %d, %q; want 2 and no journal", args, code, stderr)
		}
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var n int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM pg_tables WHERE schemaname NOT IN ('pg_catalog', 'information_schema')`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Errorf("resumectl created %d tables in an empty database", n)
	}
}

// TestHostileValuesEscaped is issue 10's attack: a run id holding escape
// sequences forged a table row and retitled the terminal. Every control
// character is now escaped, in tables, free text and errors. The rows are
// written by hand, as a journal edited or written by another program may
// hold them: the journal itself refuses an id that is not valid UTF-8
// (the lone \x9b), as PostgreSQL does.
func TestHostileValuesEscaped(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "journal.db")
	j, err := sqlitejournal.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	evil := "evil\x1b]0;pwned\x07\nforged-run  w  v  succeeded\t-\x1b[2J\u202e\x9b"
	now := time.Now().Add(-time.Minute)
	if _, _, err := j.CreateRun(ctx, journal.RunRecord{RunID: evil, Workflow: "w", Version: "v1", Input: []byte(`[]`),
		CreatedAt: now, UpdatedAt: now}); !errors.Is(err, journal.ErrLimit) {
		t.Fatalf("CreateRun of an id that is not valid UTF-8: %v, want refused (journal.ErrLimit)", err)
	}
	for _, id := range []string{evil, "plain"} {
		at := now.UTC().Format("2006-01-02T15:04:05.000000Z")
		if _, err := j.DB().ExecContext(ctx, `INSERT INTO resume_runs (run_id, workflow, version, status, input, created_at, updated_at)
			VALUES (?, ?, ?, 'pending', ?, ?, ?)`, id, "example.com/app."+evil, "v1\n"+evil,
			`["`+strings.ReplaceAll(evil, "\n", `\n`)+`"]`, at, at); err != nil {
			t.Fatal(err)
		}
	}
	j.Close()
	check := func(what, out string, lines int) {
		t.Helper()
		if strings.ContainsAny(out, "\x1b\x07\r\u202e\u009b") {
			t.Errorf("%s: a control character reached the terminal:\n%q", what, out)
		}
		if got := strings.Count(out, "\n"); lines >= 0 && got != lines {
			t.Errorf("%s: %d lines, want %d (a value forged a line):\n%s", what, got, lines, out)
		}
	}
	code, out, stderr := ctl(t, "runs", "list", "-db", path)
	if code != exitOK {
		t.Fatalf("runs list: exit %d: %s", code, stderr)
	}
	check("runs list", out, 3) // the header and two runs
	if !strings.Contains(out, `evil\u001b]0;pwned\u0007\nforged-run`) {
		t.Errorf("runs list does not show the id escaped:\n%s", out)
	}
	code, out, stderr = ctl(t, "runs", "show", evil, "-db", path)
	if code != exitOK {
		t.Fatalf("runs show: exit %d: %s", code, stderr)
	}
	check("runs show", out, -1)
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "forged") {
			t.Errorf("runs show printed a forged line: %q", l)
		}
	}
	code, out, stderr = ctl(t, "runs", "show", evil+"-missing", "-db", path)
	if code != exitFail {
		t.Errorf("runs show of a missing hostile id: exit %d", code)
	}
	check("runs show's error", out+stderr, 1)
	code, out, stderr = ctl(t, "runs", "list", "-json", "-db", path)
	if code != exitOK {
		t.Fatalf("runs list -json: exit %d: %s", code, stderr)
	}
	check("runs list -json", out, -1)
	if !strings.Contains(out, `\u001b]0;pwned\u0007\n`) {
		t.Errorf("runs list -json does not keep the id, escaped as JSON:\n%s", out)
	}
}

// TestEncryptedValuesShown: a journal written through resume.WithCodec
// holds sealed values; resumectl, which has no key, shows them as
// (encrypted) rather than failing or printing ciphertext.
func TestEncryptedValuesShown(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "journal.db")
	raw, err := sqlitejournal.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	codec, err := resume.NewAESGCMCodec([]byte("0123456789abcdef"))
	if err != nil {
		t.Fatal(err)
	}
	j := resume.SealJournal(raw, codec)
	now := time.Now()
	if _, _, err := j.CreateRun(ctx, journal.RunRecord{RunID: "r1", Workflow: "example.com/app.Onboard", Version: "v1",
		Input: []byte(`[{"email":"ada@example.com"}]`), LeaseOwner: "me", LeaseUntil: now.Add(time.Minute), CreatedAt: now, UpdatedAt: now}); err != nil {
		t.Fatal(err)
	}
	l := journal.Lease{RunID: "r1", Owner: "me", Epoch: 1}
	if err := j.WriteStep(ctx, l, journal.StepRecord{RunID: "r1", StepKey: "Fetch", Name: "Fetch", Status: journal.StepFailed,
		Error: "lookup ada@example.com: refused", Attempt: 1, Seq: 1, StartedAt: now, FinishedAt: now, Final: true,
		History: []journal.AttemptRecord{{Attempt: 1, StartedAt: now, Error: "lookup ada@example.com: refused"}}}); err != nil {
		t.Fatal(err)
	}
	if err := j.FinishRun(ctx, l, journal.RunRecord{RunID: "r1", Status: journal.StatusFailed, Error: "lookup ada@example.com: refused",
		FailedStep: "Fetch", UpdatedAt: now}); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	code, out, stderr := ctl(t, "runs", "show", "r1", "-db", path)
	if code != exitOK {
		t.Fatalf("runs show: exit %d: %s", code, stderr)
	}
	if strings.Contains(out, "ada@") || strings.Contains(out, "resume:sealed") {
		t.Errorf("runs show printed a sealed value:\n%s", out)
	}
	if n := strings.Count(out, encrypted); n < 4 { // input, error, the step's error, its failed attempt
		t.Errorf("runs show says (encrypted) %d times, want 4 or more:\n%s", n, out)
	}
}
