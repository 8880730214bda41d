package journaltest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/resumegen/resumegen/runtime/journal"
)

// runDeploys is the part of the suite about deploys: which versions a
// worker claims (ClaimNextRequest.Versions and Older, Advertise), moves between
// versions (MoveRun, AcceptVersion) and the manifests' definitions and
// order.
func runDeploys(t *testing.T, h Harness, open func(t *testing.T) journal.Journal) {
	t.Run("deploys: a worker claims its versions and older ones no live worker has", func(t *testing.T) {
		testClaimRule(t, open(t))
	})
	t.Run("deploys: an older worker never claims a newer version's run, whatever the journal saw first", func(t *testing.T) {
		testClaimByLineage(t, open(t))
	})
	t.Run("deploys: an advertisement is replaced and withdrawn", func(t *testing.T) {
		testAdvertise(t, open(t))
	})
	t.Run("deploys: workers of two versions claiming at once never take each other's runs", func(t *testing.T) {
		testTwoVersionsConcurrently(t, open(t))
	})
	t.Run("deploys: a move relabels keys, re-pins the run and is kept", func(t *testing.T) {
		testMoveRun(t, open(t))
	})
	t.Run("deploys: a move under a lost lease writes nothing", func(t *testing.T) {
		testMoveLostLease(t, open(t))
	})
	t.Run("deploys: a move that cannot relabel leaves nothing half done", func(t *testing.T) {
		testMoveRefused(t, open(t))
	})
	t.Run("deploys: accepting a version records the operator's move", func(t *testing.T) {
		testAcceptMove(t, open(t))
	})
	t.Run("deploys: manifests keep their first definition and their order", func(t *testing.T) {
		testManifestSeq(t, open(t))
	})
	t.Run("deploys: versions saved at once get distinct seqs", func(t *testing.T) {
		testManifestSeqConcurrent(t, open(t))
	})
	t.Run("a claim (next, or by id) cancelled at any moment hands its run back or leaves it claimable", func(t *testing.T) {
		testClaimCancelled(t, open(t))
	})
	if h.Exec != nil {
		t.Run("deploys: moves that do not decode make the run's row unreadable, not the journal", func(t *testing.T) {
			testMovesUnreadable(t, h, open(t))
		})
	}
}

const deployWF = "journaltest.Deployed"

// saveVersions saves a manifest for each version of deployWF, oldest first.
func saveVersions(t *testing.T, j journal.Journal, versions ...string) {
	t.Helper()
	for _, v := range versions {
		if err := j.SaveManifest(context.Background(), journal.ManifestRecord{Workflow: deployWF, Version: v, Manifest: "Step " + v + "\n"}); err != nil {
			t.Fatal(err)
		}
	}
}

// createAt creates a pending run of deployWF at version, created at the
// given offset from now (so claims take runs in a known order).
func createAt(t *testing.T, j journal.Journal, id, version string, age time.Duration) {
	t.Helper()
	now := time.Now().Add(-age)
	r := journal.RunRecord{RunID: id, Workflow: deployWF, Version: version, Input: []byte(`[]`), CreatedAt: now, UpdatedAt: now}
	if _, _, err := j.CreateRun(context.Background(), r); err != nil {
		t.Fatal(err)
	}
}

// claimAll claims runs of deployWF as owner with versions and the older
// versions they descend from until none is left, and returns the ids
// claimed, sorted.
func claimAll(t *testing.T, j journal.Journal, owner string, versions, older []journal.WorkflowVersion, within time.Duration) []string {
	t.Helper()
	var ids []string
	for {
		r, _, err := j.ClaimNext(context.Background(), journal.ClaimNextRequest{Owner: owner, Lease: time.Minute,
			Workflows: []string{deployWF}, Versions: versions, Older: older, AdvertisedWithin: within})
		if errors.Is(err, journal.ErrNoRunReady) {
			sort.Strings(ids)
			return ids
		}
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, r.RunID)
	}
}

func wv(versions ...string) []journal.WorkflowVersion {
	var out []journal.WorkflowVersion
	for _, v := range versions {
		out = append(out, journal.WorkflowVersion{Workflow: deployWF, Version: v})
	}
	return out
}

