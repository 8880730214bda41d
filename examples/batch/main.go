// Command batch runs the Settle workflow of this example once, journaled in
// SQLite, for the tests that kill it inside a loop and resume it: a step
// nested in another's arguments, a keyed step, and an early return.
//
// Usage:
//
//	batch -db FILE -run ID [-limit N] [-crash STEP:POINT]
//
// Every step execution appends "STEP KEY" to FILE.effects; the run's report
// is printed as JSON.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"

	"github.com/resumegen/resumegen/runtime/resume"
	"github.com/resumegen/resumegen/runtime/sqlitejournal"
)

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("batch", flag.ContinueOnError)
	fs.SetOutput(stderr)
	db := fs.String("db", "batch.db", "journal `file` (SQLite)")
	runID := fs.String("run", "batch-1", "run `id`")
	limit := fs.Int("limit", 1000, "settle items up to this `amount`; a larger one stops the batch")
	crash := fs.String("crash", "", "die with SIGKILL at `STEP:POINT`")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if err := settle(ctx, *db, *runID, *limit, *crash, stdout); err != nil {
		fmt.Fprintln(stderr, "batch:", err)
		return 1
	}
	return 0
}

func settle(ctx context.Context, db, runID string, limit int, crash string, stdout io.Writer) error {
	j, err := sqlitejournal.Open(ctx, db)
	if err != nil {
		return err
	}
	defer j.Close()
	opts := []resume.Option{resume.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))}
	if crash != "" {
		f, err := resume.ParseFault(crash)
		if err != nil {
			return err
		}
		opts = append(opts, resume.WithFault(f))
	}
	ctx = context.WithValue(ctx, effectsKey{}, &effectLog{path: db + ".effects"})
	rep, err := resume.Run(ctx, resume.NewEngine(j, opts...), runID, Settle, Batch{ID: runID, Limit: limit})
	if err != nil {
		return err
	}
	return json.NewEncoder(stdout).Encode(rep)
}

// effectLog is the file where steps log their executions, in the run's
// context.
type effectLog struct {
	mu   sync.Mutex
	path string
}

type effectsKey struct{}

// track logs one execution of step with its journal key.
func track(ctx context.Context, step string) {
	log := ctx.Value(effectsKey{}).(*effectLog)
	info, _ := resume.StepFromContext(ctx)
	log.mu.Lock()
	defer log.mu.Unlock()
	f, err := os.OpenFile(log.path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		panic(err) // the tests cannot count without it
	}
	defer f.Close()
	fmt.Fprintf(f, "%s %s\n", step, info.StepKey)
}
