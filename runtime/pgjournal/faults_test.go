package pgjournal_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/resumegen/resumegen/internal/pgtest"
	"github.com/resumegen/resumegen/runtime/journal"
	"github.com/resumegen/resumegen/runtime/journaltest"
	"github.com/resumegen/resumegen/runtime/pgjournal"
	"github.com/resumegen/resumegen/runtime/resume"
)

// workerDSNEnv names the database of a worker process.
const workerDSNEnv = "PGJOURNAL_WORKER_DSN"

// TestCrashLoopProcesses queues 10 runs, the oldest of which ends its
// worker process at its first step, and restarts real worker processes
// when they die: the other 9 succeed, and the poison run is failed as a
// crash loop (issue 10 §3).
func TestCrashLoopProcesses(t *testing.T) {
	for _, die := range []string{"exit", "kill"} {
		t.Run(die, func(t *testing.T) {
			dsn := pgtest.FreshDatabase(t)
			j, err := pgjournal.Connect(context.Background(), dsn)
			if err != nil {
				t.Fatal(err)
			}
			defer j.Close()
			n := journaltest.CrashLoopProcesses(t, j, die, workerOn(dsn))
			t.Logf("%d worker processes", n)
		})
	}
}

// TestQueueProcesses drains a queue with 3 real worker processes:
// journaltest.QueueProcesses (issue 22 §1).
func TestQueueProcesses(t *testing.T) {
	dsn := pgtest.FreshDatabase(t)
	j, err := pgjournal.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	journaltest.QueueProcesses(t, j, workerOn(dsn))
}

// TestQueueWorkerKilled SIGKILLs a worker process holding all of a
// queue's slots, and two others drain the queue:
// journaltest.QueueWorkerKilled.
func TestQueueWorkerKilled(t *testing.T) {
	dsn := pgtest.FreshDatabase(t)
	j, err := pgjournal.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	journaltest.QueueWorkerKilled(t, j, workerOn(dsn))
}

// workerOn starts this test binary as a worker process (TestWorkerProcess)
// on the journal at dsn, with env added to its environment.
func workerOn(dsn string) func(env []string) *exec.Cmd {
	return func(env []string) *exec.Cmd {
		cmd := exec.Command(os.Args[0], "-test.run=^TestWorkerProcess$", "-test.count=1")
		cmd.Env = append(append(os.Environ(), workerDSNEnv+"="+dsn), env...)
		return cmd
	}
}

// TestWorkerProcess is a worker process of TestCrashLoopProcesses; run
// alone, it does nothing.
func TestWorkerProcess(t *testing.T) {
	if !journaltest.WorkerProcess() {
		t.Skip("a worker process of TestCrashLoopProcesses")
	}
	j, err := pgjournal.Connect(context.Background(), os.Getenv(workerDSNEnv))
	if err != nil {
		t.Fatal(err)
	}
	status := journaltest.WorkerMain(j)
	j.Close()
	os.Exit(status)
}

// TestServerRestart stops the PostgreSQL server for 6 seconds while two
// workers execute 30 runs (issue 10 §4; before: 8 runs parked in
// needs_attention, their once step executed once but its "succeeded" row
// lost). The server is a cluster of the test's own, so that no other test
// sees it go.
func TestServerRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("a 6-second server restart: not in -short")
	}
	c := startCluster(t)
	ctx := context.Background()
	cfg, err := pgxpool.ParseConfig(c.dsn)
	if err != nil {
		t.Fatal(err)
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	rep := journaltest.DatabaseBlip(t, journaltest.Harness{
		Open: func(t *testing.T) journal.Journal {
			j, err := pgjournal.Open(ctx, pool)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := pool.Exec(ctx, `CREATE TABLE effects (run_id text NOT NULL)`); err != nil {
				t.Fatal(err)
			}
			return j
		},
		InsertEffect: func(ctx context.Context, runID string) error {
			_, err := resume.Tx[execer](ctx, pool).Exec(ctx, `INSERT INTO effects (run_id) VALUES ($1)`, runID)
			return err
		},
		CountEffects: func(ctx context.Context, runID string) (n int, err error) {
			err = pool.QueryRow(ctx, `SELECT count(*) FROM effects WHERE run_id = $1`, runID).Scan(&n)
			return n, err
		},
	}, func() { c.ctl(t, "stop", "-m", "fast") }, func() { c.ctl(t, "start") })
	t.Logf("%+v", rep)
}

