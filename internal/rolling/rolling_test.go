package rolling

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/resumegen/resumegen/runtime/journal"
	"github.com/resumegen/resumegen/runtime/openjournal"
)

// The three versions of rolling.Pipeline, built by TestMain: bins[label]
// is the binary, hashes[label] its version and hashes[version] its label.
var (
	bins   = map[string]string{}
	hashes = map[string]string{}
)

// tags are the build tags of each version (v3 is the package as go
// build ./... sees it).
var tags = map[string]string{"v1": "rolling_v1", "v2": "rolling_v2", "v3": ""}

// steps lists each version's steps; middle is the step v3 changes.
var steps = map[string][]string{
	"v1": {"Fetch", "Price", "Charge", "Pack", "Ship"},
	"v2": {"Fetch", "Price", "Charge", "Pack", "Ship", "Notify"},
	"v3": {"Fetch", "Price", "Charge", "Pack", "Ship", "Notify"},
}

const middle = "Charge"

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "rolling-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := 1
	if err := build(dir); err != nil {
		fmt.Fprintln(os.Stderr, err)
	} else {
		code = m.Run()
	}
	os.RemoveAll(dir)
	os.Exit(code)
}

// build checks that each version's generated file is fresh (resumegen
// -check under the version's build tag: go build ./... sees v3 only) and
// builds its binary into dir, the versions in parallel.
func build(dir string) error {
	gen := filepath.Join(dir, "resumegen")
	if out, err := exec.Command("go", "build", "-o", gen, "../../cmd/resumegen").CombinedOutput(); err != nil {
		return fmt.Errorf("build resumegen: %v\n%s", err, out)
	}
	var mu sync.Mutex
	errs := make(chan error, len(tags))
	for label, tag := range tags {
		go func() {
			hash, err := buildVersion(gen, dir, label, tag)
			mu.Lock()
			bins[label], hashes[label], hashes[hash] = filepath.Join(dir, "worker-"+label), hash, label
			mu.Unlock()
			errs <- err
		}()
	}
	var err error
	for range tags {
		err = errors.Join(err, <-errs)
	}
	return err
}

// buildVersion checks and builds one version and returns its hash.
func buildVersion(gen, dir, label, tag string) (string, error) {
	check := exec.Command(gen, "-check", "./worker")
	check.Env = append(os.Environ(), "GOFLAGS=-tags="+tag)
	if out, err := check.CombinedOutput(); err != nil {
		return "", fmt.Errorf("resumegen -check with tag %q: %v\n%s(regenerate: GOFLAGS=-tags=%s go run ./cmd/resumegen ./internal/rolling/...)", tag, err, out, tag)
	}
	bin := filepath.Join(dir, "worker-"+label)
	if out, err := exec.Command("go", "build", "-tags", tag, "-o", bin, "./worker").CombinedOutput(); err != nil {
		return "", fmt.Errorf("build %s: %v\n%s", label, err, out)
	}
	out, err := exec.Command(bin, "version").Output()
	f := strings.Fields(string(out))
	if err != nil || len(f) != 2 || f[0] != label {
		return "", fmt.Errorf("%s version: %q, %v", label, out, err)
	}
	return f[1], nil
}

// deploy is one test's journal, effects file and processes.
type deploy struct {
	t       *testing.T
	db      string
	effects string
	rng     *rand.Rand
	mu      sync.Mutex
	killed  map[int]bool // pids that SIGKILL ended
	procs   []*proc
}

func newDeploy(t *testing.T, db string) *deploy {
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("ROLLING_SEED"); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	t.Logf("seed %d (ROLLING_SEED=%d replays the same kill points)", seed, seed)
	d := &deploy{t: t, db: db, effects: filepath.Join(t.TempDir(), "effects"), rng: rand.New(rand.NewPCG(seed, seed)), killed: map[int]bool{}}
	t.Cleanup(d.stopAll)
	return d
}

// kills counts the processes SIGKILL ended so far.
func (d *deploy) kills() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.killed)
}