func testClaimRule(t *testing.T, j journal.Journal) {
	ctx := context.Background()
	saveVersions(t, j, "v1", "v2", "v3")
	createAt(t, j, "own", "v2", 5*time.Second)
	createAt(t, j, "newer", "v3", 4*time.Second)
	createAt(t, j, "older-unadvertised", "v0-unknown", 3*time.Second) // no manifest, in no lineage
	createAt(t, j, "older-advertised", "v1", 2*time.Second)
	if err := j.Advertise(ctx, "v1-worker", wv("v1")); err != nil {
		t.Fatal(err)
	}
	if got := claimAll(t, j, "v2-worker", wv("v2"), wv("v1"), time.Hour); fmt.Sprint(got) != "[own]" {
		t.Fatalf("v2 worker claimed %v, want [own]: a newer version, an unknown one or an advertised older one was taken", got)
	}
	// The v1 worker stops advertising (it died): once its advertisement
	// is older than AdvertisedWithin, its runs are the v2 worker's to decide.
	const within = 200 * time.Millisecond
	time.Sleep(within + 100*time.Millisecond)
	if got := claimAll(t, j, "v2-worker", wv("v2"), nil, within); len(got) != 0 {
		t.Fatalf("a v2 worker whose lineage is empty claimed %v, want none: only its own version and its lineage count", got)
	}
	if got := claimAll(t, j, "v2-worker", wv("v2"), wv("v1"), within); fmt.Sprint(got) != "[older-advertised]" {
		t.Fatalf("after the advertisement lapsed the v2 worker claimed %v, want [older-advertised]", got)
	}
	createAt(t, j, "older-fresh", "v1", time.Second)
	if got := claimAll(t, j, "v3-worker", wv("v3"), wv("v2", "v1"), 0); fmt.Sprint(got) != "[newer older-fresh]" {
		t.Fatalf("v3 worker, no advertisement counting, claimed %v, want [newer older-fresh]", got)
	}
	if got := claimAll(t, j, "any-worker", nil, nil, 0); fmt.Sprint(got) != "[older-unadvertised]" {
		t.Fatalf("a worker with no versions claimed %v, want [older-unadvertised] (any version)", got)
	}
}

// testClaimByLineage is the measured case of issue 19: on a journal where
// the newer program met the journal first (its manifest has the smaller
// seq) and enqueued a run, a worker of the older version, whose lineage
// does not name the newer one, never claims that run, advertised or not;
// the newer worker, whose lineage names the older version, takes the
// older version's runs once no worker advertises it.
func testClaimByLineage(t *testing.T, j journal.Journal) {
	saveVersions(t, j, "v2", "v1") // the newer version is seen first
	createAt(t, j, "from-v2", "v2", 2*time.Second)
	createAt(t, j, "from-v1", "v1", time.Second)
	if got := claimAll(t, j, "v1-worker", wv("v1"), nil, 0); fmt.Sprint(got) != "[from-v1]" {
		t.Fatalf("the v1 worker claimed %v, want [from-v1]: the run of the newer v2 was taken", got)
	}
	if got := claimAll(t, j, "v2-worker", wv("v2"), wv("v1"), 0); fmt.Sprint(got) != "[from-v2]" {
		t.Fatalf("the v2 worker claimed %v, want [from-v2]", got)
	}
	createAt(t, j, "late-v1", "v1", 0)
	if got := claimAll(t, j, "v2-worker", wv("v2"), wv("v1"), 0); fmt.Sprint(got) != "[late-v1]" {
		t.Fatalf("the v2 worker, v1 in its lineage and unadvertised, claimed %v, want [late-v1]", got)
	}
}

