package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDefaultWorldWithPostgres is issue 10's attack: onboard -db
// postgres://... -outbox DIR without -world panicked at the first step,
// as the default world folder (./onboard-world) was never created.
func TestDefaultWorldWithPostgres(t *testing.T) {
	dsn := freshDatabase(t)
	dir := t.TempDir()
	t.Chdir(dir)
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"-db", dsn, "-outbox", filepath.Join(dir, "mail"), "-run", "world-1"}, &out, &errb)
	if code != 0 {
		t.Fatalf("onboard: exit %d\n%s%s", code, out.String(), errb.String())
	}
	if _, err := os.Stat(filepath.Join(dir, "onboard-world", "effects.log")); err != nil {
		t.Errorf("the default world's effects log: %v", err)
	}
}

// TestWorldThatCannotBeMade: a -world that cannot be a folder (a file is
// in the way) is an error before any step runs, not a panic inside one.
func TestWorldThatCannotBeMade(t *testing.T) {
	dir := t.TempDir()
	blocker := filepath.Join(dir, "not-a-folder")
	if err := os.WriteFile(blocker, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"-db", filepath.Join(dir, "j.db"), "-world", filepath.Join(blocker, "world"), "-run", "w-1"}, &out, &errb)
	if code != 1 || !strings.Contains(errb.String(), "world folder") {
		t.Errorf("onboard with an impossible -world: exit %d, %q; want 1 and an error naming the world folder", code, errb.String())
	}
}
