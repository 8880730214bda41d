package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/resumegen/resumegen/runtime/resume"
)

// Liveness with real processes (issue 10 §1): a worker whose pid means
// nothing here (another PID namespace) is alive while it lives, and a
// killed worker that is still a zombie is dead. Both journals: SQLite
// takes a killed worker's run over at once (the kernel released its
// flock); PostgreSQL once its lease expired (issue 19: no session proves
// a process dead, so a killed process, which says nothing, has its lease
// waited out), which these tests make 3 s there.

// takeoverLease is the lease of the killed worker of each journal, and
// takeoverWithin how long its run may wait after the kill.
var (
	takeoverLease  = map[string]string{"sqlite": "30s", "postgres": "3s"}
	takeoverWithin = map[string]time.Duration{"sqlite": 10 * time.Second, "postgres": 3*time.Second + 10*time.Second}
)

// leaseUntil reads the run's lease expiry, by the journal's clock.
func leaseUntil(t *testing.T, db, id string) time.Time {
	t.Helper()
	j, _, err := openJournal(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	r, _, err := j.LoadRun(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return r.LeaseUntil
}

// firstStart returns when a process other than pid first started a step of
// run id, by the effects log (zero if none did).
func firstStart(t *testing.T, dir, id string, pid int) time.Time {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "effects.log"))
	if err != nil {
		t.Fatal(err)
	}
	var first time.Time
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.Fields(l)
		if len(f) != 6 || f[1] != "run="+id || !strings.HasPrefix(f[5], "start=") || f[4] == fmt.Sprintf("pid=%d", pid) {
			continue
		}
		ns, _ := strconv.ParseInt(strings.TrimPrefix(f[5], "start="), 10, 64)
		if at := time.Unix(0, ns); first.IsZero() || at.Before(first) {
			first = at
		}
	}
	return first
}

// journals returns the journal DSN of each kind for a test: a SQLite file
// in dir, and a fresh PostgreSQL database (skipped without a server).
func journals(t *testing.T) map[string]func(t *testing.T, dir string) string {
	return map[string]func(t *testing.T, dir string) string{
		"sqlite":   func(t *testing.T, dir string) string { return filepath.Join(dir, "journal.db") },
		"postgres": func(t *testing.T, dir string) string { return freshDatabase(t) },
	}
}

// worker is an example process started by a liveness test.
type worker struct {
	cmd    *exec.Cmd
	exited chan struct{} // closed once reaped
	log    string
	reap   func() // for a worker started with noReap: reap it now
}

// wait reaps the process (once) and waits for it.
func (w *worker) wait() { <-w.exited }

// startProc starts argv, logging to dir/name.log; a goroutine reaps it
// when it ends unless noReap (the test reaps it with reap).
func startProc(t *testing.T, dir, name string, noReap bool, argv ...string) *worker {
	t.Helper()
	logPath := filepath.Join(dir, name+".log")
	logf, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	logf.Close()
	w := &worker{cmd: cmd, exited: make(chan struct{}), log: logPath}
	var reaped atomic.Bool
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		if noReap && reaped.CompareAndSwap(false, true) {
			go func() { _ = cmd.Wait(); close(w.exited) }() // the test failed before it reaped
		}
		w.wait()
	})
	if noReap {
		w.reap = func() {
			if reaped.CompareAndSwap(false, true) {
				go func() { _ = cmd.Wait(); close(w.exited) }()
			}
		}
	} else {
		go func() { _ = cmd.Wait(); close(w.exited) }()
	}
	return w
}

// effectPids returns the pids that logged a start of a step of run id.
func effectPids(t *testing.T, dir, id string) map[int]int {
	t.Helper()
	pids := map[int]int{}
	b, err := os.ReadFile(filepath.Join(dir, "effects.log"))
	if os.IsNotExist(err) {
		return pids
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.Fields(l)
		if len(f) == 6 && f[1] == "run="+id && strings.HasPrefix(f[5], "start=") {
			pid, _ := strconv.Atoi(strings.TrimPrefix(f[4], "pid="))
			pids[pid]++
		}
	}
	return pids
}

// waitUntil polls cond every 20ms for up to d.
func waitUntil(d time.Duration, cond func() bool) bool {
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		if cond() {
			return true
		}
	}
	return cond()
}

