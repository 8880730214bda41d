// Command worker is the fixture of the rolling-deploy test: the workflow
// rolling.Pipeline in one of three versions, chosen at build time (the
// build tag rolling_v1, rolling_v2, or none for v3), over the journal -db
// names (a PostgreSQL DSN or a SQLite file).
//
// Usage:
//
//	worker version
//	worker enqueue -db DB -prefix P -from I -n N
//	worker work -db DB -effects FILE [-concurrency C] [-lease D] [-delay D] [-crash STEP:POINT]
//	worker reference -prefix P -from I -n N
//
// work executes runs until SIGTERM (a clean drain) or the fault kills it;
// every step execution appends "RUN KEY BINARY VERSION PID UNIXNANO" to
// FILE. reference runs the inputs uninterrupted in a fresh SQLite journal
// and prints their outputs as JSON, for the test to compare with.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/resumegen/resumegen/runtime/openjournal"
	"github.com/resumegen/resumegen/runtime/resume"
)

// Order is the run's input: the same in every version.
type Order struct {
	ID string
	N  int
}

// Receipt is the run's output: the trail of the steps that made it.
type Receipt struct {
	ID    string
	Trail []string
}

// identity is the workflow's stable name in every version.
const identity = "rolling.Pipeline"

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: worker version|enqueue|work|reference [flags]")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	if err := command(ctx, os.Args[1], os.Args[2:], os.Stdout); err != nil {
		fmt.Fprintf(os.Stderr, "worker %s %s: %v\n", binary, os.Args[1], err)
		os.Exit(1)
	}
}

func command(ctx context.Context, name string, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	db := fs.String("db", "", "journal: PostgreSQL DSN or SQLite `file`")
	effects := fs.String("effects", "", "append step executions to `file`")
	prefix := fs.String("prefix", "r-", "run id `prefix`")
	from := fs.Int("from", 0, "first run `index`")
	n := fs.Int("n", 0, "number of runs")
	concurrency := fs.Int("concurrency", 2, "runs executed at once")
	lease := fs.Duration("lease", time.Second, "run lease")
	delay := fs.Duration("delay", 0, "time each step takes")
	crash := fs.String("crash", "", "die with SIGKILL at `STEP:POINT`")
	if err := fs.Parse(args); err != nil {
		return err
	}
	switch name {
	case "version":
		def, _ := resume.Lookup(identity)
		_, err := fmt.Fprintf(stdout, "%s %s\n", binary, def.Version)
		return err
	case "enqueue":
		return enqueue(ctx, *db, *prefix, *from, *n)
	case "work":
		ctx = withEffects(ctx, *effects, *delay)
		return work(ctx, *db, *concurrency, *lease, *crash)
	case "reference":
		return reference(ctx, *prefix, *from, *n, stdout)
	}
	return fmt.Errorf("unknown command %q", name)
}

func quiet() resume.Option {
	return resume.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))
}

// enqueue creates runs PREFIX+I for I in [from, from+n), pending.
func enqueue(ctx context.Context, db, prefix string, from, n int) error {
	j, err := openjournal.Open(ctx, db)
	if err != nil {
		return err
	}
	defer j.Close()
	e := resume.NewEngine(j, quiet())
	for i := from; i < from+n; i++ {
		id := fmt.Sprintf("%s%03d", prefix, i)
		if _, err := e.Enqueue(ctx, id, Pipeline, Order{ID: id, N: i}); err != nil {
			return err
		}
	}
	return nil
}

// work runs a worker until ctx is done.
func work(ctx context.Context, db string, concurrency int, lease time.Duration, crash string) error {
	j, err := openjournal.Open(ctx, db)
	if err != nil {
		if ctx.Err() != nil {
			// Stopped while opening (a SIGTERM during the pooler probe):
			// nothing was claimed, a clean drain, as Engine.Work says of a
			// stop before its first claim.
			return nil
		}
		return err
	}
	defer j.Close()
	opts := []resume.Option{quiet(), resume.WithLease(lease), resume.WithOwner(fmt.Sprintf("%s-%d", binary, os.Getpid()))}
	if crash != "" {
		f, err := resume.ParseFault(crash)
		if err != nil {
			return err
		}
		opts = append(opts, resume.WithFault(f))
	}
	return resume.NewEngine(j, opts...).Work(ctx, resume.WorkerOptions{
		Concurrency: concurrency, PollInterval: 100 * time.Millisecond, ShutdownGrace: 10 * time.Second,
	})
}

// reference runs each input uninterrupted in a fresh journal and prints
// the outputs by run id.
func reference(ctx context.Context, prefix string, from, n int, stdout io.Writer) error {
	dir, err := os.MkdirTemp("", "rolling-ref-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	j, err := openjournal.Open(ctx, filepath.Join(dir, "ref.db"))
	if err != nil {
		return err
	}
	defer j.Close()
	e := resume.NewEngine(j, quiet())
	out := map[string]Receipt{}
	for i := from; i < from+n; i++ {
		id := fmt.Sprintf("%s%03d", prefix, i)
		r, err := resume.Run(ctx, e, id, Pipeline, Order{ID: id, N: i})
		if err != nil {
			return err
		}
		out[id] = r
	}
	return json.NewEncoder(stdout).Encode(out)
}

type effectsKey struct{}

// effectLog is where steps record their executions.
type effectLog struct {
	mu    sync.Mutex
	path  string
	delay time.Duration
}

func withEffects(ctx context.Context, path string, delay time.Duration) context.Context {
	return context.WithValue(ctx, effectsKey{}, &effectLog{path: path, delay: delay})
}

// record appends the executing step to the effects file, then takes the
// step's time: a kill during it finds the execution recorded.
func record(ctx context.Context) {
	log, _ := ctx.Value(effectsKey{}).(*effectLog)
	if log == nil || log.path == "" {
		return
	}
	info, ok := resume.StepFromContext(ctx)
	if !ok {
		panic(errors.New("record outside a step"))
	}
	def, _ := resume.Lookup(identity)
	line := fmt.Sprintf("%s %s %s %s %d %d\n", info.RunID, info.StepKey, binary, def.Version, os.Getpid(), time.Now().UnixNano())
	log.mu.Lock()
	f, err := os.OpenFile(log.path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err == nil {
		_, err = f.WriteString(line)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	log.mu.Unlock()
	if err != nil {
		panic(err) // the test cannot count without it
	}
	time.Sleep(log.delay)
}
