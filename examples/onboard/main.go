// Command onboard is resumegen's example: a five-step workflow that scores a
// customer's records with a paid service, stores the scores and emails their
// owners, journaled so that a run killed at any step resumes without
// repeating what it already did.
//
// With no flags it narrates a demo: it runs the workflow in child processes
// that kill themselves (SIGKILL) at chosen points, resumes them, and counts
// what each step did to the outside world.
//
// Usage:
//
//	onboard [-db PATH|DSN] [-run ID] [-world DIR] [-outbox DIR] [-crash STEP:POINT] [-fail STEP] [-resolve STEP:done|redo] [-report]
//	onboard -db DSN -run PREFIX -enqueue N
//	onboard -db DSN -worker [-concurrency N] [-lease D] [-clock-skew D]
//
// -db is a SQLite file or a postgres:// DSN; both hold the same tables.
// -crash makes the process die at POINT (before, effect or after) of STEP.
// -fail makes STEP return a permanent error in this process, so the run
// fails there (resumectl runs retry makes it pending again).
// Run it again with the same -db, -run and -world to resume. -resolve
// settles a step that waits for a person before resuming. -report prints,
// as JSON, what every step did and exits. -enqueue creates runs for
// workers; -worker executes them until SIGTERM, then releases its runs.
// -lease sets how long a run is held without renewal; -clock-skew runs
// the process as if its host's clock were wrong (its durable times follow
// the journal's clock all the same).
// Exit status: 0 succeeded, 3 the run needs attention, 1 otherwise.
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
	"strings"
	"syscall"
	"time"

	"github.com/resumegen/resumegen/runtime/resume"
)

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}

// config is one invocation's flags.
type config struct {
	db, runID, outbox, world, crash, resolve, fail string
	report, worker                                 bool
	enqueue, concurrency                           int
	delay, lease, skew                             time.Duration
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		if err := demo(ctx, stdout); err != nil {
			fmt.Fprintln(stderr, "onboard demo:", err)
			return 1
		}
		return 0
	}
	var c config
	fs := flag.NewFlagSet("onboard", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.db, "db", "onboard.db", "journal: a SQLite `file` or a postgres:// DSN")
	fs.StringVar(&c.runID, "run", "onboard-1", "run `id`; also the customer to onboard")
	fs.StringVar(&c.world, "world", "", "`folder` of the outside world's files: scoring ledger, effects log (default: beside a SQLite -db, else ./onboard-world)")
	fs.StringVar(&c.outbox, "outbox", "", "`folder` of sent emails (default: outbox in -world)")
	fs.StringVar(&c.crash, "crash", "", "die with SIGKILL at `STEP:POINT`, POINT one of before, effect, after")
	fs.StringVar(&c.fail, "fail", "", "make `STEP` fail with a permanent error in this process")
	fs.StringVar(&c.resolve, "resolve", "", "settle a step waiting for a person, `STEP:done` or STEP:redo, then resume")
	fs.BoolVar(&c.report, "report", false, "print what every step did, as JSON, and exit")
	fs.IntVar(&c.enqueue, "enqueue", 0, "enqueue `N` runs named RUN-1 ... RUN-N for workers, and exit")
	fs.BoolVar(&c.worker, "worker", false, "work on enqueued and abandoned runs until SIGTERM or SIGINT")
	fs.IntVar(&c.concurrency, "concurrency", 4, "with -worker: runs executed at once")
	fs.DurationVar(&c.delay, "step-delay", 0, "make every step take this `long`, so kills land inside steps")
	fs.DurationVar(&c.lease, "lease", 30*time.Second, "how long a run is held without renewal before another process may take it")
	fs.DurationVar(&c.skew, "clock-skew", 0, "run as if this host's clock were off by `D` (durable times follow the journal's clock all the same)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "onboard: unexpected arguments %q\n", fs.Args())
		return 2
	}
	if c.world == "" {
		c.world = "onboard-world"
		if !isPostgres(c.db) {
			c.world = filepath.Dir(c.db)
		}
	}
	if c.outbox == "" {
		c.outbox = filepath.Join(c.world, "outbox")
	}
	code, err := runOnce(ctx, c, stdout)
	if err != nil {
		fmt.Fprintln(stderr, "onboard:", err)
	}
	return code
}

