package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/user"
	"strings"
	"time"

	"github.com/resumegen/resumegen/internal/runops"
	"github.com/resumegen/resumegen/internal/termesc"
	"github.com/resumegen/resumegen/runtime/journal"
	"github.com/resumegen/resumegen/runtime/openjournal"
)

// Exit statuses.
const (
	exitOK    = 0
	exitFail  = 1 // refused, failed, not found, unreachable
	exitUsage = 2
)

const usage = `resumectl is the operator's tool for a resumegen journal.

usage:
  resumectl runs list [-status S[,S]] [-workflow W] [-version V] [-since DURATION] [-limit N] [-oldest]
  resumectl runs show ID
  resumectl runs watch ID [-interval D]
  resumectl runs resolve ID STEP -done [-result JSON] | -redo
  resumectl runs retry ID | FILTER
  resumectl runs cancel ID | FILTER [-running]
  resumectl runs accept-version ID [-to V] | FILTER -to V
  (FILTER: -workflow W -version V -status S, any of them, and -dry-run or -yes)
  resumectl runs signal ID NAME JSON [-unawaited]
  resumectl runs purge -older-than D [-workflow W] [-status S] [-dry-run | -yes]
  resumectl check-deploy [packages]
  resumectl schedules list
  resumectl queues list
  resumectl ui [-addr 127.0.0.1:8080] [-write] [-public -token-file FILE] [-allow-host NAME]
  resumectl version
  resumectl help [COMMAND]
every command takes, before or after it, -db (a SQLite file or a PostgreSQL DSN;
default $RESUME_DB), -json, and for a sealed journal -key-file FILE (default
$RESUME_KEY_FILE, or the keys in $RESUME_KEYS); 'resumectl COMMAND -h' lists its flags
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
	// noDB marks a command that opens no journal.
	noDB bool
}

// options are the flags every command takes.
type options struct {
	db   string
	json bool
	// keyFile and unsealed: the keys of a sealed journal, and writing
	// plaintext to one without them.
	keyFile  string
	unsealed bool
	fs       *flag.FlagSet // the command's own flags are read back from it
	// sealed is what open found: the journal's sealing key ids, and
	// whether resumectl holds a key to open and seal its values.
	sealed sealInfo
}

// run is resumectl without process globals: it parses args, runs the
// command and returns the exit status.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return newCLI(ctx, stdout, stderr, colorful(stdout)).main(args)
}

// newCLI is an invocation writing to stdout and stderr through
// termesc.Writer, in colour on stdout when color.
func newCLI(ctx context.Context, stdout, stderr io.Writer, color bool) *cli {
	ctx = runops.WithActor(ctx, cliActor())
	return &cli{ctx: ctx, stdout: termesc.Writer(stdout, color), stderr: termesc.Writer(stderr, false), color: color, now: time.Now,
		stdin: os.Stdin, tty: isTerminal(os.Stdin)}
}

// cliActor is who resumectl acts as, recorded with every action
// (resume_actions): the operating-system user, on this host.
func cliActor() runops.Actor {
	name := os.Getenv("USER")
	if u, err := user.Current(); err == nil && u.Username != "" {
		name = u.Username
	}
	if name == "" {
		name = fmt.Sprintf("uid %d", os.Getuid())
	}
	host, err := os.Hostname()
	if err != nil {
		host = "unknown host"
	}
	return runops.Actor{Name: name, Origin: host, Via: "resumectl"}
}

// main runs the command args names and returns the exit status. Help
// asked for goes to standard output (exit 0); a usage error prints one
// line saying what is wrong and the command's usage line on standard
// error (exit 2).
func (c *cli) main(args []string) int {
	// Global flags may come before the command (resumectl -db x runs list)
	// as after it.
	globals := &options{}
	gfs := flag.NewFlagSet("resumectl", flag.ContinueOnError)
	gfs.SetOutput(io.Discard)
	globalFlags(gfs, globals, options{})
	err := gfs.Parse(args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		io.WriteString(c.stdout, usage)
		return exitOK
	case err != nil:
		fmt.Fprintf(c.stderr, "resumectl: %v\n%s", err, shortUsage)
		return exitUsage
	}
	args = gfs.Args()
	if len(args) == 0 {
		io.WriteString(c.stderr, shortUsage)
		return exitUsage
	}
	if args[0] == "help" {
		if cmd := findCommand(args[1:]); cmd != nil {
			c.commandUsage(c.stdout, cmd, true)
			return exitOK
		}
		io.WriteString(c.stdout, usage)
		return exitOK
	}
	name := args[0]
	args = args[1:]
	if name == "runs" || name == "schedules" || name == "queues" {
		if len(args) == 0 || args[0] == "-h" || args[0] == "-help" || args[0] == "--help" {
			if len(args) > 0 {
				io.WriteString(c.stdout, usage)
				return exitOK
			}
			fmt.Fprintf(c.stderr, "resumectl: %s: missing subcommand\n%s", name, shortUsage)
			return exitUsage
		}
		name, args = name+" "+args[0], args[1:]
	}
	cmd := findCommand(strings.Fields(name))
	if cmd == nil {
		fmt.Fprintf(c.stderr, "resumectl: unknown command %q\n%s", name, shortUsage)
		return exitUsage
	}
	return c.exec(cmd, args, *globals)
}

// shortUsage is what a usage error prints after saying what is wrong.
const shortUsage = "usage: resumectl [-db DB] [-json] COMMAND [ARGS]; run 'resumectl help' for the commands\n"

// findCommand returns the command words name ("runs", "list"), or nil.
func findCommand(words []string) *command {
	name := strings.Join(words, " ")
	for _, k := range commands() {
		if k.name == name {
			return &k
		}
	}
	return nil
}

func commands() []command {
	return []command{
		{name: "runs list", use: "[-status S[,S]] [-workflow W] [-version V] [-since DURATION] [-limit N] [-oldest]", run: runsList, flags: listFlags},
		{name: "runs show", use: "ID", run: runsShow},
		{name: "runs watch", use: "ID [-interval D]", run: runsWatch, flags: watchFlags},
		{name: "runs resolve", use: "ID STEP -done [-result JSON] | -redo", run: runsResolve, flags: resolveFlags},
		{name: "runs retry", use: "ID | [-workflow W] [-version V] [-status S] [-dry-run | -yes]", run: runsRetry, flags: retryFlags},
		{name: "runs cancel", use: "ID | [-workflow W] [-version V] [-status S] [-dry-run | -yes] [-running]", run: runsCancel, flags: cancelFlags},
		{name: "runs accept-version", use: "ID [-to V] | [-workflow W] [-version V] [-status S] -to V [-dry-run | -yes]", run: runsAcceptVersion, flags: acceptFlags},
		{name: "runs fork", use: "ID -from STEP [-input JSON] [-id NEWID]", run: runsFork, flags: forkFlags},
		{name: "runs signal", use: "ID NAME JSON [-unawaited]", run: runsSignal, flags: signalFlags},
		{name: "runs purge", use: "-older-than D [-workflow W] [-status S[,S]] [-batch N] [-dry-run | -yes]", run: runsPurge, flags: purgeFlags},
		{name: "check-deploy", use: "[packages]", run: checkDeploy},
		{name: "schedules list", run: schedulesList},
		{name: "queues list", run: queuesList},
		{name: "ui", use: "[-addr 127.0.0.1:8080] [-write] [-public -token-file FILE | -proxy-header H -trusted-proxy CIDR] [-allow-host NAME]", run: runsUI, flags: uiFlags},
		{name: "version", run: versionCmd, noDB: true},
	}
}

// globalFlags registers the flags every command takes on fs, into o, with
// defaults from def (what was given before the command).
func globalFlags(fs *flag.FlagSet, o *options, def options) {
	fs.StringVar(&o.db, "db", def.db, "the journal: a SQLite `file` or a postgres:// DSN (default $RESUME_DB)")
	fs.BoolVar(&o.json, "json", def.json, "print the result as JSON")
	fs.StringVar(&o.keyFile, "key-file", def.keyFile, "the `file` of the keys of a sealed journal, ID:BASE64 a line, the sealing key first (default $RESUME_KEY_FILE; or the keys themselves in $RESUME_KEYS)")
	fs.BoolVar(&o.unsealed, "unsealed", def.unsealed, "write values in plaintext to a sealed journal without its key (workers then park the run as tampered unless they read with resume.ReadUnsealed)")
}

// commandUsage writes cmd's usage line, and with flags its flags.
func (c *cli) commandUsage(w io.Writer, cmd *command, flags bool) {
	fmt.Fprintf(w, "usage: resumectl %s [flags] %s\n", cmd.name, cmd.use)
	if !flags {
		fmt.Fprintf(w, "run 'resumectl %s -h' for its flags\n", cmd.name)
		return
	}
	fs := flag.NewFlagSet("resumectl "+cmd.name, flag.ContinueOnError)
	globalFlags(fs, &options{}, options{})
	if cmd.flags != nil {
		cmd.flags(fs)
	}
	fs.SetOutput(w)
	fmt.Fprintln(w, "flags:")
	fs.PrintDefaults()
}

// exec parses the command's flags, runs it and maps its error to an exit
// status and one line on stderr.
func (c *cli) exec(cmd *command, args []string, globals options) int {
	fs := flag.NewFlagSet("resumectl "+cmd.name, flag.ContinueOnError)
	fs.SetOutput(io.Discard) // errors are printed here, help on stdout
	fs.Usage = func() {}
	o := &options{fs: fs}
	globalFlags(fs, o, globals)
	if cmd.flags != nil {
		cmd.flags(fs)
	}
	pos, err := parseInterspersed(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		c.commandUsage(c.stdout, cmd, true)
		return exitOK
	}
	if err != nil {
		fmt.Fprintf(c.stderr, "resumectl %s: %v\n", cmd.name, err)
		c.commandUsage(c.stderr, cmd, false)
		return exitUsage
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
		c.commandUsage(c.stderr, cmd, false)
		return exitUsage
	case errors.As(err, new(noJournal)):
		fmt.Fprintf(c.stderr, "resumectl %s: %s\n", cmd.name, oneLine(err.Error()))
		return exitUsage
	}
	msg := oneLine(err.Error())
	if errors.Is(err, journal.ErrRunNotFound) {
		msg += " (resumectl runs list shows the runs)"
	}
	fmt.Fprintf(c.stderr, "resumectl %s: %s\n", cmd.name, msg)
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
	j, err = openjournal.Open(ctx, o.db)
	if err != nil {
		return nil, err
	}
	sj, err := c.sealing(o, j)
	if err != nil {
		j.Close()
		return nil, err
	}
	return sj, nil
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
	if err != nil {
		return nil, err
	}
	sj, err := c.sealing(o, j)
	if err != nil {
		j.Close()
		return nil, err
	}
	return sj, nil
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
