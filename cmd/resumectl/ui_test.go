package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/resumegen/resumegen/runtime/journal"
	"github.com/resumegen/resumegen/runtime/sqlitejournal"
)

func TestUIRefusesANonLoopbackAddress(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:8080", ":8080", "192.0.2.1:8080", "[::]:8080"} {
		code, _, stderr := ctl(t, "ui", "-db", "/nonexistent.db", "-addr", addr)
		if code != exitUsage || !strings.Contains(stderr, "not a loopback address") || !strings.Contains(stderr, "-public") {
			t.Errorf("ui -addr %s: exit %d, %q; want 2, refused as not loopback, naming -public", addr, code, stderr)
		}
	}
}

// lockedBuffer is a bytes.Buffer safe for the server goroutine and the test.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}
func (l *lockedBuffer) String() string { l.mu.Lock(); defer l.mu.Unlock(); return l.b.String() }

// TestUIServesReadOnly: without -write, ui shows runs, renders no action,
// refuses every POST and leaves the journal's file as it was (a
// read-only open of a WAL journal may add its -wal and -shm files, as
// runs list does).
func TestUIServesReadOnly(t *testing.T) {
	path := filepath.Join(t.TempDir(), "runs.db")
	j, err := sqlitejournal.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	if _, _, err := j.CreateRun(context.Background(), journal.RunRecord{RunID: "r<1>", Workflow: "example.com/w.W", Version: "v1", Input: []byte("[]"), CreatedAt: now, UpdatedAt: now}); err != nil {
		t.Fatal(err)
	}
	j.Close()
	before, _ := os.ReadFile(path)
	ctx, cancel := context.WithCancel(context.Background())
	var out, errb lockedBuffer
	done := make(chan int)
	go func() { done <- run(ctx, []string{"ui", "-db", path, "-addr", "127.0.0.1:0"}, &out, &errb) }()
	addr := regexp.MustCompile(`http://127\.0\.0\.1:\d+/`)
	deadline := time.Now().Add(10 * time.Second)
	for addr.FindString(out.String()) == "" && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	root := addr.FindString(out.String())
	if root == "" {
		cancel()
		t.Fatalf("ui printed no address: %q %q", out.String(), errb.String())
	}
	resp, err := http.Get(root + "run?id=" + url.QueryEscape("r<1>"))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), "r&lt;1&gt;") || strings.Contains(string(body), `action="action"`) {
		t.Errorf("GET the run: %d, escaped id %v, action form %v; want 200, the id escaped, no action", resp.StatusCode,
			strings.Contains(string(body), "r&lt;1&gt;"), strings.Contains(string(body), `action="action"`))
	}
	resp, err = http.PostForm(root+"action", url.Values{"action": {"cancel"}, "id": {"r<1>"}, "confirm": {"yes"}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("POST to a read-only ui = %d; want 403", resp.StatusCode)
	}
	cancel()
	if code := <-done; code != exitOK {
		t.Errorf("ui stopped with exit %d (%s); want 0", code, errb.String())
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(after, before) {
		t.Errorf("a read-only ui changed the journal's file")
	}
}
