package journaltest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/resumegen/resumegen/runtime/journal"
	"github.com/resumegen/resumegen/runtime/resume"
)

// runClaimBatch proves journal.BatchClaimer (issue 23 §2): a batch takes
// the runs ClaimNext would take one by one, oldest first, by every claim
// rule, and claimers racing never take one run twice.
func runClaimBatch(t *testing.T, h Harness, open func(t *testing.T) journal.Journal) {
	ctx := context.Background()
	const wf = "journaltest.Batched"
	batcher := func(t *testing.T, j journal.Journal) journal.BatchClaimer {
		t.Helper()
		b, ok := j.(journal.BatchClaimer)
		if !ok {
			t.Fatalf("%T does not implement journal.BatchClaimer", j)
		}
		return b
	}
	// create makes a pending run, created after the previous one.
	create := func(t *testing.T, j journal.Journal, id, wf, version, parent string) {
		t.Helper()
		now := time.Now()
		r := journal.RunRecord{RunID: id, Workflow: wf, Version: version, Parent: parent, Input: []byte(`[]`), CreatedAt: now, UpdatedAt: now}
		if _, _, err := j.CreateRun(ctx, r); err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * time.Millisecond) // distinct created_at
	}
	claimOne := func(t *testing.T, j journal.Journal, id, owner string, lease time.Duration) journal.RunRecord {
		t.Helper()
		r, _, err := j.Claim(ctx, journal.ClaimRequest{RunID: id, Owner: owner, Lease: lease})
		if err != nil {
			t.Fatalf("claim %s: %v", id, err)
		}
		return r
	}
	ids := func(runs []journal.ClaimedRun) []string {
		var out []string
		for _, r := range runs {
			out = append(out, r.Run.RunID)
		}
		return out
	}

	t.Run("claim batch takes the oldest claimable runs by ClaimNext's rules", func(t *testing.T) {
		j := open(t)
		b := batcher(t, j)
		req := journal.ClaimNextRequest{Owner: "batcher", Lease: time.Minute, Workflows: []string{wf}}
		create(t, j, "lapsed", wf, "v1", "")
		r := claimOne(t, j, "lapsed", "gone-owner", 300*time.Millisecond)
		stepped := journal.StepRecord{RunID: "lapsed", StepKey: "A", Name: "A", Status: journal.StepSucceeded, Result: []byte(`7`), Attempt: 1, Seq: 1,
			StartedAt: time.Now(), FinishedAt: time.Now()}
		if err := j.WriteStep(ctx, journal.Lease{RunID: "lapsed", Owner: "gone-owner", Epoch: r.Epoch}, stepped); err != nil {
			t.Fatal(err)
		}
		create(t, j, "p1", wf, "v1", "")
		create(t, j, "due", wf, "v1", "")
		r = claimOne(t, j, "due", "sleeper", time.Minute)
		if err := j.FinishRun(ctx, journal.Lease{RunID: "due", Owner: "sleeper", Epoch: r.Epoch},
			journal.RunRecord{Status: journal.StatusWaiting, WaitKind: journal.WaitSleep, WakeAt: time.Now().Add(-time.Second), UpdatedAt: time.Now()}); err != nil {
			t.Fatal(err)
		}
		create(t, j, "later", wf, "v1", "")
		r = claimOne(t, j, "later", "sleeper", time.Minute)
		if err := j.FinishRun(ctx, journal.Lease{RunID: "later", Owner: "sleeper", Epoch: r.Epoch},
			journal.RunRecord{Status: journal.StatusWaiting, WaitKind: journal.WaitSleep, WakeAt: time.Now().Add(time.Hour), UpdatedAt: time.Now()}); err != nil {
			t.Fatal(err)
		}
		create(t, j, "held", wf, "v1", "")
		claimOne(t, j, "held", "live-owner", time.Hour)
		create(t, j, "child", wf, "v1", "p1")
		create(t, j, "other", "journaltest.Other", "v1", "")
		create(t, j, "p2", wf, "v1", "")
		create(t, j, "p3", wf, "v1", "")
		time.Sleep(400 * time.Millisecond) // the lapsed lease lapses

		got, err := b.ClaimBatch(ctx, req, 3)
		if err != nil {
			t.Fatal(err)
		}
		if want := []string{"lapsed", "p1", "due"}; !slices.Equal(ids(got), want) {
			t.Fatalf("first batch of 3 = %v, want %v (the oldest claimable, in order)", ids(got), want)
		}
		for _, c := range got {
			if c.Err != nil || c.Run.Status != journal.StatusRunning || c.Run.LeaseOwner != "batcher" || c.Run.LeaseUntil.IsZero() {
				t.Errorf("claimed %s: %s owner %q lease %v err %v, want running under batcher", c.Run.RunID, c.Run.Status, c.Run.LeaseOwner, c.Run.LeaseUntil, c.Err)
			}
		}
		if got[0].Run.Epoch != 2 || len(got[0].Steps) != 1 || got[0].Steps[0].StepKey != "A" || string(got[0].Steps[0].Result) != `7` {
			t.Errorf("lapsed run: epoch %d, steps %+v, want epoch 2 and its step A = 7", got[0].Run.Epoch, got[0].Steps)
		}
		if len(got[1].Steps) != 0 {
			t.Errorf("p1 comes with steps %+v, want none", got[1].Steps)
		}
		if got[2].Run.WakeAt.IsZero() {
			t.Errorf("the due run was claimed without its wake-up time: the engine cannot tell its sleep is over")
		}
		got, err = b.ClaimBatch(ctx, req, 10)
		if err != nil {
			t.Fatal(err)
		}
		if want := []string{"p2", "p3"}; !slices.Equal(ids(got), want) {
			t.Fatalf("second batch of up to 10 = %v, want %v (not a child run, another workflow, a run asleep or held)", ids(got), want)
		}
		if got, err := b.ClaimBatch(ctx, req, 10); !errors.Is(err, journal.ErrNoRunReady) || len(got) != 0 {
			t.Fatalf("third batch = %v, %v, want none and ErrNoRunReady", ids(got), err)
		}
		r, _, err = j.LoadRun(ctx, "p2")
		if err != nil || r.Status != journal.StatusRunning || r.LeaseOwner != "batcher" {
			t.Fatalf("p2 after its claim: %s %q %v, want running under batcher", r.Status, r.LeaseOwner, err)
		}
	})

	t.Run("claim batch keeps to the worker's versions and skips its own held runs", func(t *testing.T) {
		j := open(t)
		b := batcher(t, j)
		for i, v := range []string{"v1", "v2", "v3", "v2", "v1", "v2"} {
			create(t, j, fmt.Sprint("r", i), wf, v, "")
		}
		if err := j.Advertise(ctx, "v1-worker", []journal.WorkflowVersion{{Workflow: wf, Version: "v1"}}); err != nil {
			t.Fatal(err)
		}
		req := journal.ClaimNextRequest{Owner: "v2-worker", Lease: time.Minute, Workflows: []string{wf},
			Versions: []journal.WorkflowVersion{{Workflow: wf, Version: "v2"}}, Older: []journal.WorkflowVersion{{Workflow: wf, Version: "v1"}},
			AdvertisedWithin: time.Hour}
		got, err := b.ClaimBatch(ctx, req, 10)
		if err != nil {
			t.Fatal(err)
		}
		if want := []string{"r1", "r3", "r5"}; !slices.Equal(ids(got), want) {
			t.Fatalf("batch of a v2 worker, v1 advertised = %v, want %v", ids(got), want)
		}
		// The claimer's own runs, once their leases lapsed, are taken
		// again unless it says it executes them.
		j2 := open(t)
		b2 := batcher(t, j2)
		create(t, j2, "mine-held", wf, "v1", "")
		create(t, j2, "mine-lost", wf, "v1", "")
		claimOne(t, j2, "mine-held", "me", 100*time.Millisecond)
		claimOne(t, j2, "mine-lost", "me", 100*time.Millisecond)
		if l, ok := j2.(journal.Liveness); ok {
			if err := l.KeepAlive(ctx, "me"); err != nil {
				t.Fatal(err)
			}
		}
		time.Sleep(200 * time.Millisecond)
		got, err = b2.ClaimBatch(ctx, journal.ClaimNextRequest{Owner: "me", Lease: time.Minute, Workflows: []string{wf}, Holding: []string{"mine-held"}}, 10)
		if err != nil {
			t.Fatal(err)
		}
		if want := []string{"mine-lost"}; !slices.Equal(ids(got), want) {
			t.Fatalf("batch of an owner holding mine-held = %v, want %v", ids(got), want)
		}
	})

	t.Run("claimers racing with batches never take one run twice", func(t *testing.T) {
		j := open(t)
		const n = 300
		for i := range n {
			now := time.Now().Add(time.Duration(i) * time.Microsecond)
			r := journal.RunRecord{RunID: fmt.Sprint("race-", i), Workflow: wf, Version: "v1", Input: []byte(`[]`), CreatedAt: now, UpdatedAt: now}
			if _, _, err := j.CreateRun(ctx, r); err != nil {
				t.Fatal(err)
			}
		}
		const claimers = 4
		handles := []journal.Journal{j}
		for len(handles) < claimers {
			if h.OpenAgain == nil {
				handles = append(handles, j)
				continue
			}
			other := h.OpenAgain(t)
			t.Cleanup(func() { other.Close() })
			handles = append(handles, other)
		}
		var mu sync.Mutex
		byRun := map[string][]string{}
		var wg sync.WaitGroup
		errs := make(chan error, claimers)
		for c, hj := range handles {
			b := batcher(t, hj)
			owner := fmt.Sprint("claimer-", c)
			wg.Add(1)
			go func() {
				defer wg.Done()
				for k := 0; ; k++ {
					got, err := b.ClaimBatch(ctx, journal.ClaimNextRequest{Owner: owner, Lease: time.Minute, Workflows: []string{wf}}, 1+(c+k)%7)
					if errors.Is(err, journal.ErrNoRunReady) {
						return
					}
					if err != nil {
						errs <- fmt.Errorf("%s: %w", owner, err)
						return
					}
					mu.Lock()
					for _, r := range got {
						byRun[r.Run.RunID] = append(byRun[r.Run.RunID], owner)
					}
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		if len(byRun) != n {
			t.Errorf("%d of %d runs claimed", len(byRun), n)
		}
		for id, owners := range byRun {
			if len(owners) != 1 {
				t.Errorf("run %s claimed by %v", id, owners)
			}
		}
	})

	t.Run("a sealed journal passes claim batch through, opened", func(t *testing.T) {
		j := open(t)
		sealed := resume.SealJournal(j, keyring(t, "k1"))
		create(t, sealed, "sealed-1", wf, "v1", "")
		create(t, sealed, "sealed-2", wf, "v1", "")
		b, ok := sealed.(journal.BatchClaimer)
		if !ok {
			t.Fatalf("the sealed journal %T does not implement journal.BatchClaimer", sealed)
		}
		got, err := b.ClaimBatch(ctx, journal.ClaimNextRequest{Owner: "w", Lease: time.Minute, Workflows: []string{wf}}, 5)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(ids(got), []string{"sealed-1", "sealed-2"}) {
			t.Fatalf("batch = %v", ids(got))
		}
		for _, c := range got {
			if c.Err != nil || string(c.Run.Input) != `[]` {
				t.Errorf("run %s through the sealed journal: input %s, err %v, want [] opened", c.Run.RunID, c.Run.Input, c.Err)
			}
		}
		raw, _, err := j.LoadRun(ctx, "sealed-1")
		if err != nil {
			t.Fatal(err)
		}
		if string(raw.Input) == `[]` {
			t.Errorf("the input is stored unsealed: the test proves nothing")
		}
	})
}
