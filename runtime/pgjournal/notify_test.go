package pgjournal_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/resumegen/resumegen/runtime/journal"
	"github.com/resumegen/resumegen/runtime/journaltest"
	"github.com/resumegen/resumegen/runtime/pgjournal"
	"github.com/resumegen/resumegen/runtime/resume"
)

// waitStatus waits up to 30s for run id to reach status s.
func waitStatus(t *testing.T, j journal.Journal, id string, s journal.Status) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		r, _, err := j.LoadRun(context.Background(), id)
		if err == nil && r.Status == s {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("run %s: %s after 30s (err %v), want %s", id, r.Status, err, s)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// An idle worker polling once an hour still starts an enqueued run at
// once: the journal's trigger notifies, and the worker listens.
func TestIdleWorkerWakesOnEnqueue(t *testing.T) {
	ctx := context.Background()
	pool := testPool(t)
	j, err := pgjournal.Open(ctx, pool, pgjournal.WithSchema(freshSchema(t, pool)))
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	// The worker enqueues through another journal value, as another
	// process would.
	producer, err := pgjournal.Open(ctx, pool, pgjournal.WithSchema(j.Schema()))
	if err != nil {
		t.Fatal(err)
	}
	if err := journaltest.StartBenchRun(ctx, resume.NewEngine(producer), resume.PolicyDefault, 1); err != nil {
		t.Fatal(err) // sets the bench workflow's policy for the runs below
	}
	wctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		done <- resume.NewEngine(j).Work(wctx, resume.WorkerOptions{PollInterval: time.Hour})
	}()
	defer func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("work: %v", err)
		}
	}()
	if _, err := j.NotifyWork(ctx); err != nil { // the worker's listener is up
		t.Fatalf("notify work: %v", err)
	}
	time.Sleep(50 * time.Millisecond) // the worker found nothing and waits
	for i := range 3 {
		id := fmt.Sprintf("wake-%d", i)
		t0 := time.Now()
		if _, err := resume.NewEngine(producer).Enqueue(ctx, id, journaltest.BenchFlow, 1); err != nil {
			t.Fatal(err)
		}
		waitStatus(t, j, id, journal.StatusSucceeded) // long before the hour
		t.Logf("run %s enqueued and done in %v", id, time.Since(t0).Round(time.Millisecond))
	}
}

// The channel the migration's trigger notifies is the one NotifyWork
// listens on, whatever the schema's name (a channel name is limited to 63
// bytes; a schema's may be as long).
func TestNotifyWorkLongSchemaName(t *testing.T) {
	ctx := context.Background()
	pool := testPool(t)
	long := freshSchema(t, pool) + "_padded_to_the_sixty_three_byte_limit_of_names"
	if len(long) > 63 {
		long = long[:63]
	}
	t.Cleanup(func() { pool.Exec(context.Background(), `DROP SCHEMA IF EXISTS "`+long+`" CASCADE`) })
	j, err := pgjournal.Open(ctx, pool, pgjournal.WithSchema(long))
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	wake, err := j.NotifyWork(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := resume.NewEngine(j).Enqueue(ctx, "long", journaltest.BenchFlow, 1); err != nil {
		t.Fatal(err)
	}
	select {
	case <-wake:
	case <-time.After(30 * time.Second):
		t.Fatal("no notification for a run enqueued in a schema with a long name")
	}
	// A closed journal stops listening and says so.
	j.Close()
	if _, err := j.NotifyWork(ctx); err == nil {
		t.Error("NotifyWork after Close: no error")
	}
}

// A listening connection the server drops is reopened: workers are woken
// to look again (a notification may have been lost meanwhile), and later
// runs are signalled as before.
func TestNotifyWorkSurvivesLostConnection(t *testing.T) {
	ctx := context.Background()
	pool := testPool(t)
	j, err := pgjournal.Open(ctx, pool, pgjournal.WithSchema(freshSchema(t, pool)))
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	wake, err := j.NotifyWork(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var killed int
	// Only this journal's listener: other packages' tests share the server.
	listen := "LISTEN " + pgx.Identifier{pgjournal.WorkChannel(j.Schema())}.Sanitize()
	if err := pool.QueryRow(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
		WHERE query = $1 AND pid <> pg_backend_pid()`, listen).Scan(&killed); err != nil || killed != 1 {
		t.Fatalf("terminating the listener: %d terminated, %v", killed, err)
	}
	select {
	case <-wake:
	case <-time.After(30 * time.Second):
		t.Fatal("a lost listening connection woke nobody")
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		if wake, err = j.NotifyWork(ctx); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("not listening again after 30s: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if _, err := resume.NewEngine(j).Enqueue(ctx, "after-reconnect", journaltest.BenchFlow, 1); err != nil {
		t.Fatal(err)
	}
	select {
	case <-wake:
	case <-time.After(30 * time.Second):
		t.Fatal("no notification after the listener reconnected")
	}
}
