package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/resumegen/resumegen/runtime/resume"
)

// world is the outside world the steps act on, kept in a folder so that it
// outlives the processes the demo and the tests kill: effects.log has one
// line per step execution, "STEP RUN KEY TEXT", and payments.log one line
// per payment the payment service made, "IDEMPOTENCY-KEY PAYEE CENTS ID".
type world struct {
	mu  sync.Mutex
	dir string
}

// openWorld returns the world in dir, creating the folder.
func openWorld(dir string) (*world, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("world folder: %w", err)
	}
	return &world{dir: dir}, nil
}

type worldKey struct{}

func withWorld(ctx context.Context, w *world) context.Context {
	return context.WithValue(ctx, worldKey{}, w)
}

func worldFrom(ctx context.Context) *world {
	w, ok := ctx.Value(worldKey{}).(*world)
	if !ok {
		panic("approval: the steps need the world in their context (withWorld)")
	}
	return w
}

// act logs one execution of step, about what.
func (w *world) act(ctx context.Context, step, what, text string) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.appendLine("effects.log", fmt.Sprintf("%s %s %s", step, where(ctx), oneLine(what+": "+text)))
}

// email logs one email sent by step to to.
func (w *world) email(ctx context.Context, step, to, text string) error {
	return w.act(ctx, step, "mail to "+to, text)
}

// pay pays cents to payee once per idempotency key, and returns the
// payment's id; a key paid before gets the first payment's id back.
func (w *world) pay(ctx context.Context, key, payee string, cents int) (string, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.appendLine("effects.log", fmt.Sprintf("Pay %s pay %d cents to %s", where(ctx), cents, payee)); err != nil {
		return "", err
	}
	if key == "" {
		return "", fmt.Errorf("payment service: a payment needs an idempotency key")
	}
	paid, err := w.payments()
	if err != nil {
		return "", err
	}
	for _, p := range paid {
		if p.key == key {
			return p.id, nil
		}
	}
	id := "pay-" + strings.TrimPrefix(key, "rg-")[:8]
	return id, w.appendLine("payments.log", fmt.Sprintf("%s %s %d %s", key, payee, cents, id))
}

// where is "RUN KEY" of the step executing in ctx.
func where(ctx context.Context) string {
	if info, ok := resume.StepFromContext(ctx); ok {
		return info.RunID + " " + info.StepKey
	}
	return "- -"
}

func oneLine(s string) string { return strings.ReplaceAll(s, "\n", " ") }

// appendLine appends one line to the world's file name, synced: a SIGKILL
// right after it does not lose it.
func (w *world) appendLine(name, line string) error {
	f, err := os.OpenFile(filepath.Join(w.dir, name), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	if _, err := fmt.Fprintln(f, line); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// lines reads the world's file name; a missing file is empty.
func (w *world) lines(name string) ([][]string, error) {
	f, err := os.Open(filepath.Join(w.dir, name))
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out [][]string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		out = append(out, strings.Fields(sc.Text()))
	}
	return out, sc.Err()
}

// payment is one line of payments.log.
type payment struct {
	key, payee, id string
	cents          int
}

func (w *world) payments() ([]payment, error) {
	lines, err := w.lines("payments.log")
	if err != nil {
		return nil, err
	}
	out := make([]payment, 0, len(lines))
	for _, f := range lines {
		if len(f) != 4 {
			return nil, fmt.Errorf("payments.log: bad line %q", strings.Join(f, " "))
		}
		cents, err := strconv.Atoi(f[2])
		if err != nil {
			return nil, fmt.Errorf("payments.log: bad line %q", strings.Join(f, " "))
		}
		out = append(out, payment{key: f[0], payee: f[1], cents: cents, id: f[3]})
	}
	return out, nil
}

// tally is what the world went through, for one run: executions per
// step, emails per recipient, payments made and their total.
type tally struct {
	Executions map[string]int `json:"executions"`
	Emails     map[string]int `json:"emails"`
	Payments   int            `json:"payments"`
	Paid       int            `json:"paid_cents"`
}

func (w *world) tally(runID string) (tally, error) {
	t := tally{Executions: map[string]int{}, Emails: map[string]int{}}
	effects, err := w.lines("effects.log")
	if err != nil {
		return t, err
	}
	for _, f := range effects {
		if len(f) < 3 || f[1] != runID {
			continue
		}
		t.Executions[f[0]]++
		if len(f) >= 6 && f[3] == "mail" && f[4] == "to" {
			t.Emails[strings.TrimSuffix(f[5], ":")]++
		}
	}
	paid, err := w.payments()
	if err != nil {
		return t, err
	}
	for _, p := range paid {
		t.Payments++
		t.Paid += p.cents
	}
	return t, nil
}

// summary renders the tally for people.
func (t tally) summary() string {
	return fmt.Sprintf("executions %s; emails %s; %d payment(s), %d cents",
		counts(t.Executions), counts(t.Emails), t.Payments, t.Paid)
}

func counts(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s=%d", k, m[k])
	}
	return strings.Join(parts, " ")
}