func runOnce(ctx context.Context, c config, stdout io.Writer) (int, error) {
	if c.worker {
		// First thing: a SIGTERM during startup must drain, not kill.
		var stop context.CancelFunc
		ctx, stop = signal.NotifyContext(ctx, syscall.SIGTERM, os.Interrupt)
		defer stop()
	}
	j, scores, err := openJournal(ctx, c.db)
	if err != nil {
		if c.worker && ctx.Err() != nil {
			fmt.Fprintln(stdout, "worker stopped while starting; it held no runs")
			return 0, nil
		}
		return 1, err
	}
	defer j.Close()
	w, err := openWorld(c.world, c.outbox, scores, c.delay)
	if err != nil {
		return 1, err
	}
	w.fail = c.fail
	if c.report {
		r, err := makeReport(ctx, j, w, c.runID)
		if err != nil {
			return 1, err
		}
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return 0, enc.Encode(r)
	}

	// The run's outcome is printed below; the engine's log would repeat it.
	opts := []resume.Option{resume.WithLease(c.lease), resume.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))}
	if c.skew != 0 {
		opts = append(opts, resume.WithClock(skewedClock(c.skew)))
	}
	if c.crash != "" {
		f, err := resume.ParseFault(c.crash)
		if err != nil {
			return 2, err
		}
		opts = append(opts, resume.WithFault(f))
	}
	e := resume.NewEngine(j, opts...)
	ctx = withWorld(ctx, w)

	switch {
	case c.enqueue > 0:
		for i := 1; i <= c.enqueue; i++ {
			id := fmt.Sprintf("%s-%d", c.runID, i)
			if _, err := e.Enqueue(ctx, id, Onboard, Input{CustomerID: id}); err != nil {
				return 1, err
			}
		}
		fmt.Fprintf(stdout, "enqueued %d runs\n", c.enqueue)
		return 0, nil
	case c.worker:
		fmt.Fprintf(stdout, "worker %d working\n", os.Getpid())
		if err := e.Work(ctx, resume.WorkerOptions{Concurrency: c.concurrency, PollInterval: 50 * time.Millisecond}); err != nil {
			return 1, err
		}
		fmt.Fprintln(stdout, "worker stopped; its runs are released")
		return 0, nil
	}

	if c.resolve != "" {
		step, how, _ := strings.Cut(c.resolve, ":")
		if how != "done" && how != "redo" {
			return 2, fmt.Errorf("-resolve %q: want STEP:done or STEP:redo", c.resolve)
		}
		if err := e.Resolve(ctx, c.runID, step, resume.Resolution{Done: how == "done"}); err != nil {
			return 1, err
		}
		fmt.Fprintf(stdout, "run %s: step %s resolved %s\n", c.runID, step, how)
	}

	sum, err := resume.Run(ctx, e, c.runID, Onboard, Input{CustomerID: c.runID})
	if errors.Is(err, resume.ErrNeedsAttention) {
		fmt.Fprintf(stdout, "run %s: needs attention: %v\n", c.runID, err)
		return 3, nil
	}
	if err != nil {
		return 1, err
	}
	fmt.Fprintf(stdout, "run %s: succeeded: %d records scored, %d owners notified\n", c.runID, sum.Scored, sum.Notified)
	return 0, nil
}

// skewedClock is the system clock off by its value: a host whose clock is
// wrong (see -clock-skew).
type skewedClock time.Duration

// Now is the system clock's time moved by c.
func (c skewedClock) Now() time.Time { return time.Now().Add(time.Duration(c)) }

// At fires when Now reaches t.
func (c skewedClock) At(t time.Time) <-chan time.Time { return time.After(t.Sub(c.Now())) }

// report is what -report prints: what every step did, counted in the
// outside world and in the journal.
type report struct {
	Status        string         `json:"status"`
	AttentionStep string         `json:"attention_step,omitempty"`
	Executions    map[string]int `json:"executions"`      // from the effects log
	ScoringCalls  int            `json:"scoring_calls"`   // calls the scoring service saw
	Charges       int            `json:"scoring_charges"` // calls it charged for
	ScoreRows     int            `json:"score_rows"`      // rows in the scores table
	Emails        map[string]int `json:"emails"`          // per recipient
	Steps         map[string]int `json:"journal_rows"`    // resume_steps rows per step name
}

func makeReport(ctx context.Context, j resume.Journal, w *world, runID string) (report, error) {
	r := report{Executions: map[string]int{}, Steps: map[string]int{}}
	run, steps, err := j.LoadRun(ctx, runID)
	if err != nil && !errors.Is(err, resume.ErrRunNotFound) {
		return r, err
	}
	r.Status, r.AttentionStep = string(run.Status), run.AttentionStep
	for _, s := range steps {
		r.Steps[s.Name]++
	}
	lines, err := w.effects.lines()
	if err != nil {
		return r, err
	}
	for _, l := range lines {
		if step, rest, ok := strings.Cut(l, " "); ok && strings.Contains(rest, "run="+runID+" ") && strings.Contains(rest, " start=") {
			r.Executions[step]++
		}
	}
	r.ScoringCalls, r.Charges = w.scoring.calls(), w.scoring.charges()
	if r.ScoreRows, err = w.scores.Count(ctx); err != nil {
		return r, err
	}
	if r.Emails, err = w.outbox.sent(); err != nil {
		return r, err
	}
	return r, nil
}
