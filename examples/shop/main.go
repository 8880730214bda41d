// Command shop checks an order out with a workflow that is a method of the
// struct holding its dependencies (resume.WithReceiver), takes two inputs
// and has steps of several results, one without an error, a journaled
// time.Now, and a deferred refund. Its test kills it at every step and
// resumes it.
//
// Usage:
//
//	shop -db FILE -ledger FILE -run ID [-items a,b] [-gift] [-crash STEP:POINT]
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"

	"github.com/resumegen/resumegen/runtime/resume"
	"github.com/resumegen/resumegen/runtime/sqlitejournal"
)

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("shop", flag.ContinueOnError)
	fs.SetOutput(stderr)
	db := fs.String("db", "shop.db", "journal `file` (SQLite)")
	ledgerPath := fs.String("ledger", "shop.ledger", "the shop's ledger `file`: one line per step execution")
	runID := fs.String("run", "order-1", "run `id`, also the order's")
	items := fs.String("items", "book,pen", "comma-separated `items`")
	gift := fs.Bool("gift", false, "wrap the order as a gift")
	crash := fs.String("crash", "", "die with SIGKILL at `STEP:POINT`")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	j, err := sqlitejournal.Open(ctx, *db)
	if err != nil {
		fmt.Fprintln(stderr, "shop:", err)
		return 1
	}
	defer j.Close()
	shop := &Shop{ledger: &ledger{path: *ledgerPath}, prices: map[string]int{"book": 1200, "pen": 150, "broken": 10}}
	opts := []resume.Option{resume.WithReceiver(shop), resume.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))}
	if *crash != "" {
		f, err := resume.ParseFault(*crash)
		if err != nil {
			fmt.Fprintln(stderr, "shop:", err)
			return 2
		}
		opts = append(opts, resume.WithFault(f))
	}
	o := Order{ID: *runID, Items: strings.Split(*items, ",")}
	rec, err := resume.Run2(ctx, resume.NewEngine(j, opts...), *runID, shop.Checkout, o, Options{Gift: *gift})
	if err != nil {
		fmt.Fprintln(stderr, "shop:", err)
		return 1
	}
	if err := json.NewEncoder(stdout).Encode(rec); err != nil {
		return 1
	}
	return 0
}

// ledger is the outside world: every step execution appends "STEP KEY
// DELTA" to its file, which outlives the processes the test kills.
type ledger struct {
	mu   sync.Mutex
	path string
}

func (l *ledger) record(ctx context.Context, step string, delta int) {
	key := "-"
	if info, ok := resume.StepFromContext(ctx); ok {
		key = info.StepKey
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	f, err := os.OpenFile(l.path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		panic(err)
	}
	defer f.Close()
	fmt.Fprintf(f, "%s %s %d\n", step, key, delta)
}

// readLedger counts executions by step key and sums the deltas.
func readLedger(path string) (map[string]int, int, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	execs, balance := map[string]int{}, 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var step, key string
		var d int
		if _, err := fmt.Sscanf(sc.Text(), "%s %s %d", &step, &key, &d); err != nil {
			return nil, 0, err
		}
		execs[key]++
		balance += d
	}
	return execs, balance, sc.Err()
}
