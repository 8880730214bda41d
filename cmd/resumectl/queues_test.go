package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/resumegen/resumegen/runtime/journal"
	"github.com/resumegen/resumegen/runtime/sqlitejournal"
)

// TestQueuesList lists queues, with their stored limits and their runs
// pending by key, in a table and as JSON, read-only; a queue no engine
// configured but with runs is listed unlimited.
func TestQueuesList(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "j.db")
	j, err := sqlitejournal.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	code, out, _ := ctl(t, "queues", "list", "-db", path)
	if code != exitOK || strings.TrimSpace(out) != "no queues" {
		t.Fatalf("empty journal: %d %q", code, out)
	}
	if _, err := j.ConfigureQueues(ctx, "worker-1", []journal.QueueLimits{{Name: "emails", Concurrency: 20, PerKey: 2, Rate: 100, Per: time.Minute}}); err != nil {
		t.Fatal(err)
	}
	created := time.Now().Add(-time.Hour).UTC().Truncate(time.Second)
	for i, r := range []struct{ queue, key string }{{"emails", "acme"}, {"emails", "acme"}, {"emails", "globex"}, {"reports", ""}} {
		at := created.Add(time.Duration(i) * time.Minute)
		if _, _, err := j.CreateRun(ctx, journal.RunRecord{RunID: "r" + string(rune('0'+i)), Workflow: "example.com/app.Send", Version: "v1",
			Status: journal.StatusPending, Input: json.RawMessage("[]"), CreatedAt: at, UpdatedAt: at, Queue: r.queue, QueueKey: r.key}); err != nil {
			t.Fatal(err)
		}
	}
	j.Close()

	code, out, errOut := ctl(t, "queues", "list", "-db", path)
	if code != exitOK {
		t.Fatalf("queues list: %d %s", code, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 || !strings.Contains(lines[0], "QUEUE") {
		t.Fatalf("table:\n%s", out)
	}
	for _, want := range []string{"emails", "concurrency=20 per-key=2 rate=100/1m0s", created.Format(time.RFC3339), "0 of 100 in 1m0s", "worker-1"} {
		if !strings.Contains(lines[1], want) {
			t.Errorf("emails row %q lacks %q", lines[1], want)
		}
	}
	if f := strings.Fields(lines[1]); f[4] != "3" || f[5] != "0" || f[6] != "0" || f[7] != "2" {
		t.Errorf("emails row %q: want 3 pending, 0 running, 0 waiting, 2 keys", lines[1])
	}
	if !strings.HasPrefix(lines[2], "reports") || !strings.Contains(lines[2], "unlimited") {
		t.Errorf("reports row %q: want the queue no engine configured, unlimited", lines[2])
	}

	code, out, errOut = ctl(t, "queues", "list", "-db", path, "-json")
	if code != exitOK {
		t.Fatalf("queues list -json: %d %s", code, errOut)
	}
	var got []queueJSON
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("-json: %v\n%s", err, out)
	}
	if len(got) != 2 || got[0].Name != "emails" || got[0].Concurrency != 20 || got[0].PerKey != 2 || got[0].Rate != 100 || got[0].Per != "1m0s" ||
		got[0].Pending != 3 || got[0].Keys != 2 || got[0].OldestPending == nil || !got[0].OldestPending.Equal(created) ||
		got[0].ConfiguredBy != "worker-1" || got[0].ConfiguredAt == nil {
		t.Fatalf("-json emails: %+v", got)
	}
	if got[1].Name != "reports" || got[1].Concurrency != 0 || got[1].Per != "" || got[1].ConfiguredAt != nil || got[1].Pending != 1 || got[1].Keys != 1 {
		t.Fatalf("-json reports: %+v", got[1])
	}
	if code, _, errOut := ctl(t, "queues", "list", "extra", "-db", path); code != exitUsage {
		t.Fatalf("queues list extra: %d %s; want a usage error", code, errOut)
	}
	if code, _, errOut := ctl(t, "queues"); code != exitUsage || !strings.Contains(errOut, "queues: missing subcommand") {
		t.Fatalf("queues: %d %s", code, errOut)
	}
}