func testAdvertise(t *testing.T, j journal.Journal) {
	ctx := context.Background()
	saveVersions(t, j, "v1", "v2", "v3")
	createAt(t, j, "r-v1", "v1", 2*time.Second)
	createAt(t, j, "r-v2", "v2", time.Second)
	if err := j.Advertise(ctx, "old", wv("v1", "v2")); err != nil {
		t.Fatal(err)
	}
	if err := j.Advertise(ctx, "other", nil); err != nil { // withdrawing nothing is fine
		t.Fatal(err)
	}
	lineage := wv("v2", "v1")
	if got := claimAll(t, j, "new", wv("v3"), lineage, time.Hour); len(got) != 0 {
		t.Fatalf("claimed %v while their versions are advertised", got)
	}
	if err := j.Advertise(ctx, "old", wv("v2")); err != nil { // replaces v1, v2
		t.Fatal(err)
	}
	if got := claimAll(t, j, "new", wv("v3"), lineage, time.Hour); fmt.Sprint(got) != "[r-v1]" {
		t.Fatalf("after the advertisement was replaced by v2 alone, claimed %v, want [r-v1]", got)
	}
	if err := j.Advertise(ctx, "old", nil); err != nil {
		t.Fatal(err)
	}
	if got := claimAll(t, j, "new", wv("v3"), lineage, time.Hour); fmt.Sprint(got) != "[r-v2]" {
		t.Fatalf("after the advertisement was withdrawn, claimed %v, want [r-v2]", got)
	}
	// A long advertisement, a version listed twice in it, v1 last: every
	// version counts, the duplicate once.
	createAt(t, j, "r2-v1", "v1", 0)
	var long []journal.WorkflowVersion
	for i := range 1200 {
		long = append(long, journal.WorkflowVersion{Workflow: "example.com/other.W", Version: fmt.Sprintf("v%04d", i)})
	}
	long = append(long, wv("v1", "v1")...)
	if err := j.Advertise(ctx, "big", long); err != nil {
		t.Fatalf("advertise %d versions, one twice: %v", len(long), err)
	}
	if got := claimAll(t, j, "new", wv("v3"), lineage, time.Hour); len(got) != 0 {
		t.Fatalf("claimed %v while v1 is advertised last of %d versions", got, len(long))
	}
	if err := j.Advertise(ctx, "big", long[:1200]); err != nil {
		t.Fatal(err)
	}
	if got := claimAll(t, j, "new", wv("v3"), lineage, time.Hour); fmt.Sprint(got) != "[r2-v1]" {
		t.Fatalf("after v1 left the long advertisement, claimed %v, want [r2-v1]", got)
	}
}

func testTwoVersionsConcurrently(t *testing.T, j journal.Journal) {
	ctx := context.Background()
	saveVersions(t, j, "v1", "v2")
	const n = 15
	for i := 0; i < n; i++ {
		createAt(t, j, fmt.Sprintf("a-%02d", i), "v1", time.Duration(2*n-2*i)*time.Millisecond)
		createAt(t, j, fmt.Sprintf("b-%02d", i), "v2", time.Duration(2*n-2*i-1)*time.Millisecond)
	}
	workers := map[string]string{"w1": "v1", "w2": "v2"}
	for owner, v := range workers {
		if err := j.Advertise(ctx, owner, wv(v)); err != nil {
			t.Fatal(err)
		}
	}
	var mu sync.Mutex
	claimed := map[string][]journal.RunRecord{}
	var wg sync.WaitGroup
	for owner, v := range workers {
		for g := 0; g < 2; g++ {
			wg.Add(1)
			go func(owner, v string) {
				defer wg.Done()
				for {
					r, _, err := j.ClaimNext(ctx, journal.ClaimNextRequest{Owner: owner, Lease: time.Minute,
						Workflows: []string{deployWF}, Versions: wv(v), AdvertisedWithin: time.Hour})
					if errors.Is(err, journal.ErrNoRunReady) {
						return
					}
					if err != nil {
						t.Error(err)
						return
					}
					mu.Lock()
					claimed[owner] = append(claimed[owner], r)
					mu.Unlock()
					l := journal.Lease{RunID: r.RunID, Owner: owner, Epoch: r.Epoch}
					if err := j.FinishRun(ctx, l, journal.RunRecord{Status: journal.StatusSucceeded, Output: []byte(`null`), UpdatedAt: time.Now()}); err != nil {
						t.Error(err)
						return
					}
				}
			}(owner, v)
		}
	}
	wg.Wait()
	for owner, v := range workers {
		if len(claimed[owner]) != n {
			t.Errorf("%s claimed %d runs, want %d", owner, len(claimed[owner]), n)
		}
		for _, r := range claimed[owner] {
			if r.Version != v {
				t.Errorf("%s (version %s) claimed run %s of version %s", owner, v, r.RunID, r.Version)
			}
		}
	}
}