// proc is a worker process.
type proc struct {
	label  string
	crash  string
	cmd    *exec.Cmd
	stderr strings.Builder
	done   chan struct{}
	// started and ended bound the process's life, by the test's clock.
	started, ended time.Time
	killed         bool
	err            error
}

// enqueue creates runs r-FROM..r-(FROM+N-1) with version label's binary.
func (d *deploy) enqueue(label string, from, n int) {
	d.t.Helper()
	out, err := exec.Command(bins[label], "enqueue", "-db", d.db, "-from", fmt.Sprint(from), "-n", fmt.Sprint(n)).CombinedOutput()
	if err != nil {
		d.t.Fatalf("%s enqueue: %v\n%s", label, err, out)
	}
}

// crash picks a random kill point of version label: a step and a point.
func (d *deploy) crash(label string) string {
	s := steps[label]
	points := []string{"before", "effect", "after"}
	return s[d.rng.IntN(len(s))] + ":" + points[d.rng.IntN(len(points))]
}

// start runs a worker of version label, dying at crash when it is set.
func (d *deploy) start(label, crash string, concurrency int) *proc {
	d.t.Helper()
	args := []string{"work", "-db", d.db, "-effects", d.effects, "-concurrency", fmt.Sprint(concurrency), "-lease", "1s", "-delay", "30ms"}
	if crash != "" {
		args = append(args, "-crash", crash)
	}
	p := &proc{label: label, crash: crash, cmd: exec.Command(bins[label], args...), done: make(chan struct{})}
	p.cmd.Stderr = &p.stderr
	p.started = time.Now()
	if err := p.cmd.Start(); err != nil {
		d.t.Fatalf("start %s worker: %v", label, err)
	}
	d.mu.Lock()
	d.procs = append(d.procs, p)
	d.mu.Unlock()
	go func() {
		err := p.cmd.Wait()
		if ws, ok := p.cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL {
			d.mu.Lock()
			d.killed[p.cmd.Process.Pid] = true
			d.mu.Unlock()
			p.killed, err = true, nil
		}
		p.err, p.ended = err, time.Now()
		close(p.done)
	}()
	return p
}

func (p *proc) alive() bool {
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// stop ends p with SIGTERM (a clean drain) or SIGKILL, and waits.
func (p *proc) stop(sig syscall.Signal) {
	if p.alive() {
		p.cmd.Process.Signal(sig)
	}
	<-p.done
}

// stopAll stops every process still running and reports the ones that
// failed other than by SIGKILL.
func (d *deploy) stopAll() {
	d.mu.Lock()
	procs := append([]*proc(nil), d.procs...)
	d.mu.Unlock()
	for _, p := range procs {
		p.stop(syscall.SIGTERM)
		if p.err != nil {
			d.t.Errorf("%s worker %d: %v\n%s", p.label, p.cmd.Process.Pid, p.err, p.stderr.String())
		}
	}
}

// open opens the test's journal.
func (d *deploy) open() journal.Journal {
	d.t.Helper()
	j, err := openjournal.Open(context.Background(), d.db)
	if err != nil {
		d.t.Fatal(err)
	}
	d.t.Cleanup(func() { j.Close() })
	return j
}

// runs loads every run with its journal.
func (d *deploy) runs(j journal.Journal) map[string]loaded {
	d.t.Helper()
	ctx := context.Background()
	list, err := j.ListRuns(ctx, journal.RunFilter{})
	if err != nil {
		d.t.Fatal(err)
	}
	out := map[string]loaded{}
	for _, r := range list {
		run, steps, err := j.LoadRun(ctx, r.RunID)
		if err != nil {
			d.t.Fatal(err)
		}
		out[r.RunID] = loaded{run, steps}
	}
	return out
}

// loaded is a run with its journal.
type loaded struct {
	run   journal.RunRecord
	steps []journal.StepRecord
}

// unfinished counts the runs that have not ended.
func unfinished(j journal.Journal) (int, error) {
	list, err := j.ListRuns(context.Background(), journal.RunFilter{})
	n := 0
	for _, r := range list {
		if !r.Status.Finished() && r.Status != journal.StatusNeedsAttention {
			n++
		}
	}
	return n, err
}
