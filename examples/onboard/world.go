package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/resumegen/resumegen/runtime/resume"
)

// world is the outside world the steps touch: the scores table, a paid
// scoring service, an outbox of sent emails, and a log of every step
// execution. Each keeps its record durably, so what happened survives a
// killed process and can be counted afterwards.
type world struct {
	scores  scoreStore
	scoring *scoringService
	outbox  *outbox
	effects *appendLog
	// delay slows every step down (half before its effect, half after), so
	// that a kill can land inside it.
	delay time.Duration
	// fail names a step that fails, permanently, in this process (-fail).
	fail string
}

// openWorld returns the world whose files live in dir.
//
// It creates the world's folder, the outbox and both logs now, so that a
// folder it cannot make is an error before any step runs, not a panic
// inside one (the default ./onboard-world of a PostgreSQL -db was never
// created).
func openWorld(dir, outboxDir string, scores scoreStore, delay time.Duration) (*world, error) {
	for _, d := range []string{dir, outboxDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, fmt.Errorf("world folder: %w", err)
		}
	}
	w := &world{
		scores:  scores,
		scoring: &scoringService{ledger: &appendLog{path: filepath.Join(dir, "scoring.log")}},
		outbox:  &outbox{dir: outboxDir},
		effects: &appendLog{path: filepath.Join(dir, "effects.log")},
		delay:   delay,
	}
	for _, l := range []*appendLog{w.scoring.ledger, w.effects} {
		f, err := os.OpenFile(l.path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return nil, fmt.Errorf("world: %w", err)
		}
		f.Close()
	}
	return w, nil
}

type worldKey struct{}

func withWorld(ctx context.Context, w *world) context.Context {
	return context.WithValue(ctx, worldKey{}, w)
}

func worldFrom(ctx context.Context) *world {
	w, ok := ctx.Value(worldKey{}).(*world)
	if !ok {
		panic("onboard: the steps need the world in their context (withWorld)")
	}
	return w
}

// track logs the start of one execution of step, before it does anything
// outside, and returns the function that logs its end:
//
//	STEP run=ID key=KEY attempt=N pid=PID start=UNIXNANO
//	STEP run=ID key=KEY attempt=N pid=PID end=UNIXNANO
func (w *world) track(ctx context.Context, step string) (end func()) {
	info, _ := resume.StepFromContext(ctx)
	line := fmt.Sprintf("%s run=%s key=%s attempt=%d pid=%d", step, info.RunID, info.StepKey, info.Attempt, os.Getpid())
	w.effects.append(fmt.Sprintf("%s start=%d", line, time.Now().UnixNano()))
	time.Sleep(w.delay / 2)
	return func() {
		time.Sleep(w.delay / 2)
		w.effects.append(fmt.Sprintf("%s end=%d", line, time.Now().UnixNano()))
	}
}

// injectedFailure returns a permanent error when -fail names step, so a
// run can be made to fail there and retried (resumectl runs retry).
func (w *world) injectedFailure(step string) error {
	if w.fail != step {
		return nil
	}
	return resume.Permanent(fmt.Errorf("%s: failure injected with -fail", step))
}

// appendLog is a file of lines, appended with O_APPEND so lines of several
// processes never interleave, and read back to count.
type appendLog struct {
	mu   sync.Mutex
	path string
}

func (l *appendLog) append(line string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	f, err := os.OpenFile(l.path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		panic(fmt.Sprintf("onboard: %v", err)) // the demo cannot count without it
	}
	defer f.Close()
	if _, err := f.WriteString(line + "\n"); err != nil {
		panic(fmt.Sprintf("onboard: %v", err))
	}
}

// lines returns the log's lines; a missing log has none.
func (l *appendLog) lines() ([]string, error) {
	f, err := os.Open(l.path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []string
	s := bufio.NewScanner(f)
	for s.Scan() {
		out = append(out, s.Text())
	}
	return out, s.Err()
}

// countPrefix counts the log's lines that start with prefix and a space.
func (l *appendLog) countPrefix(prefix string) int {
	lines, _ := l.lines()
	n := 0
	for _, line := range lines {
		if strings.HasPrefix(line, prefix+" ") {
			n++
		}
	}
	return n
}

// scoringService is a fake paid API that honours idempotency keys: the
// first call with a key is charged, a repeat is answered free.
type scoringService struct {
	ledger *appendLog // "call KEY charged|free"
}

// Score scores recs, charging once per key.
func (s *scoringService) Score(ctx context.Context, key string, recs []Record) ([]Score, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if key == "" {
		key = "(none)"
	}
	charged := "charged"
	if s.seen(key) {
		charged = "free"
	}
	s.ledger.append(fmt.Sprintf("call %s %s", key, charged))
	out := make([]Score, len(recs))
	for i, r := range recs {
		out[i] = Score{RecordID: r.ID, Owner: r.Owner, Points: r.Value * 10}
	}
	return out, nil
}

func (s *scoringService) seen(key string) bool {
	lines, _ := s.ledger.lines()
	for _, l := range lines {
		if strings.HasPrefix(l, "call "+key+" ") {
			return true
		}
	}
	return false
}

// calls and charges count the service's calls and what it charged.
func (s *scoringService) calls() int { return s.ledger.countPrefix("call") }
func (s *scoringService) charges() int {
	lines, _ := s.ledger.lines()
	n := 0
	for _, l := range lines {
		if strings.HasSuffix(l, " charged") {
			n++
		}
	}
	return n
}

// outbox stands in for an SMTP server: each sent email is a new file whose
// name starts with the recipient's address, then "-" and a unique suffix.
type outbox struct {
	dir string
}

// Send writes one email; tag (the run and step key) goes into a header.
func (o *outbox) Send(to, tag, body string) error {
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		return err
	}
	name := fmt.Sprintf("%s-%d-%s.eml", to, time.Now().UnixNano(), hex.EncodeToString(b[:]))
	msg := fmt.Sprintf("To: %s\nX-Resume-Step: %s\nSubject: your records were scored\n\n%s\n", to, tag, body)
	if err := os.WriteFile(filepath.Join(o.dir, name), []byte(msg), 0o644); err != nil {
		return fmt.Errorf("send email to %s: %w", to, err)
	}
	return nil
}

// sent counts the emails to each recipient.
func (o *outbox) sent() (map[string]int, error) {
	entries, err := os.ReadDir(o.dir)
	if err != nil && !os.IsNotExist(err) {
		return nil, err
	}
	out := map[string]int{}
	for _, e := range entries {
		name := e.Name()
		if i := strings.LastIndex(name, "@"); i >= 0 && strings.HasSuffix(name, ".eml") {
			if j := strings.Index(name[i:], "-"); j >= 0 {
				out[name[:i+j]]++
			}
		}
	}
	return out, nil
}
