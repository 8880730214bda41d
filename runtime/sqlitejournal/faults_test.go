package sqlitejournal_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/resumegen/resumegen/runtime/journaltest"
	"github.com/resumegen/resumegen/runtime/sqlitejournal"
)

// workerDBEnv names the journal file of a worker process.
const workerDBEnv = "SQLITEJOURNAL_WORKER_DB"

// TestCrashLoopProcesses queues 10 runs, the oldest of which ends its
// worker process at its first step, and restarts real worker processes
// when they die: the other 9 succeed, and the poison run is failed as a
// crash loop (issue 10 §3).
func TestCrashLoopProcesses(t *testing.T) {
	for _, die := range []string{"exit", "kill"} {
		t.Run(die, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "journal.db")
			j, err := sqlitejournal.Open(context.Background(), path)
			if err != nil {
				t.Fatal(err)
			}
			defer j.Close()
			n := journaltest.CrashLoopProcesses(t, j, die, workerOn(path))
			t.Logf("%d worker processes", n)
		})
	}
}

// TestQueueProcesses drains a queue with 3 real worker processes:
// journaltest.QueueProcesses (issue 22 §1).
func TestQueueProcesses(t *testing.T) {
	path := filepath.Join(t.TempDir(), "journal.db")
	j, err := sqlitejournal.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	journaltest.QueueProcesses(t, j, workerOn(path))
}

// TestQueueWorkerKilled SIGKILLs a worker process holding all of a
// queue's slots, and two others drain the queue:
// journaltest.QueueWorkerKilled.
func TestQueueWorkerKilled(t *testing.T) {
	path := filepath.Join(t.TempDir(), "journal.db")
	j, err := sqlitejournal.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	journaltest.QueueWorkerKilled(t, j, workerOn(path))
}

// workerOn starts this test binary as a worker process (TestWorkerProcess)
// on the journal at path, with env added to its environment.
func workerOn(path string) func(env []string) *exec.Cmd {
	return func(env []string) *exec.Cmd {
		cmd := exec.Command(os.Args[0], "-test.run=^TestWorkerProcess$", "-test.count=1")
		cmd.Env = append(append(os.Environ(), workerDBEnv+"="+path), env...)
		return cmd
	}
}

// TestWorkerProcess is a worker process of TestCrashLoopProcesses; run
// alone, it does nothing.
func TestWorkerProcess(t *testing.T) {
	if !journaltest.WorkerProcess() {
		t.Skip("a worker process of TestCrashLoopProcesses")
	}
	j, err := sqlitejournal.Open(context.Background(), os.Getenv(workerDBEnv))
	if err != nil {
		t.Fatal(err)
	}
	status := journaltest.WorkerMain(j)
	j.Close()
	os.Exit(status)
}