func runStatus(t *testing.T, db, id string) resume.Status {
	t.Helper()
	j, _, err := openJournal(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	r, _, err := j.LoadRun(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return r.Status
}

// TestZombieOwnerIsTakenOver kills a worker in the middle of a run and
// leaves it a zombie (not reaped): on SQLite the run is resumed by another
// process at once, not after its 30s lease (before issue 10, kill(pid, 0)
// saw the zombie as alive and the lease was waited out); on PostgreSQL
// once its 3s lease expired, and not before.
func TestZombieOwnerIsTakenOver(t *testing.T) {
	for kind, open := range journals(t) {
		t.Run(kind, func(t *testing.T) {
			dir := t.TempDir()
			db := open(t, dir)
			args := func(extra ...string) []string {
				return append([]string{binary, "-db", db, "-world", dir}, extra...)
			}
			if out, err := exec.Command(binary, args("-run", "z", "-enqueue", "1")[1:]...).CombinedOutput(); err != nil {
				t.Fatalf("enqueue: %v\n%s", err, out)
			}
			a := startProc(t, dir, "a", true, args("-run", "z", "-worker", "-lease", takeoverLease[kind], "-step-delay", "5s")...)
			if !waitUntil(20*time.Second, func() bool { return effectPids(t, dir, "z-1")[a.cmd.Process.Pid] > 0 }) {
				t.Fatal("worker a never started a step")
			}
			// SIGKILL without reaping: a zombie until cmd.Wait.
			pid := a.cmd.Process.Pid
			if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			expiry := leaseUntil(t, db, "z-1")
			if !waitUntil(5*time.Second, func() bool { return processState(pid) == "Z" }) {
				t.Skipf("worker a (pid %d) did not become a zombie (state %q)", pid, processState(pid))
			}
			// The thread group leader shows Z as soon as it exits; the
			// process's other threads may hold its files (the lock) a few
			// milliseconds more: retry while the run is busy.
			began := time.Now()
			var out []byte
			var err error
			for {
				out, err = exec.Command(binary, args("-run", "z-1")[1:]...).CombinedOutput()
				if err == nil || !strings.Contains(string(out), "run is busy") || time.Since(began) > 10*time.Second {
					break
				}
				time.Sleep(50 * time.Millisecond)
			}
			took := time.Since(began)
			if processState(pid) != "Z" {
				t.Errorf("worker a was reaped during the test: the zombie case was not tested")
			}
			if err != nil {
				t.Fatalf("resume beside the zombie after %v: %v\n%s", took, err, out)
			}
			if took > takeoverWithin[kind] {
				t.Errorf("resuming the run of a zombie worker took %v (lease %s), more than %v", took, takeoverLease[kind], takeoverWithin[kind])
			}
			if resumed := firstStart(t, dir, "z-1", pid); kind == "postgres" && resumed.Before(expiry) {
				t.Errorf("the run was resumed at %v, before the killed worker's lease expired (%v): PostgreSQL has no death signal of a killed process",
					resumed.Format(time.RFC3339Nano), expiry.Format(time.RFC3339Nano))
			}
			a.reap() // the zombie now
			if s := runStatus(t, db, "z-1"); s != resume.StatusSucceeded {
				t.Errorf("run z-1 is %s, want succeeded", s)
			}
			t.Logf("%s: the run of a zombie worker resumed %v after its kill (lease %s)", kind, took.Round(time.Millisecond), takeoverLease[kind])
		})
	}
}

// processState returns the state letter of /proc/PID/stat ("" if gone).
func processState(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return ""
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 || i+2 >= len(s) {
		return ""
	}
	return s[i+2 : i+3]
}

// nsLastPid makes the worker started in a new PID namespace get a pid no
// process of this host can have (above this host's pid_max).
const nsLastPid = 3999990

// TestWorkerInAnotherPIDNamespaceIsAlive runs worker a in a new PID
// namespace (unshare --pid --fork), with a pid that names no process of
// this host, and starts worker b on this host: b must not take a's run
// while a lives. Before, b read a's pid with kill(pid, 0), saw no process
// and took the run over at once: both executed it. Once a is killed, a
// resume takes the run at once.
func TestWorkerInAnotherPIDNamespaceIsAlive(t *testing.T) {
	if out, err := exec.Command("unshare", "--pid", "--fork", "--mount-proc", "sh", "-c",
		fmt.Sprintf("echo %d > /proc/sys/kernel/ns_last_pid && sh -c 'echo $$'", nsLastPid)).CombinedOutput(); err != nil ||
		strings.TrimSpace(string(out)) != strconv.Itoa(nsLastPid+1) {
		t.Skipf("this machine cannot start a process in a new PID namespace with a chosen pid (unshare needs root or user namespaces): %v %s", err, out)
	}
	for kind, open := range journals(t) {
		t.Run(kind, func(t *testing.T) {
			dir := t.TempDir()
			db := open(t, dir)
			args := func(extra ...string) []string {
				return append([]string{binary, "-db", db, "-world", dir}, extra...)
			}
			if out, err := exec.Command(binary, args("-run", "ns", "-enqueue", "1")[1:]...).CombinedOutput(); err != nil {
				t.Fatalf("enqueue: %v\n%s", err, out)
			}
			quoted := make([]string, 0, 12)
			for _, a := range args("-run", "ns", "-worker", "-lease", takeoverLease[kind], "-step-delay", "1s") {
				quoted = append(quoted, "'"+a+"'")
			}
			a := startProc(t, dir, "a", false, "unshare", "--pid", "--fork", "--mount-proc", "--kill-child=SIGKILL", "sh", "-c",
				fmt.Sprintf("echo %d > /proc/sys/kernel/ns_last_pid && %s", nsLastPid, strings.Join(quoted, " ")))
			nsPid := nsLastPid + 1
			if !waitUntil(20*time.Second, func() bool { return effectPids(t, dir, "ns-1")[nsPid] > 0 }) {
				b, _ := os.ReadFile(a.log)
				t.Fatalf("worker a never started a step as pid %d; its log:\n%s", nsPid, b)
			}
			if err := syscall.Kill(nsPid, 0); err != syscall.ESRCH {
				t.Fatalf("kill(%d, 0) = %v here: the pid must name no process of this host", nsPid, err)
			}
			b := startProc(t, dir, "b", false, args("-run", "ns", "-worker", "-lease", "30s")...)
			time.Sleep(3 * time.Second) // b's startup looks for runs of dead owners; a runs 1s steps
			if n := effectPids(t, dir, "ns-1")[b.cmd.Process.Pid]; n != 0 {
				t.Errorf("worker b executed %d steps of the run worker a holds and executes", n)
			}
			if n := effectPids(t, dir, "ns-1")[nsPid]; n < 2 {
				t.Errorf("worker a executed %d steps in 3s of 1s steps; want it to go on", n)
			}
			// a dies (SIGKILL to unshare kills its namespace): a resume
			// takes the run at once on SQLite, not after the 30s lease;
			// on PostgreSQL once the 3s lease expired.
			_ = b.cmd.Process.Signal(syscall.SIGTERM)
			b.wait()
			_ = a.cmd.Process.Kill()
			a.wait()
			expiry := leaseUntil(t, db, "ns-1")
			if s := runStatus(t, db, "ns-1"); s.Finished() {
				t.Skipf("run finished (%s) before a was killed: the takeover was not tested", s)
			}
			// The server ends a killed client's session a moment later:
			// retry while the run is busy.
			began := time.Now()
			var out []byte
			var err error
			for {
				out, err = exec.Command(binary, args("-run", "ns-1")[1:]...).CombinedOutput()
				if err == nil || !strings.Contains(string(out), "run is busy") || time.Since(began) > 10*time.Second {
					break
				}
				time.Sleep(50 * time.Millisecond)
			}
			took := time.Since(began)
			if err != nil && !strings.Contains(string(out), "needs attention") {
				t.Fatalf("resume after a died: %v\n%s", err, out)
			}
			if took > takeoverWithin[kind] {
				t.Errorf("resuming the run of a dead worker of another PID namespace took %v (lease %s), more than %v", took, takeoverLease[kind], takeoverWithin[kind])
			}
			if resumed := firstStart(t, dir, "ns-1", nsPid); kind == "postgres" && !resumed.IsZero() && resumed.Before(expiry) {
				t.Errorf("the run was resumed at %v, before the dead worker's lease expired (%v)", resumed.Format(time.RFC3339Nano), expiry.Format(time.RFC3339Nano))
			}
			t.Logf("%s: b left a's run alone while a lived; after a died a resume took it in %v (lease %s)", kind, took.Round(time.Millisecond), takeoverLease[kind])
		})
	}
}