// heldRun creates a run of version v1 claimed by owner, with step rows
// written under its lease, and returns the lease.
func heldRun(t *testing.T, j journal.Journal, id, owner string, lease time.Duration, keys ...string) journal.Lease {
	t.Helper()
	ctx := context.Background()
	createAt(t, j, id, "v1", 0)
	r, _, err := j.Claim(ctx, journal.ClaimRequest{RunID: id, Owner: owner, Lease: lease})
	if err != nil {
		t.Fatal(err)
	}
	l := journal.Lease{RunID: id, Owner: owner, Epoch: r.Epoch}
	for i, k := range keys {
		s := journal.StepRecord{RunID: id, StepKey: k, Name: journal.StepName(k), Status: journal.StepSucceeded,
			Result: json.RawMessage(fmt.Sprintf("[%d]", i)), Attempt: 1, Seq: int64(i + 1), StartedAt: time.Now(), FinishedAt: time.Now()}
		if err := j.WriteStep(ctx, l, s); err != nil {
			t.Fatal(err)
		}
	}
	return l
}

// journaled returns the run's step rows as "key=name:result", in seq order.
func journaled(t *testing.T, j journal.Journal, id string) (journal.RunRecord, string) {
	t.Helper()
	r, steps, err := j.LoadRun(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	sort.Slice(steps, func(a, b int) bool { return steps[a].Seq < steps[b].Seq })
	var out []string
	for _, s := range steps {
		out = append(out, s.StepKey+"="+s.Name+":"+string(s.Result))
	}
	return r, strings.Join(out, " ")
}

func testMoveRun(t *testing.T, j journal.Journal) {
	ctx := context.Background()
	saveVersions(t, j, "v1", "v2")
	l := heldRun(t, j, "mv", "w2", time.Minute, "Score", "Score#2", "Score[cust#1]", "Scored", "Fetch", "Fetch#2")
	m := journal.Move{Workflow: deployWF, From: "v1", To: "v2", Why: "steps Score are an unchanged prefix of version v2",
		Renames: map[string]string{"Score": "Rate", "Fetch": "Load"}, By: "engine w2"}
	before := time.Now()
	if err := j.MoveRun(ctx, l, m); err != nil {
		t.Fatal(err)
	}
	r, rows := journaled(t, j, "mv")
	if want := "Rate=Rate:[0] Rate#2=Rate:[1] Rate[cust#1]=Rate:[2] Scored=Scored:[3] Load=Load:[4] Load#2=Load:[5]"; rows != want {
		t.Errorf("rows after the move:\n got %s\nwant %s", rows, want)
	}
	if r.Version != "v2" || r.Workflow != deployWF || r.Status != journal.StatusRunning {
		t.Errorf("run after the move: %s@%s %s, want %s@v2 running", r.Workflow, r.Version, r.Status, deployWF)
	}
	checkMoves := func(how string, got []journal.Move) {
		t.Helper()
		if len(got) != 1 {
			t.Fatalf("%s: moves %+v, want the one move", how, got)
		}
		g := got[0]
		if g.From != "v1" || g.To != "v2" || g.By != "engine w2" || g.Why != m.Why || g.Workflow != deployWF ||
			fmt.Sprint(g.Renames) != fmt.Sprint(m.Renames) || g.At.Before(before.Add(-time.Second)) || g.At.After(time.Now().Add(time.Second)) {
			t.Errorf("%s: move %+v, want %+v stamped now", how, g, m)
		}
	}
	checkMoves("LoadRun", r.Moves)
	// The lease still holds after the move: the engine goes on executing.
	if err := j.WriteStep(ctx, l, journal.StepRecord{RunID: "mv", StepKey: "Rate#3", Name: "Rate", Status: journal.StepSucceeded,
		Result: []byte(`[6]`), Attempt: 1, Seq: 7, StartedAt: time.Now()}); err != nil {
		t.Fatalf("a step write after the move: %v", err)
	}
	if err := j.FinishRun(ctx, l, journal.RunRecord{Status: journal.StatusPending, UpdatedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	c, steps, err := j.Claim(ctx, journal.ClaimRequest{RunID: "mv", Owner: "w3", Lease: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	checkMoves("Claim", c.Moves)
	if len(steps) != 7 {
		t.Errorf("Claim read %d steps, want 7", len(steps))
	}
	// A second move appends; the first stays first.
	m2 := journal.Move{Workflow: "billing.Deployed", FromWorkflow: deployWF, From: "v2", To: "v2", Why: "renamed", By: "engine w3"}
	if err := j.MoveRun(ctx, journal.Lease{RunID: "mv", Owner: "w3", Epoch: c.Epoch}, m2); err != nil {
		t.Fatal(err)
	}
	if r, _ := journaled(t, j, "mv"); len(r.Moves) != 2 || r.Moves[1].FromWorkflow != deployWF || r.Workflow != "billing.Deployed" {
		t.Errorf("after a second move: workflow %s, moves %+v", r.Workflow, r.Moves)
	}
	if err := j.FinishRun(ctx, journal.Lease{RunID: "mv", Owner: "w3", Epoch: c.Epoch},
		journal.RunRecord{Status: journal.StatusPending, UpdatedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	n, _, err := j.ClaimNext(ctx, journal.ClaimNextRequest{Owner: "w4", Lease: time.Minute, Workflows: []string{"billing.Deployed"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(n.Moves) != 2 {
		t.Errorf("ClaimNext: moves %+v, want both", n.Moves)
	}
}

func testMoveLostLease(t *testing.T, j journal.Journal) {
	ctx := context.Background()
	saveVersions(t, j, "v1", "v2")
	l := heldRun(t, j, "lost", "w1", 100*time.Millisecond, "Score", "Score#2")
	time.Sleep(150 * time.Millisecond)
	if _, _, err := j.Claim(ctx, journal.ClaimRequest{RunID: "lost", Owner: "w2", Lease: time.Minute}); err != nil {
		t.Fatal(err)
	}
	_, rowsBefore := journaled(t, j, "lost")
	err := j.MoveRun(ctx, l, journal.Move{Workflow: deployWF, From: "v1", To: "v2", Renames: map[string]string{"Score": "Rate"}, By: "engine w1"})
	if !errors.Is(err, journal.ErrLeaseLost) {
		t.Fatalf("move under a lost lease: %v, want ErrLeaseLost", err)
	}
	if !strings.Contains(err.Error(), "lost") || !strings.Contains(err.Error(), "run lost") {
		t.Errorf("error %q does not name the run", err)
	}
	r, rows := journaled(t, j, "lost")
	if r.Version != "v1" || len(r.Moves) != 0 || rows != rowsBefore {
		t.Errorf("after a refused move: version %s, moves %+v, rows %s (before %s)", r.Version, r.Moves, rows, rowsBefore)
	}
}

func testMoveRefused(t *testing.T, j journal.Journal) {
	ctx := context.Background()
	saveVersions(t, j, "v1", "v2")
	unchanged := func(id, rowsBefore string) {
		t.Helper()
		r, rows := journaled(t, j, id)
		if r.Version != "v1" || len(r.Moves) != 0 || rows != rowsBefore {
			t.Errorf("run %s after a refused move: version %s, moves %+v, rows %s (before %s)", id, r.Version, r.Moves, rows, rowsBefore)
		}
	}
	// Score#2 -> Other#2 is fine, Score -> Other collides with the Other
	// row: the whole move is refused, the first rename undone.
	l := heldRun(t, j, "clash", "w", time.Minute, "Score#2", "Score", "Other")
	_, before := journaled(t, j, "clash")
	if err := j.MoveRun(ctx, l, journal.Move{Workflow: deployWF, From: "v1", To: "v2", Renames: map[string]string{"Score": "Other"}}); err == nil {
		t.Fatal("a move relabelling two rows to one key succeeded")
	}
	unchanged("clash", before)
	// A renamed step whose child run has no settled outcome.
	l = heldRun(t, j, "parent", "w", time.Minute, "Fetch")
	if err := j.WriteStep(ctx, l, journal.StepRecord{RunID: "parent", StepKey: "Kid", Name: "Kid", Status: journal.StepInFlight,
		Attempt: 1, Seq: 2, StartedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	child := journal.RunRecord{RunID: "parent/Kid", Workflow: deployWF, Version: "v1", Input: []byte(`[]`), Parent: "parent",
		CreatedAt: time.Now(), UpdatedAt: time.Now()}
	if _, _, err := j.CreateRun(ctx, child); err != nil {
		t.Fatal(err)
	}
	_, before = journaled(t, j, "parent")
	err := j.MoveRun(ctx, l, journal.Move{Workflow: deployWF, From: "v1", To: "v2", Renames: map[string]string{"Fetch": "Load", "Kid": "Child"}})
	if err == nil || !strings.Contains(err.Error(), "parent/Kid") {
		t.Fatalf("renaming a step whose child run is unsettled: %v, want a refusal naming the child", err)
	}
	unchanged("parent", before)
	// Renames that swap two names are applied, not refused.
	l = heldRun(t, j, "swap", "w", time.Minute, "A", "B#1", "B")
	if err := j.MoveRun(ctx, l, journal.Move{Workflow: deployWF, From: "v1", To: "v2", Renames: map[string]string{"A": "B", "B": "A"}}); err != nil {
		t.Fatal(err)
	}
	if _, rows := journaled(t, j, "swap"); rows != "B=B:[0] A#1=A:[1] A=A:[2]" {
		t.Errorf("swapped rows: %s", rows)
	}
}

func testAcceptMove(t *testing.T, j journal.Journal) {
	ctx := context.Background()
	saveVersions(t, j, "v1", "v2")
	l := heldRun(t, j, "acc", "w", time.Minute, "Score")
	if err := j.FinishRun(ctx, l, journal.RunRecord{Status: journal.StatusNeedsAttention, AttentionKind: journal.AttentionKindVersion,
		Error: "version v1, program v2", UpdatedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	if err := j.AcceptVersion(ctx, "acc", "v2"); err != nil {
		t.Fatal(err)
	}
	r, _ := journaled(t, j, "acc")
	if len(r.Moves) != 1 || r.Moves[0].By != "operator" || r.Moves[0].From != "v1" || r.Moves[0].To != "v2" ||
		r.Moves[0].Why != "accepted by an operator" || r.Moves[0].At.IsZero() || r.Version != "v2" {
		t.Errorf("after accept: version %s, moves %+v", r.Version, r.Moves)
	}
}

func testManifestSeq(t *testing.T, j journal.Journal) {
	ctx := context.Background()
	save := func(v, manifest, def string) {
		t.Helper()
		m := journal.ManifestRecord{Workflow: deployWF, Version: v, Manifest: manifest}
		if def != "" {
			m.Definition = json.RawMessage(def)
		}
		if err := j.SaveManifest(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	save("b-first", "B\n", "")
	save("a-second", "A\n", `{"version":"a-second"}`)
	save("b-first", "B changed\n", `{"version":"b-first"}`) // fills the missing definition only
	save("b-first", "B\n", `{"version":"replaced"}`)        // never replaces it
	save("c-third", "C\n", "")
	ms, err := j.ListManifests(ctx, deployWF)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range ms {
		got = append(got, fmt.Sprintf("%s:%s:%s", m.Version, strings.TrimSpace(m.Manifest), m.Definition))
	}
	want := []string{"c-third:C:", `a-second:A:{"version":"a-second"}`, `b-first:B:{"version":"b-first"}`}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("manifests newest first:\n got %v\nwant %v", got, want)
	}
	if len(ms) == 3 && !(ms[0].Seq > ms[1].Seq && ms[1].Seq > ms[2].Seq && ms[2].Seq > 0) {
		t.Errorf("seqs %d %d %d are not increasing by first save", ms[2].Seq, ms[1].Seq, ms[0].Seq)
	}
	m, found, err := j.LoadManifest(ctx, deployWF, "b-first")
	if err != nil || !found || string(m.Definition) != `{"version":"b-first"}` || m.Manifest != "B\n" || m.Seq != ms[2].Seq {
		t.Errorf("LoadManifest: %+v, %v, %v", m, found, err)
	}
	if _, found, err := j.LoadManifest(ctx, deployWF, "unknown"); found || err != nil {
		t.Errorf("LoadManifest of an unknown version: found %v, err %v", found, err)
	}
}

func testManifestSeqConcurrent(t *testing.T, j journal.Journal) {
	ctx := context.Background()
	const n = 12
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			m := journal.ManifestRecord{Workflow: deployWF, Version: fmt.Sprintf("v%02d", i), Manifest: "x"}
			if err := j.SaveManifest(ctx, m); err != nil {
				t.Error(err)
			}
		}(i)
	}
	wg.Wait()
	ms, err := j.ListManifests(ctx, deployWF)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int64]string{}
	for _, m := range ms {
		if prev, ok := seen[m.Seq]; ok {
			t.Errorf("versions %s and %s share seq %d", prev, m.Version, m.Seq)
		}
		seen[m.Seq] = m.Version
	}
	if len(ms) != n {
		t.Errorf("%d manifests, want %d", len(ms), n)
	}
}

func testMovesUnreadable(t *testing.T, h Harness, j journal.Journal) {
	ctx := context.Background()
	createAt(t, j, "bad-moves", "v1", 0)
	createAt(t, j, "good", "v1", 0)
	if err := h.Exec(ctx, `UPDATE resume_runs SET moves = '{"from": "v0"}' WHERE run_id = 'bad-moves'`); err != nil {
		t.Fatal(err)
	}
	r, _, err := j.LoadRun(ctx, "bad-moves")
	if err != nil {
		t.Fatalf("LoadRun of a run whose moves do not decode: %v", err)
	}
	if !strings.Contains(r.Problem(), "moves") {
		t.Errorf("run's problem %q does not name its moves", r.Problem())
	}
	if r, _, err := j.LoadRun(ctx, "good"); err != nil || r.Problem() != "" || r.Moves != nil {
		t.Errorf("another run: %+v, %v", r, err)
	}
}

// testClaimCancelled cancels ClaimNext at moments spread over its round
// trips: a run it claimed must come back to the caller, never stay running
// under an owner that does not know it holds it (a live owner's run no
// other worker may take).
func testClaimCancelled(t *testing.T, j journal.Journal) {
	ctx := context.Background()
	saveVersions(t, j, "v1")
	for i := 0; i < 60; i++ {
		id := fmt.Sprintf("cancel-%02d", i)
		createAt(t, j, id, "v1", 0)
		cctx, cancel := context.WithCancel(ctx)
		go func() {
			time.Sleep(time.Duration(i%15) * 150 * time.Microsecond)
			cancel()
		}()
		var r journal.RunRecord
		var err error
		if i%3 == 2 { // a claim of the run by its id, as Engine.Resume makes
			r, _, err = j.Claim(cctx, journal.ClaimRequest{RunID: id, Owner: "canceller", Lease: time.Hour})
		} else {
			r, _, err = j.ClaimNext(cctx, journal.ClaimNextRequest{Owner: "canceller", Lease: time.Hour, Workflows: []string{deployWF},
				Versions: wv("v1")[:i%2], AdvertisedWithin: time.Hour})
		}
		cancel()
		stored, _, lerr := j.LoadRun(ctx, id)
		if lerr != nil {
			t.Fatal(lerr)
		}
		switch {
		case err == nil && r.RunID == id:
			if ferr := j.FinishRun(ctx, journal.Lease{RunID: id, Owner: "canceller", Epoch: r.Epoch},
				journal.RunRecord{Status: journal.StatusCancelled, UpdatedAt: time.Now()}); ferr != nil {
				t.Fatal(ferr)
			}
		case err == nil:
			t.Fatalf("claim %d took run %s, want %s", i, r.RunID, id)
		case stored.Status != journal.StatusPending:
			t.Fatalf("claim %d failed (%v) but left run %s %s under %q", i, err, id, stored.Status, stored.LeaseOwner)
		default:
			if err := j.Cancel(ctx, id, journal.CancelOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
}
