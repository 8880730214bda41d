package journaltest

import (
	"bufio"
	"cmp"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/resumegen/resumegen/runtime/journal"
	"github.com/resumegen/resumegen/runtime/resume"
)

// queueLogEnv names the file a worker process's Queued runs append
// their starts and ends to, and queueLimitEnv the limits it configures
// ("CONCURRENCY/PERKEY").
const (
	queueLogEnv   = "JOURNALTEST_QUEUE_LOG"
	queueLimitEnv = "JOURNALTEST_QUEUE_LIMITS"
)

var queueLog sync.Mutex

// logQueued appends "start|end TAG KEY UNIXNANO" to the queue log, when
// the process has one.
func logQueued(what, tag, key string) {
	p := os.Getenv(queueLogEnv)
	if p == "" {
		return
	}
	queueLog.Lock()
	defer queueLog.Unlock()
	f, err := os.OpenFile(p, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		panic(err)
	}
	defer f.Close()
	if _, err := fmt.Fprintf(f, "%s %s %s %d\n", what, tag, key, time.Now().UnixNano()); err != nil {
		panic(err)
	}
}

// workerQueues is the limits a worker process configures (queueLimitEnv)
// and its concurrency: none and 1 without it.
func workerQueues() (opts []resume.Option, concurrency int) {
	v := os.Getenv(queueLimitEnv)
	if v == "" {
		return nil, 1
	}
	c, k, _ := strings.Cut(v, "/")
	conc, _ := strconv.Atoi(c)
	per, _ := strconv.Atoi(k)
	return []resume.Option{resume.WithQueues(resume.Queue{Name: SuiteQueue, Concurrency: conc, PerKey: per})}, 4
}

// QueueProcesses proves a queue's limits with real worker processes: 36
// runs of Queued (60 ms each) over three keys are drained by 3 worker
// processes (started by worker, each calling [WorkerMain] on j's
// database) of concurrency 4, under a limit of 4 runs of the queue and 2
// of a key. From the starts and ends the processes logged: never more
// than 4 runs of the queue, nor 2 of a key, executed at once, across the
// processes; every run executed once; and the limit was reached (the
// case is not vacuous).
func QueueProcesses(t *testing.T, j journal.Journal, worker func(env []string) *exec.Cmd) {
	t.Helper()
	const runs, limit, perKey = 36, 4, 2
	enqueueQueued(t, j, "procs", runs, 60*time.Millisecond)
	log, env := queueWorkerEnv(t, limit, perKey)
	runWorkers(t, "", 3, func() *exec.Cmd { return worker(env) })
	events := readQueueLog(t, log)
	most, started := checkQueueLimits(t, events, limit, perKey)
	if len(started) != runs || most < limit-1 {
		t.Fatalf("%d runs started (want %d), at most %d at once (want the limit %d approached)", len(started), runs, most, limit)
	}
	for tag, n := range started {
		if n != 1 {
			t.Fatalf("run %s executed %d times", tag, n)
		}
	}
	t.Logf("3 worker processes of 4: at most %d runs of the queue at once (limit %d), %d events", most, limit, len(events))
}

// queueEvent is a line of the queue log: a run's execution starting or
// ending.
type queueEvent struct {
	at    int64 // Unix nanoseconds
	start bool
	tag   string
	key   string
}

// readQueueLog reads the queue log at path.
func readQueueLog(t *testing.T, path string) []queueEvent {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var events []queueEvent
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var what, tag, key string
		var at int64
		if _, err := fmt.Sscanf(sc.Text(), "%s %s %s %d", &what, &tag, &key, &at); err != nil {
			t.Fatalf("queue log line %q: %v", sc.Text(), err)
		}
		events = append(events, queueEvent{at, what == "start", tag, key})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return events
}

// checkQueueLimits fails t if, by events, more than limit executions of
// the queue, or perKey of a key, overlapped at any instant. It returns
// the most that did, and the number of executions of each run.
func checkQueueLimits(t *testing.T, events []queueEvent, limit, perKey int) (most int, started map[string]int) {
	t.Helper()
	// An end and a start at one instant: the end first (the slot freed).
	slices.SortStableFunc(events, func(a, b queueEvent) int {
		if a.at != b.at {
			return cmp.Compare(a.at, b.at)
		}
		if a.start == b.start {
			return 0
		}
		if a.start {
			return 1
		}
		return -1
	})
	cur := 0
	byKey := map[string]int{}
	started = map[string]int{}
	for _, ev := range events {
		if !ev.start {
			cur--
			byKey[ev.key]--
			continue
		}
		cur++
		byKey[ev.key]++
		started[ev.tag]++
		most = max(most, cur)
		if cur > limit || byKey[ev.key] > perKey {
			t.Fatalf("at %s: %d runs of the queue and %d of key %s executing at once; want at most %d and %d",
				time.Unix(0, ev.at).Format("15:04:05.000000"), cur, byKey[ev.key], ev.key, limit, perKey)
		}
	}
	return most, started
}

