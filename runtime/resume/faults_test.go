package resume

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"
)

func panicsWith(v any) { panic(v) }

func TestRecoveredPanicStartsAtThePanic(t *testing.T) {
	e := NewEngine(nil)
	st := &runState{e: e}
	_, p, err := st.callBody(context.Background(), func(context.Context) (json.RawMessage, error) {
		panicsWith(io.ErrUnexpectedEOF)
		return nil, nil
	})
	if p == nil || err != error(p) {
		t.Fatalf("callBody returned %v, %v; want the panic as a *PanicError", p, err)
	}
	lines := strings.Split(p.Stack, "\n")
	if !strings.HasPrefix(lines[0], "goroutine ") || !strings.Contains(lines[1], "resume.panicsWith") {
		t.Errorf("stack begins %q; want the goroutine, then the function that panicked", lines[:2])
	}
	if !errors.Is(p, io.ErrUnexpectedEOF) || !strings.HasPrefix(p.Error(), "panic: unexpected EOF\n\ngoroutine ") {
		t.Errorf("PanicError %q does not unwrap to its value or does not say it", p.Error())
	}
	// A crash panic is not recovered.
	e = NewEngine(nil, WithCrashPanics(func(v any) bool { return v == "die" }))
	defer func() {
		if v := recover(); v != "die" {
			t.Errorf("recovered %v; want the crash panic to unwind", v)
		}
	}()
	(&runState{e: e}).callBody(context.Background(), func(context.Context) (json.RawMessage, error) { panic("die") })
}

func TestRetryWrite(t *testing.T) {
	e := NewEngine(nil, WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	down := errors.New("down")
	far := func() time.Time { return time.Now().Add(time.Minute) }
	calls := 0
	err := e.retryWrite(context.Background(), "r", "w", far, func(context.Context) error {
		if calls++; calls < 4 {
			return down
		}
		return nil
	})
	if err != nil || calls != 4 {
		t.Errorf("retry until success: %v after %d calls; want nil after 4", err, calls)
	}
	for _, stop := range []error{ErrLeaseLost, Permanent(down)} {
		calls = 0
		err = e.retryWrite(context.Background(), "r", "w", far, func(context.Context) error { calls++; return stop })
		if calls != 1 || !errors.Is(err, stop) {
			t.Errorf("%v: %d calls, %v; want 1 call, not retried", stop, calls, err)
		}
	}
	calls = 0
	start := time.Now()
	soon := start.Add(150 * time.Millisecond)
	err = e.retryWrite(context.Background(), "r", "w", func() time.Time { return soon }, func(context.Context) error { calls++; return down })
	if !errors.Is(err, down) || calls < 2 || time.Since(start) > time.Second {
		t.Errorf("until the lease expires: %d calls in %v, %v; want several calls, given up near 150ms", calls, time.Since(start), err)
	}
}
