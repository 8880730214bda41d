// Command fanout runs the Scores workflow of this example (a fan-out of
// child workflows with resume.Map) in a journal, with workers, for the
// tests that kill it mid-way and resume it and for the benchmark.
//
// Usage:
//
//	fanout -db FILE|DSN -run ID [-n N] [-workers W] [-work D] [-lease D] [-kill-after K] [-crash STEP:POINT]
//	fanout -db FILE|DSN -run ID -show
//
// The run is enqueued, then executed by W workers of this process until
// it finishes; its Summary is printed as JSON. Every step execution
// appends "STEP ITEM" to -effects (default: FILE.effects). -kill-after K
// makes the process SIGKILL itself in the K-th Weigh of the process;
// -crash, at a fault point. -show prints the status of the run's child
// runs, by id, as JSON, without executing anything.
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
	"sync"
	"syscall"
	"time"

	"github.com/resumegen/resumegen/runtime/journal"
	"github.com/resumegen/resumegen/runtime/openjournal"
	"github.com/resumegen/resumegen/runtime/resume"
)

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("fanout", flag.ContinueOnError)
	fs.SetOutput(stderr)
	db := fs.String("db", "fanout.db", "journal: a SQLite `file` or a PostgreSQL DSN")
	runID := fs.String("run", "fan-1", "run `id`")
	n := fs.Int("n", 12, "`items` to score")
	workers := fs.Int("workers", 4, "runs this process executes at once")
	work := fs.Duration("work", 20*time.Millisecond, "how long each item's Weigh takes")
	effects := fs.String("effects", "", "effects log `file` (default: the -db file with .effects)")
	killAfter := fs.Int("kill-after", 0, "SIGKILL this process in its `K`-th Weigh (0: never)")
	crash := fs.String("crash", "", "die with SIGKILL at `STEP:POINT`")
	show := fs.Bool("show", false, "print the child runs' statuses and exit")
	lease := fs.Duration("lease", 30*time.Second, "how long a run is held without renewal before another process may take it")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *effects == "" {
		*effects = *db + ".effects"
	}
	j, err := openjournal.Open(ctx, *db)
	if err != nil {
		fmt.Fprintln(stderr, "fanout:", err)
		return 1
	}
	defer j.Close()
	if *show {
		return showChildren(ctx, j, *runID, stdout, stderr)
	}
	logTo := io.Discard
	if os.Getenv("FANOUT_LOG") != "" {
		logTo = stderr
	}
	opts := []resume.Option{resume.WithLease(*lease), resume.WithLogger(slog.New(slog.NewTextHandler(logTo, &slog.HandlerOptions{Level: slog.LevelDebug})))}
	if *crash != "" {
		f, err := resume.ParseFault(*crash)
		if err != nil {
			fmt.Fprintln(stderr, "fanout:", err)
			return 2
		}
		opts = append(opts, resume.WithFault(f))
	}
	ctx = context.WithValue(ctx, effectsKey{}, &effectLog{path: *effects, killAfter: *killAfter})
	sum, err := score(ctx, resume.NewEngine(j, opts...), *runID, Batch{ID: *runID, N: *n, Work: *work}, *workers)
	if err != nil {
		fmt.Fprintln(stderr, "fanout:", err)
		return 1
	}
	json.NewEncoder(stdout).Encode(sum)
	return 0
}

// score enqueues the run (or finds it) and works until it finished.
func score(ctx context.Context, e *resume.Engine, runID string, b Batch, workers int) (Summary, error) {
	if _, err := e.Enqueue(ctx, runID, Scores, b); err != nil && !errors.Is(err, resume.ErrRunWaiting) {
		var re *resume.RunError
		if !errors.As(err, &re) {
			return Summary{}, err
		}
	}
	wctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		done <- e.Work(wctx, resume.WorkerOptions{Concurrency: workers, PollInterval: 20 * time.Millisecond})
	}()
	sum, err := ScoresRun{Engine: e, ID: runID}.Wait(ctx)
	stop()
	if werr := <-done; werr != nil && err == nil {
		err = werr
	}
	return sum, err
}

// showChildren prints the status of each child run of runID.
func showChildren(ctx context.Context, j journal.Journal, runID string, stdout, stderr io.Writer) int {
	runs, err := j.ListRuns(ctx, journal.RunFilter{Parent: runID})
	if err != nil {
		fmt.Fprintln(stderr, "fanout:", err)
		return 1
	}
	out := map[string]string{}
	for _, r := range runs {
		out[r.RunID] = string(r.Status)
	}
	json.NewEncoder(stdout).Encode(out)
	return 0
}

// effectLog is the file where steps log their executions, in the run's
// context.
type effectLog struct {
	mu        sync.Mutex
	path      string
	killAfter int
	weighs    int
}

type effectsKey struct{}

// track logs one execution of step for item, and dies at the -kill-after
// Weigh, after logging it (its effect happened; its outcome is not
// journaled).
func track(ctx context.Context, step, item string) {
	log, _ := ctx.Value(effectsKey{}).(*effectLog)
	if log == nil {
		return // a direct call, not through this command
	}
	log.mu.Lock()
	defer log.mu.Unlock()
	f, err := os.OpenFile(log.path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		panic(err) // the tests cannot count without it
	}
	fmt.Fprintf(f, "%s %s\n", step, item)
	f.Close()
	if step == "Weigh" {
		log.weighs++
		if log.weighs == log.killAfter {
			syscall.Kill(os.Getpid(), syscall.SIGKILL)
			select {}
		}
	}
}
