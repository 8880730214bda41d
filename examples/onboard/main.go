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
//	onboard [-db PATH] [-run ID] [-outbox DIR] [-crash STEP:POINT] [-resolve STEP:done|redo] [-report]
//
// -crash makes the process die at POINT (before, effect or after) of STEP.
// Run it again with the same -db, -run and -outbox to resume. -resolve
// settles a step that waits for a person before resuming. -report prints,
// as JSON, what every step did and exits. Exit status: 0 succeeded, 3 the
// run needs attention, 1 otherwise.
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
	"strings"

	"github.com/resumegen/resumegen/runtime/resume"
	"github.com/resumegen/resumegen/runtime/sqlitejournal"
)

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}

// config is one invocation's flags.
type config struct {
	db, runID, outbox, crash, resolve string
	report                            bool
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
	fs.StringVar(&c.db, "db", "onboard.db", "journal `file` (SQLite)")
	fs.StringVar(&c.runID, "run", "onboard-1", "run `id`; also the customer to onboard")
	fs.StringVar(&c.outbox, "outbox", "", "`folder` of sent emails (default: outbox beside -db)")
	fs.StringVar(&c.crash, "crash", "", "die with SIGKILL at `STEP:POINT`, POINT one of before, effect, after")
	fs.StringVar(&c.resolve, "resolve", "", "settle a step waiting for a person, `STEP:done` or STEP:redo, then resume")
	fs.BoolVar(&c.report, "report", false, "print what every step did, as JSON, and exit")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "onboard: unexpected arguments %q\n", fs.Args())
		return 2
	}
	if c.outbox == "" {
		c.outbox = filepath.Join(filepath.Dir(c.db), "outbox")
	}
	code, err := runOnce(ctx, c, stdout)
	if err != nil {
		fmt.Fprintln(stderr, "onboard:", err)
	}
	return code
}

// openWorld opens the journal and the world's files beside it.
func openWorld(ctx context.Context, c config) (*sqlitejournal.Journal, *world, error) {
	if err := os.MkdirAll(c.outbox, 0o755); err != nil {
		return nil, nil, err
	}
	j, err := sqlitejournal.Open(ctx, c.db)
	if err != nil {
		return nil, nil, err
	}
	if _, err := j.DB().ExecContext(ctx, `CREATE TABLE IF NOT EXISTS scores (
		record_id TEXT NOT NULL, owner TEXT NOT NULL, points INTEGER NOT NULL)`); err != nil {
		j.Close()
		return nil, nil, fmt.Errorf("create scores table: %w", err)
	}
	w := &world{
		db:      j.DB(),
		scoring: &scoringService{ledger: &appendLog{path: c.db + ".scoring.log"}},
		outbox:  &outbox{dir: c.outbox},
		effects: &appendLog{path: c.db + ".effects.log"},
	}
	return j, w, nil
}

func runOnce(ctx context.Context, c config, stdout io.Writer) (int, error) {
	j, w, err := openWorld(ctx, c)
	if err != nil {
		return 1, err
	}
	defer j.Close()
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
	opts := []resume.Option{resume.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))}
	if c.crash != "" {
		f, err := resume.ParseFault(c.crash)
		if err != nil {
			return 2, err
		}
		opts = append(opts, resume.WithFault(f))
	}
	e := resume.NewEngine(j, opts...)
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

	sum, err := resume.Run(withWorld(ctx, w), e, c.runID, Onboard, Input{CustomerID: c.runID})
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

func makeReport(ctx context.Context, j *sqlitejournal.Journal, w *world, runID string) (report, error) {
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
		if step, rest, ok := strings.Cut(l, " "); ok && strings.Contains(rest, "run="+runID+" ") {
			r.Executions[step]++
		}
	}
	r.ScoringCalls, r.Charges = w.scoring.calls(), w.scoring.charges()
	if err := j.DB().QueryRowContext(ctx, `SELECT count(*) FROM scores`).Scan(&r.ScoreRows); err != nil {
		return r, err
	}
	if r.Emails, err = w.outbox.sent(); err != nil {
		return r, err
	}
	return r, nil
}
