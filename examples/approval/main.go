// Command approval is resumegen's example of waiting: an expense report
// is submitted, the approver is reminded after a durable sleep, and the
// run waits for their decision (resume.Await, with a timeout), then pays
// or tells the submitter it was rejected or timed out. While it waits, no
// process needs to run: the run is rows in the journal.
//
// With no flags it narrates a demo: the process working on the run is
// killed (SIGKILL) while the run waits, the approval is sent with
// `resumectl runs signal` while no process runs, and a new process
// finishes the run.
//
// Usage:
//
//	approval [-db PATH|DSN] [-world DIR] [-run ID] [-amount CENTS] [-remind D] [-within D] [-crash STEP:POINT]
//	approval [-db PATH|DSN] [-world DIR] [-run ID] -report
//
// It starts run ID (an existing run is left as it is: running the same
// command again resumes it) and works on it until it finishes, printing
// its outcome as JSON. The approver decides with
//
//	resumectl runs signal ID approval '{"approved":true,"by":"dana"}'
//
// -db is a SQLite file or a postgres:// DSN. -world is the folder of the
// outside world's records (default: beside a SQLite -db, else
// ./approval-world). -remind and -within are the report's policy: the
// reminder after -remind, the decision within -within of it. -crash makes
// the process die at POINT (before, effect or after) of STEP, a step or a
// wait (resume.Sleep, approval). -report prints, as JSON, the run's status
// and what every step did, and exits. Exit status: 0 the run succeeded, 3
// it needs attention, 1 otherwise.
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
	"path/filepath"
	"time"

	"github.com/resumegen/resumegen/runtime/openjournal"
	"github.com/resumegen/resumegen/runtime/resume"
)

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}

// config is one invocation's flags.
type config struct {
	db, world, crash string
	report           bool
	expense          Expense
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		if err := demo(ctx, stdout); err != nil {
			fmt.Fprintln(stderr, "approval demo:", err)
			return 1
		}
		return 0
	}
	c, err := parse(args, stderr)
	if err != nil {
		return 2
	}
	code, err := runOnce(ctx, c, stdout)
	if err != nil {
		fmt.Fprintln(stderr, "approval:", err)
	}
	return code
}

func parse(args []string, stderr io.Writer) (config, error) {
	var c config
	x := &c.expense
	fs := flag.NewFlagSet("approval", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.db, "db", "approval.db", "journal: a SQLite `file` or a postgres:// DSN")
	fs.StringVar(&c.world, "world", "", "`folder` of the outside world's records (default: beside a SQLite -db, else ./approval-world)")
	fs.StringVar(&x.ID, "run", "exp-1", "run `id`, also the expense report's")
	fs.StringVar(&x.Submitter, "submitter", "sam@example.com", "who is paid and told the outcome")
	fs.StringVar(&x.Approver, "approver", "dana@example.com", "who decides")
	fs.IntVar(&x.Amount, "amount", 12900, "`cents` asked")
	fs.DurationVar(&x.RemindAfter, "remind", 24*time.Hour, "remind the approver after this `long`")
	fs.DurationVar(&x.DecideWithin, "within", 72*time.Hour, "the approver's time to decide after the reminder (`duration`)")
	fs.StringVar(&c.crash, "crash", "", "die with SIGKILL at `STEP:POINT`, POINT one of before, effect, after")
	fs.BoolVar(&c.report, "report", false, "print the run's status and what every step did, as JSON, and exit")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "approval: unexpected arguments %q\n", fs.Args())
		return c, errors.New("unexpected arguments")
	}
	if c.world == "" {
		c.world = "approval-world"
		if !openjournal.IsPostgres(c.db) {
			c.world = filepath.Dir(c.db)
		}
	}
	return c, nil
}

func runOnce(ctx context.Context, c config, stdout io.Writer) (int, error) {
	// The world's folder first: by default a SQLite journal lives there.
	w, err := openWorld(c.world)
	if err != nil {
		return 1, err
	}
	j, err := openjournal.Open(ctx, c.db)
	if err != nil {
		return 1, err
	}
	defer j.Close()
	if c.report {
		r, err := makeReport(ctx, j, w, c.expense.ID)
		if err != nil {
			return 1, err
		}
		return 0, json.NewEncoder(stdout).Encode(r)
	}
	// The outcome is printed below; the engine's log would repeat it.
	opts := []resume.Option{resume.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))}
	if c.crash != "" {
		f, err := resume.ParseFault(c.crash)
		if err != nil {
			return 2, err
		}
		opts = append(opts, resume.WithFault(f))
	}
	e := resume.NewEngine(j, opts...)
	ctx = withWorld(ctx, w)
	if _, err := e.Enqueue(ctx, c.expense.ID, Approve, c.expense); err != nil {
		return 1, err
	}
	fmt.Fprintf(stdout, "process %d works on run %s\n", os.Getpid(), c.expense.ID)
	res, err := workOn(ctx, e, c.expense.ID)
	if errors.Is(err, resume.ErrNeedsAttention) {
		fmt.Fprintf(stdout, "run %s: needs attention: %v\n", c.expense.ID, err)
		return 3, nil
	}
	if err != nil {
		return 1, err
	}
	fmt.Fprintf(stdout, "%s\n", res.Output)
	return 0, nil
}

// workOn works on the journal's runs (this one, as soon as it is due or
// woken) until run runID has finished, and returns its result.
func workOn(ctx context.Context, e *resume.Engine, runID string) (resume.Result, error) {
	wctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		done <- e.Work(wctx, resume.WorkerOptions{PollInterval: 50 * time.Millisecond})
	}()
	res, err := e.Wait(ctx, runID)
	stop()
	if werr := <-done; werr != nil && err == nil {
		err = werr
	}
	return res, err
}

// report is what -report prints.
type report struct {
	Status  string          `json:"status"`
	Waits   string          `json:"waits,omitempty"` // what a waiting run waits for
	Outcome json.RawMessage `json:"outcome,omitempty"`
	Error   string          `json:"error,omitempty"`
	Journal []string        `json:"journal"` // STEP_KEY STATUS, in order
	World   tally           `json:"world"`
}

func makeReport(ctx context.Context, j resume.Journal, w *world, runID string) (report, error) {
	var r report
	run, steps, err := j.LoadRun(ctx, runID)
	if err != nil && !errors.Is(err, resume.ErrRunNotFound) {
		return r, err
	}
	r.Status, r.Outcome, r.Error = string(run.Status), run.Output, run.Error
	if run.Status == resume.StatusWaiting {
		r.Waits = run.WaitKind + " " + run.WaitName
	}
	r.Journal = []string{}
	for _, s := range steps {
		r.Journal = append(r.Journal, s.StepKey+" "+string(s.Status))
	}
	r.World, err = w.tally(runID)
	return r, err
}
