// Command transfer is resumegen's example of the replay rules: a money
// transfer written as a saga (reserve, withdraw, deposit, notify; a refused
// deposit is compensated in reverse order), killed with SIGKILL and
// resumed. Read transfer.go first: it is plain Go, and every rule a resumed
// run must follow is visible there.
//
// With no flags it narrates a demo in a temporary folder: each scene runs a
// transfer in a child process that kills itself at a chosen point, resumes
// it in another, and compares what the bank saw with an uninterrupted run.
//
// Usage:
//
//	transfer -db PATH|DSN -world FILE -run ID [-to ACCOUNT] [-amount CENTS] [-crash STEP:POINT] [-lease D]
//
// -db is a SQLite file or a postgres:// DSN. -world is the effects log the
// pretend bank appends to. -crash makes the process die at POINT (before,
// effect or after) of STEP (a step name or key, e.g. Send[bob]). Run it again
// with the same flags, without -crash, to resume (on PostgreSQL once the
// killed process's -lease, 30s by default, expired: until then the run is
// busy). It prints the receipt as JSON. Exit status: 0 succeeded, 1
// otherwise.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/resumegen/resumegen/runtime/openjournal"
	"github.com/resumegen/resumegen/runtime/resume"
)

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		if err := demo(ctx, stdout); err != nil {
			fmt.Fprintln(stderr, "transfer demo:", err)
			return 1
		}
		return 0
	}
	fs := flag.NewFlagSet("transfer", flag.ContinueOnError)
	fs.SetOutput(stderr)
	db := fs.String("db", "transfer.db", "journal: a SQLite `file` or a postgres:// DSN")
	worldPath := fs.String("world", "transfer.effects", "the bank's effects log `file`")
	runID := fs.String("run", "t-1", "run `id`, also the order's id")
	to := fs.String("to", "bob", "payee `account` (\"closed\" is refused once)")
	amount := fs.Int("amount", 5000, "`cents` to move (over 100000 is refused once)")
	crash := fs.String("crash", "", "die with SIGKILL at `STEP:POINT`")
	lease := fs.Duration("lease", 30*time.Second, "how long the run is held without renewal before another process may take it (on PostgreSQL, how long a killed process's run waits)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	rec, err := transfer(ctx, *db, *worldPath, *crash, *lease, Order{ID: *runID, From: "alice", To: *to, Amount: *amount})
	if err != nil {
		fmt.Fprintln(stderr, "transfer:", err)
		return 1
	}
	if err := json.NewEncoder(stdout).Encode(rec); err != nil {
		fmt.Fprintln(stderr, "transfer:", err)
		return 1
	}
	return 0
}

// transfer runs (or resumes) the order's run to its end in this process.
func transfer(ctx context.Context, db, worldPath, crash string, lease time.Duration, o Order) (Receipt, error) {
	j, err := openjournal.Open(ctx, db)
	if err != nil {
		return Receipt{}, err
	}
	defer j.Close()
	opts := []resume.Option{resume.WithLease(lease), resume.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))}
	if crash != "" {
		f, err := resume.ParseFault(crash)
		if err != nil {
			return Receipt{}, err
		}
		opts = append(opts, resume.WithFault(f))
	}
	ctx = withWorld(ctx, &world{path: worldPath})
	return resume.Run(ctx, resume.NewEngine(j, opts...), o.ID, Transfer, o)
}
