package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/resumegen/resumegen/runtime/journal"
	"github.com/resumegen/resumegen/runtime/openjournal"
)

// Exit statuses.
const (
	exitOK    = 0
	exitFail  = 1 // refused, failed, not found, unreachable
	exitUsage = 2
)

const usage = `usage:
  resumectl runs list [-status S[,S]] [-workflow W] [-version V] [-since DURATION]
  resumectl runs show ID
  resumectl runs watch ID [-interval D]
  resumectl runs resolve ID STEP -done [-result JSON] | -redo
  resumectl runs retry ID | FILTER
  resumectl runs cancel ID | FILTER [-running]
  resumectl runs accept-version ID [-to V] | FILTER -to V
  (FILTER: -workflow W -version V -status S, any of them, and -dry-run or -yes)
  resumectl runs signal ID NAME JSON [-unawaited]
  resumectl check-deploy [packages]
  resumectl schedules list
  resumectl ui [-addr 127.0.0.1:8080] [-write] [-public]
every command takes -db (a SQLite file or a PostgreSQL DSN; default $RESUME_DB) and -json
`

// usageError is a command line resumectl cannot run: exit status 2.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return usageError{fmt.Sprintf(format, args...)} }

// reported is an error whose explanation is already printed: only the exit
// status is left to give.
type reported struct{ code int }

func (e reported) Error() string { return fmt.Sprintf("exit status %d", e.code) }

// cli is one invocation: where it writes, and how.
type cli struct {
	ctx    context.Context
	stdout io.Writer
	stderr io.Writer
	color  bool
	now    func() time.Time
	// stdin is where a confirmation is read, when tty says it is a
	// terminal.
	stdin io.Reader
	tty   bool
}

// command is one subcommand: its common flags are registered on fs.
type command struct {
	name string
	use  string // the arguments, for the usage line
	run  func(c *cli, o *options, args []string) error
	// flags registers the command's own flags.
	flags func(fs *flag.FlagSet)
}

// options are the flags every command takes.
type options struct {
	db   string
	json bool
	fs   *flag.FlagSet // the command's own flags are read back from it
}

// run is resumectl without process globals: it parses args, runs the
// command and returns the exit status.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	c := &cli{ctx: ctx, stdout: escWriter{stdout}, stderr: escWriter{stderr}, color: colorful(stdout), now: time.Now,
		stdin: os.Stdin, tty: isTerminal(os.Stdin)}
	if len(args) == 0 || args[0] == "-h" || args[0] == "-help" || args[0] == "--help" || args[0] == "help" {
		io.WriteString(c.stderr, usage)
		if len(args) == 0 {
			return exitUsage
		}
		return exitOK
	}
	name := args[0]
	args = args[1:]
	if name == "runs" || name == "schedules" {
		if len(args) == 0 {
			fmt.Fprintf(c.stderr, "resumectl: %s: missing subcommand\n%s", name, usage)
			return exitUsage
		}
		name, args = name+" "+args[0], args[1:]
	}
	var cmd *command
	for _, k := range commands() {
		if k.name == name {
			cmd = &k
		}
	}
	if cmd == nil {
		fmt.Fprintf(c.stderr, "resumectl: unknown command %q\n%s", name, usage)
		return exitUsage
	}
	return c.exec(cmd, args)
}

func commands() []command {
	return []command{
		{name: "runs list", use: "[-status S[,S]] [-workflow W] [-version V] [-since DURATION]", run: runsList, flags: listFlags},
		{name: "runs show", use: "ID", run: runsShow},
		{name: "runs watch", use: "ID [-interval D]", run: runsWatch, flags: watchFlags},
		{name: "runs resolve", use: "ID STEP -done [-result JSON] | -redo", run: runsResolve, flags: resolveFlags},
		{name: "runs retry", use: "ID | [-workflow W] [-version V] [-status S] [-dry-run | -yes]", run: runsRetry, flags: retryFlags},
		{name: "runs cancel", use: "ID | [-workflow W] [-version V] [-status S] [-dry-run | -yes] [-running]", run: runsCancel, flags: cancelFlags},
		{name: "runs accept-version", use: "ID [-to V] | [-workflow W] [-version V] [-status S] -to V [-dry-run | -yes]", run: runsAcceptVersion, flags: acceptFlags},
		{name: "runs signal", use: "ID NAME JSON [-unawaited]", run: runsSignal, flags: signalFlags},
		{name: "check-deploy", use: "[packages]", run: checkDeploy},
		{name: "schedules list", run: schedulesList},
		{name: "ui", use: "[-addr 127.0.0.1:8080] [-write] [-public]", run: runsUI, flags: uiFlags},
	}
}

