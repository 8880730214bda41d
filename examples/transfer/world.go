package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/resumegen/resumegen/runtime/resume"
)

// world is the outside world the steps act on: an append-only effects log,
// one line per step execution, "STEP KEY ACCOUNT DELTA". Its file outlives
// the processes the demo and the tests kill.
type world struct {
	mu   sync.Mutex
	path string
}

type worldKey struct{}

func withWorld(ctx context.Context, w *world) context.Context {
	return context.WithValue(ctx, worldKey{}, w)
}

func worldOf(ctx context.Context) *world {
	w, ok := ctx.Value(worldKey{}).(*world)
	if !ok {
		panic("transfer: no world in the context")
	}
	return w
}

// effect is one line of the log.
type effect struct {
	Step, Key, Account string
	Delta              int
}

// record appends one execution of step to the log, under the journal key
// the step runs as ("-" outside a run).
func record(ctx context.Context, step, account string, delta int) {
	w := worldOf(ctx)
	key := "-"
	if info, ok := resume.StepFromContext(ctx); ok {
		key = info.StepKey
	}
	if account == "" {
		account = "-"
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	f, err := os.OpenFile(w.path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		panic(err) // nothing can be counted without it
	}
	defer f.Close()
	if _, err := fmt.Fprintf(f, "%s %s %s %d\n", step, key, account, delta); err != nil {
		panic(err)
	}
}

// executions counts the logged executions of step.
func executions(ctx context.Context, step string) int {
	w := worldOf(ctx)
	w.mu.Lock()
	defer w.mu.Unlock()
	effects, err := readEffects(w.path)
	if err != nil {
		panic(err)
	}
	n := 0
	for _, e := range effects {
		if e.Step == step {
			n++
		}
	}
	return n
}

// readEffects reads the log; a missing log is empty.
func readEffects(path string) ([]effect, error) {
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []effect
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) != 4 {
			return nil, fmt.Errorf("%s: bad line %q", path, sc.Text())
		}
		d, err := strconv.Atoi(fields[3])
		if err != nil {
			return nil, fmt.Errorf("%s: bad line %q", path, sc.Text())
		}
		out = append(out, effect{fields[0], fields[1], fields[2], d})
	}
	return out, sc.Err()
}

// balances sums the log's deltas per account.
func balances(effects []effect) map[string]int {
	out := map[string]int{}
	for _, e := range effects {
		if e.Account != "-" {
			out[e.Account] += e.Delta
		}
	}
	return out
}