// cluster is a PostgreSQL server of one test, started the way
// scripts/with-postgres.sh starts one: a UNIX socket only, fsync on.
type cluster struct {
	bin, dir, dsn string
}

// startCluster initializes and starts a cluster, stopped and removed when
// t ends. Without PostgreSQL binaries the test is skipped (failed when
// RESUME_REQUIRE_POSTGRES=1).
func startCluster(t *testing.T) *cluster {
	t.Helper()
	bin := os.Getenv("PG_BIN")
	if bin == "" {
		dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
		sort.Slice(dirs, func(a, b int) bool { return pgMajor(dirs[a]) < pgMajor(dirs[b]) })
		if len(dirs) > 0 {
			bin = dirs[len(dirs)-1]
		}
	}
	if _, err := os.Stat(filepath.Join(bin, "pg_ctl")); bin == "" || err != nil {
		if os.Getenv("RESUME_REQUIRE_POSTGRES") == "1" {
			t.Fatal("RESUME_REQUIRE_POSTGRES=1 but no PostgreSQL binaries found (set PG_BIN)")
		}
		t.Skip("no PostgreSQL binaries (set PG_BIN) to run a cluster of the test's own")
	}
	// A short path: a socket path must fit in about 100 bytes.
	dir, err := os.MkdirTemp("/tmp", "rpgc.")
	if err != nil {
		t.Fatal(err)
	}
	c := &cluster{bin: bin, dir: dir}
	t.Cleanup(func() {
		_ = c.run("pg_ctl", "-D", c.data(), "-m", "immediate", "-w", "stop")
		os.RemoveAll(dir)
	})
	if os.Getuid() == 0 {
		if out, err := exec.Command("chown", "postgres:", dir).CombinedOutput(); err != nil {
			t.Fatalf("chown: %v\n%s", err, out)
		}
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := c.run("initdb", "-D", c.data(), "-U", "postgres", "-A", "trust", "-E", "UTF8", "--no-locale"); err != nil {
		t.Fatalf("initdb: %v", err)
	}
	c.ctl(t, "start")
	c.dsn = fmt.Sprintf("postgres://postgres@/postgres?host=%s&sslmode=disable", dir)
	return c
}

func (c *cluster) data() string { return filepath.Join(c.dir, "data") }

// ctl runs pg_ctl ACTION ARGS... -w on the cluster.
func (c *cluster) ctl(t *testing.T, action string, args ...string) {
	t.Helper()
	full := []string{"-D", c.data(), "-w", "-t", "60"}
	if action == "start" {
		full = append(full, "-l", filepath.Join(c.dir, "server.log"),
			"-o", fmt.Sprintf("-c listen_addresses='' -c unix_socket_directories='%s' -c fsync=on -c max_connections=100", c.dir))
	}
	full = append(append(full, args...), action)
	if err := c.run("pg_ctl", full...); err != nil {
		log, _ := os.ReadFile(filepath.Join(c.dir, "server.log"))
		t.Fatalf("pg_ctl %s: %v\n%s", action, err, log)
	}
}

// run runs a server program, as the postgres user when we are root
// (initdb refuses root).
func (c *cluster) run(name string, args ...string) error {
	path := filepath.Join(c.bin, name)
	cmd := exec.Command(path, args...)
	if os.Getuid() == 0 {
		cmd = exec.Command("runuser", append([]string{"-u", "postgres", "--", path}, args...)...)
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%w\n%s", err, out)
	}
	return nil
}

// pgMajor reads the major version from a /usr/lib/postgresql/N/bin path.
func pgMajor(dir string) int {
	var n int
	fmt.Sscanf(strings.TrimPrefix(dir, "/usr/lib/postgresql/"), "%d", &n)
	return n
}