// exec parses the command's flags, runs it and maps its error to an exit
// status and one line on stderr.
func (c *cli) exec(cmd *command, args []string) int {
	fs := flag.NewFlagSet("resumectl "+cmd.name, flag.ContinueOnError)
	fs.SetOutput(c.stderr)
	o := &options{fs: fs}
	fs.StringVar(&o.db, "db", "", "the journal: a SQLite `file` or a postgres:// DSN (default $RESUME_DB)")
	fs.BoolVar(&o.json, "json", false, "print the result as JSON")
	if cmd.flags != nil {
		cmd.flags(fs)
	}
	fs.Usage = func() {
		fmt.Fprintf(c.stderr, "usage: resumectl %s [-db DB] [-json] %s\n", cmd.name, cmd.use)
		fs.PrintDefaults()
	}
	pos, err := parseInterspersed(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	if err != nil {
		return exitUsage // the flag package printed why
	}
	if o.db == "" {
		o.db = os.Getenv("RESUME_DB")
	}
	err = cmd.run(c, o, pos)
	var ue usageError
	var rep reported
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &rep):
		return rep.code
	case errors.As(err, &ue):
		fmt.Fprintf(c.stderr, "resumectl %s: %s\n", cmd.name, ue.msg)
		fs.Usage()
		return exitUsage
	case errors.As(err, new(noJournal)):
		fmt.Fprintf(c.stderr, "resumectl %s: %s\n", cmd.name, oneLine(err.Error()))
		return exitUsage
	}
	fmt.Fprintf(c.stderr, "resumectl %s: %s\n", cmd.name, oneLine(err.Error()))
	return exitFail
}

// parseInterspersed parses flags wherever they are among the arguments
// (runs resolve ID STEP -done), and returns the arguments.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if len(args) > len(rest) && args[len(args)-len(rest)-1] == "--" {
			return append(pos, rest...), nil // everything after -- is an argument
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// oneLine folds a multi-line message onto one line, dropping repeated
// lines (a driver reports the same failure once per address it tried).
func oneLine(s string) string {
	var parts []string
	seen := map[string]bool{}
	for _, l := range strings.Split(s, "\n") {
		l = strings.Join(strings.Fields(l), " ")
		if l != "" && !seen[l] {
			seen[l] = true
			parts = append(parts, l)
		}
	}
	var b strings.Builder
	for i, p := range parts {
		if i > 0 {
			if strings.HasSuffix(parts[i-1], ":") {
				b.WriteString(" ")
			} else {
				b.WriteString("; ")
			}
		}
		b.WriteString(p)
	}
	return b.String()
}

// open opens the journal o names for a command that changes runs. A
// SQLite file must exist (an operator's typo must not create an empty
// journal), and a database must already hold a journal: resumectl never
// creates one. It may upgrade an older journal's schema, as a worker would.
func (c *cli) open(o *options) (journal.Journal, error) {
	j, err := c.openReadOnly(o)
	if err != nil {
		if !errors.Is(err, journal.ErrOlderJournal) {
			return nil, err
		}
	} else {
		j.Close()
	}
	ctx, cancel := context.WithTimeout(c.ctx, 20*time.Second)
	defer cancel()
	return openjournal.Open(ctx, o.db)
}

// openReadOnly opens the journal o names for a command that only reads
// (runs list, runs show, check-deploy): nothing in the database or beside
// it is created or changed. A database without a journal is said so, with
// exit status 2.
func (c *cli) openReadOnly(o *options) (journal.Journal, error) {
	if o.db == "" {
		return nil, usagef("no database: pass -db (a SQLite file or a postgres:// DSN) or set RESUME_DB")
	}
	ctx, cancel := context.WithTimeout(c.ctx, 20*time.Second)
	defer cancel()
	j, err := openjournal.OpenReadOnly(ctx, o.db)
	if errors.Is(err, journal.ErrNoJournal) {
		return nil, noJournal{err}
	}
	return j, err
}

// noJournal is a database that holds no journal: exit status 2, as the
// -db flag named the wrong database.
type noJournal struct{ err error }

func (e noJournal) Error() string {
	return e.err.Error() + " (is -db the right database? resumectl reads journals that a program using resumegen created)"
}
func (e noJournal) Unwrap() error { return e.err }

// args checks the number of positional arguments.
// openRun takes the one argument of a command about a run, its id, and
// opens the journal; the caller closes it.
func (c *cli) openRun(o *options, args []string) (journal.Journal, string, error) {
	if err := wantArgs(args, "ID"); err != nil {
		return nil, "", err
	}
	j, err := c.open(o)
	if err != nil {
		return nil, "", err
	}
	return j, args[0], nil
}

// openRunReadOnly is openRun for a command that only reads.
func (c *cli) openRunReadOnly(o *options, args []string) (journal.Journal, string, error) {
	if err := wantArgs(args, "ID"); err != nil {
		return nil, "", err
	}
	j, err := c.openReadOnly(o)
	if err != nil {
		return nil, "", err
	}
	return j, args[0], nil
}

func wantArgs(args []string, names ...string) error {
	if len(args) != len(names) {
		return usagef("want %d argument(s), %s; got %d", len(names), strings.Join(names, " "), len(args))
	}
	return nil
}