// QueueWorkerKilled kills a worker process that holds a queue's every
// slot: 12 runs of Queued (600 ms each) over three keys, under a limit of
// 3 runs of the queue and 2 of a key. One worker process (concurrency 4)
// starts alone and is SIGKILLed once it executes 3 runs; two others then
// drain the queue. From the starts and ends logged (the killed
// process's open executions ending at its death): never more than 3 runs
// of the queue, nor 2 of a key, executed at once across the processes,
// counting the runs the dead process held until others took them over;
// every run succeeded; the 3 runs the killed process held executed
// twice, every other run once.
func QueueWorkerKilled(t *testing.T, j journal.Journal, worker func(env []string) *exec.Cmd) {
	t.Helper()
	ctx := context.Background()
	const runs, limit, perKey = 12, 3, 2
	ids := enqueueQueued(t, j, "killed", runs, 600*time.Millisecond)
	log, env := queueWorkerEnv(t, limit, perKey)

	first := worker(env)
	var firstOut strings.Builder
	first.Stdout, first.Stderr = &firstOut, &firstOut
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	open := func() map[string]queueEvent {
		if _, err := os.Stat(log); err != nil {
			return nil
		}
		o := map[string]queueEvent{}
		for _, ev := range readQueueLog(t, log) {
			if ev.start {
				o[ev.tag] = ev
			} else {
				delete(o, ev.tag)
			}
		}
		return o
	}
	deadline := time.Now().Add(30 * time.Second)
	for len(open()) < limit {
		if time.Now().After(deadline) {
			first.Process.Kill()
			first.Wait()
			t.Fatalf("the first worker did not fill the queue's %d slots in 30s:\n%s", limit, firstOut.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := first.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	first.Wait()
	died := time.Now().UnixNano()
	orphans := open()
	if len(orphans) != limit {
		t.Fatalf("the killed worker held %d runs at its death, want the limit %d", len(orphans), limit)
	}

	runWorkers(t, " after the kill", 2, func() *exec.Cmd { return worker(env) })
	events := readQueueLog(t, log)
	for _, o := range orphans {
		events = append(events, queueEvent{at: died, tag: o.tag, key: o.key})
	}
	most, started := checkQueueLimits(t, events, limit, perKey)
	var retaken []time.Duration // from the death to each held run's second start
	for _, ev := range events {
		if _, held := orphans[ev.tag]; held && ev.start && ev.at > died {
			retaken = append(retaken, time.Duration(ev.at-died))
		}
	}
	slices.Sort(retaken)
	for _, id := range ids {
		r, _, err := j.LoadRun(ctx, id)
		if err != nil || r.Status != journal.StatusSucceeded {
			t.Errorf("run %s: %s, %v; want succeeded", id, r.Status, err)
		}
		want := 1
		if _, held := orphans[id]; held {
			want = 2
		}
		if started[id] != want {
			t.Errorf("run %s executed %d times, want %d (held by the killed worker: %v)", id, started[id], want, want == 2)
		}
	}
	t.Logf("worker killed holding %d runs, taken over %v after its death; at most %d runs of the queue at once (limit %d), %d events",
		len(orphans), retaken, most, limit, len(events))
}

// runWorkers runs n worker processes at once, each until it exits, and
// fails t if one did not exit cleanly (when names them in the message).
func runWorkers(t *testing.T, when string, n int, worker func() *exec.Cmd) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make([]error, n)
	outs := make([][]byte, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			outs[i], errs[i] = worker().CombinedOutput()
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("worker process %d%s: %v\n%s", i+1, when, err, outs[i])
		}
	}
}

// CheckReadOnlyQueues checks ro, a read-only handle of a journal whose
// writer configured queue "emails" (concurrency 3, by "worker-1") and
// created one pending run of it under one key: ro lists that queue with
// its run (resumectl queues list reads through such a handle), and
// refuses to store limits.
func CheckReadOnlyQueues(t *testing.T, ro journal.Journal) {
	t.Helper()
	ctx := context.Background()
	q, ok := journal.Find[journal.Queuer](ro)
	if !ok {
		t.Fatalf("%T: no journal.Queuer: resumectl queues list cannot read it", ro)
	}
	qs, err := q.ListQueues(ctx)
	if err != nil || len(qs) != 1 || qs[0].Limits.Name != "emails" || qs[0].Limits.Concurrency != 3 || qs[0].Pending != 1 || qs[0].Keys != 1 ||
		qs[0].ConfiguredBy != "worker-1" {
		t.Errorf("ListQueues = %+v, %v; want emails, concurrency 3, one run pending of one key, configured by worker-1", qs, err)
	}
	if _, err := q.ConfigureQueues(ctx, "intruder", []journal.QueueLimits{{Name: "emails", Concurrency: 100}}); err == nil {
		t.Error("ConfigureQueues through a read-only journal succeeded")
	}
}

// enqueueQueued enqueues runs runs of Queued over three keys, each
// holding its slot for hold, and returns their ids (also their tags).
func enqueueQueued(t *testing.T, j journal.Journal, prefix string, runs int, hold time.Duration) []string {
	t.Helper()
	ctx := context.Background()
	e := resume.NewEngine(j)
	g := fmt.Sprintf("%s-%d", prefix, time.Now().UnixNano())
	var ids []string
	for i := range runs {
		id := fmt.Sprintf("%s-%02d", g, i)
		key := fmt.Sprint("tenant-", i%3)
		if _, err := e.Enqueue(resume.WithQueueKey(ctx, key), id, Queued, QueuedIn{Gauge: g, Hold: hold, Tag: id, Key: key}); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	return ids
}

// queueWorkerEnv is the environment of worker processes that log to a new
// queue log (returned) under limits of limit runs and perKey a key.
func queueWorkerEnv(t *testing.T, limit, perKey int) (log string, env []string) {
	log = filepath.Join(t.TempDir(), "queue.log")
	return log, []string{workerEnv + "=1", queueLogEnv + "=" + log, fmt.Sprintf("%s=%d/%d", queueLimitEnv, limit, perKey)}
}
