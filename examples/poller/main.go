// Command poller runs the Watch workflow of this example, journaled in
// SQLite: a feed watcher that continues as new every few polls, so that
// each run's journal stays short.
//
// Usage:
//
//	poller -db FILE -run ID
//
// It prints each run of the chain, its journal's length and what it
// continues as, and the cursor of the last run.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/resumegen/resumegen/runtime/resume"
	"github.com/resumegen/resumegen/runtime/sqlitejournal"
)

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("poller", flag.ContinueOnError)
	fs.SetOutput(stderr)
	db := fs.String("db", "poller.db", "journal `file` (SQLite)")
	runID := fs.String("run", "watch", "id of the chain's first run")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if err := watch(ctx, *db, *runID, stdout); err != nil {
		fmt.Fprintln(stderr, "poller:", err)
		return 1
	}
	return 0
}

// watch executes the chain that starts with run id, one run after
// another, each to its end (its sleeps are a millisecond), and prints
// each run.
func watch(ctx context.Context, db, id string, stdout io.Writer) error {
	j, err := sqlitejournal.Open(ctx, db)
	if err != nil {
		return err
	}
	defer j.Close()
	e := resume.NewEngine(j, resume.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	res, err := e.Start(ctx, id, Watch, Cursor{}, time.Millisecond)
	for {
		for err != nil && res.Status == resume.StatusWaiting {
			time.Sleep(2 * time.Millisecond)
			res, err = e.Resume(ctx, res.RunID)
		}
		if err != nil {
			return err
		}
		_, steps, lerr := j.LoadRun(ctx, res.RunID)
		if lerr != nil {
			return lerr
		}
		fmt.Fprintf(stdout, "run %s: %d journal rows, continued as %q\n", res.RunID, len(steps), res.ContinuedAs)
		if res.ContinuedAs == "" {
			var c Cursor
			if err := res.Decode(&c); err != nil {
				return err
			}
			fmt.Fprintf(stdout, "cursor %+v\n", c)
			return nil
		}
		res, err = e.Resume(ctx, res.ContinuedAs)
	}
}
