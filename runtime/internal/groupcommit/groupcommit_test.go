package groupcommit

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

// waitFor polls cond for up to 10 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// A write that finds a batch under way joins the next one, led by the
// first queued; each caller gets its own outcome; batches hold at most max.
func TestBatchesFormBehindTheLeader(t *testing.T) {
	release := make(chan struct{})
	var mu sync.Mutex
	var batches [][]int
	q := New(3, func(batch []*Write[int]) {
		if batch[0].Op == 0 {
			<-release // the first batch is slow: the others queue
		}
		var ops []int
		for _, w := range batch {
			ops = append(ops, w.Op)
			if w.Op == 4 {
				w.Err = errors.New("four refused")
			}
		}
		mu.Lock()
		batches = append(batches, ops)
		mu.Unlock()
	})
	errs := make([]chan error, 6)
	for i := range errs {
		errs[i] = make(chan error, 1)
		go func() { errs[i] <- q.Do(context.Background(), i) }()
		waitFor(t, "the write to queue", func() bool { return q.Waiting() == i+1 })
	}
	close(release)
	for i, c := range errs {
		err := <-c
		if (i == 4) != (err != nil) {
			t.Errorf("write %d: %v", i, err)
		}
	}
	want := [][]int{{0}, {1, 2, 3}, {4, 5}}
	if len(batches) != len(want) {
		t.Fatalf("batches %v, want %v", batches, want)
	}
	for i := range want {
		if len(batches[i]) != len(want[i]) || batches[i][0] != want[i][0] {
			t.Fatalf("batches %v, want %v", batches, want)
		}
	}
	if n := q.Waiting(); n != 0 {
		t.Errorf("after every write returned, %d waiting", n)
	}
}

// A caller whose context ended before its turn gets its context's error,
// and the commit function sees the write marked so.
func TestGaveUpBeforeItsTurn(t *testing.T) {
	release := make(chan struct{})
	var skipped []int
	q := New(8, func(batch []*Write[int]) {
		if batch[0].Op == 0 {
			<-release
		}
		for _, w := range batch {
			if w.Err != nil {
				skipped = append(skipped, w.Op)
			}
		}
	})
	done := make(chan error, 1)
	go func() { done <- q.Do(context.Background(), 0) }()
	waitFor(t, "the leader", func() bool { return q.Waiting() == 1 })
	ctx, cancel := context.WithCancel(context.Background())
	gone := make(chan error, 1)
	go func() { gone <- q.Do(ctx, 1) }()
	waitFor(t, "the write to queue", func() bool { return q.Waiting() == 2 })
	cancel()
	close(release)
	if err := <-gone; !errors.Is(err, context.Canceled) {
		t.Errorf("the abandoned write: %v, want context.Canceled", err)
	}
	if err := <-done; err != nil {
		t.Errorf("the leader: %v", err)
	}
	if len(skipped) != 1 || skipped[0] != 1 {
		t.Errorf("commit saw as given up %v, want [1]", skipped)
	}
}

// A commit that panics is its leader's panic: the other writes of its
// batch fail (their outcome is unknown), and the queue goes on.
func TestPanickingCommitPassesTheLead(t *testing.T) {
	release := make(chan struct{})
	q := New(8, func(batch []*Write[int]) {
		switch batch[0].Op {
		case 0:
			<-release // 1 and 2 queue behind: the next batch
		case 1:
			panic("commit broke")
		}
	})
	first := make(chan error, 1)
	go func() { first <- q.Do(context.Background(), 0) }()
	waitFor(t, "the leader", func() bool { return q.Waiting() == 1 })
	leader := make(chan any, 1)
	go func() {
		defer func() { leader <- recover() }()
		q.Do(context.Background(), 1)
	}()
	waitFor(t, "write 1 to queue", func() bool { return q.Waiting() == 2 })
	queued := make(chan error, 1)
	go func() { queued <- q.Do(context.Background(), 2) }()
	waitFor(t, "write 2 to queue", func() bool { return q.Waiting() == 3 })
	close(release)
	if err := <-first; err != nil {
		t.Errorf("the first batch: %v", err)
	}
	if p := <-leader; p != "commit broke" {
		t.Errorf("the second batch's leader recovered %v, want its commit's panic", p)
	}
	if err := <-queued; !errors.Is(err, errPanicked) {
		t.Errorf("the other write of the panicking batch: %v, want errPanicked", err)
	}
	if err := q.Do(context.Background(), 3); err != nil {
		t.Errorf("a write after the panic: %v", err)
	}
}

// A batch's context ends when the last of its callers' contexts ends, not
// with the first.
func TestContextEndsWithTheLastCaller(t *testing.T) {
	a, cancelA := context.WithCancel(context.Background())
	b, cancelB := context.WithCancel(context.Background())
	ctx, cancel := Context([]*Write[int]{{Ctx: a}, {Ctx: b}})
	defer cancel()
	cancelA()
	select {
	case <-ctx.Done():
		t.Fatal("the batch's context ended with the first caller's")
	case <-time.After(20 * time.Millisecond):
	}
	cancelB()
	select {
	case <-ctx.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the batch's context outlived every caller's")
	}
}
