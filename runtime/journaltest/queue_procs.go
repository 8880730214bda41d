package journaltest

import (
	"bufio"
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
	ctx := context.Background()
	const runs, limit, perKey = 36, 4, 2
	e := resume.NewEngine(j)
	g := fmt.Sprintf("procs-%d", time.Now().UnixNano())
	for i := range runs {
		id := fmt.Sprintf("%s-%02d", g, i)
		key := fmt.Sprint("tenant-", i%3)
		if _, err := e.Enqueue(resume.WithQueueKey(ctx, key), id, Queued, QueuedIn{Gauge: g, Hold: 60 * time.Millisecond, Tag: id, Key: key}); err != nil {
			t.Fatal(err)
		}
	}
	log := filepath.Join(t.TempDir(), "queue.log")
	env := []string{workerEnv + "=1", queueLogEnv + "=" + log, fmt.Sprintf("%s=%d/%d", queueLimitEnv, limit, perKey)}
	var wg sync.WaitGroup
	errs := make([]error, 3)
	outs := make([][]byte, 3)
	for i := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			outs[i], errs[i] = worker(env).CombinedOutput()
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("worker process %d: %v\n%s", i+1, err, outs[i])
		}
	}
	f, err := os.Open(log)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	type event struct {
		at    int64
		start bool
		tag   string
		key   string
	}
	var events []event
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var what, tag, key string
		var at int64
		if _, err := fmt.Sscanf(sc.Text(), "%s %s %s %d", &what, &tag, &key, &at); err != nil {
			t.Fatalf("queue log line %q: %v", sc.Text(), err)
		}
		events = append(events, event{at, what == "start", tag, key})
	}
	// An end and a start at one instant: the end first (the slot freed).
	slices.SortStableFunc(events, func(a, b event) int {
		if a.at != b.at {
			return int(a.at - b.at)
		}
		if a.start == b.start {
			return 0
		}
		if a.start {
			return 1
		}
		return -1
	})
	cur, most := 0, 0
	byKey := map[string]int{}
	started := map[string]int{}
	for _, ev := range events {
		if ev.start {
			cur++
			byKey[ev.key]++
			started[ev.tag]++
			most = max(most, cur)
			if cur > limit || byKey[ev.key] > perKey {
				t.Fatalf("at %s: %d runs of the queue and %d of key %s executing at once; want at most %d and %d",
					time.Unix(0, ev.at).Format("15:04:05.000000"), cur, byKey[ev.key], ev.key, limit, perKey)
			}
		} else {
			cur--
			byKey[ev.key]--
		}
	}
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
