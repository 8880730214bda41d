package journaltest

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/resumegen/resumegen/runtime/journal"
	"github.com/resumegen/resumegen/runtime/resume"
)

// The benchmarks every journal runs: journaled steps beside their raw
// baseline on the same database, interleaved in one loop so machine noise
// hits both alike, reporting the ratio step/raw. The database must keep its
// data on a real disk with fsync on: the commit is the cost compared.

// BenchHarness adapts the benchmarks to one journal.
type BenchHarness struct {
	// Journal is a journal open on an empty database, with the user's
	// table the Insert functions write to.
	Journal journal.Journal
	// RawInsert is the default and once baseline: one single-row INSERT
	// into the user's table, committed on its own.
	RawInsert func(ctx context.Context) error
	// RawTx is the tx baseline: the same INSERT in a plain transaction.
	RawTx func(ctx context.Context) error
	// TxInsert is the same INSERT through resume.Tx, inside a tx step.
	TxInsert func(ctx context.Context) error
	// Reopen makes a finished run pending again, so that it can be resumed
	// once more.
	Reopen func(ctx context.Context, runID string) error
	// Abandon leaves a run as a killed process leaves it: running, held by
	// owner for an hour.
	Abandon func(ctx context.Context, runID, owner string) error
	// OpenAgain opens another journal on the same database, as another
	// process would.
	OpenAgain func(tb testing.TB) journal.Journal
	// FillRuns inserts n runs of workflow wf in one statement, oldest
	// first, their ids prefix and a number: pending, or (waiting) asleep
	// until the year 2999. For benchmarks that need a deep queue.
	FillRuns func(ctx context.Context, prefix, wf string, n int, waiting bool) error
	// WALBytes, if set, returns the bytes written to the store's
	// write-ahead log so far: a count that only grows while a benchmark
	// runs, read without writing. BenchConcurrent reports its growth per
	// step, the journal's and the raw baseline's.
	WALBytes func(ctx context.Context) (int64, error)
	// WALPage, if set, is the bytes of one WAL frame (a page and its
	// header): BenchConcurrent then reports WAL pages per step too.
	WALPage int64
	// Statements, if set, returns the statements sent to the store so
	// far (BEGIN and COMMIT counted), by the journal and the baselines
	// alike; reading it sends none.
	Statements func() int64
	// FinishFilled makes the runs FillRuns filled with prefix succeeded,
	// each with steps succeeded step rows (for BenchPurge).
	FinishFilled func(ctx context.Context, prefix string, steps int) error
	// RawDelete deletes the step rows and runs whose ids start with
	// prefix in plain statements, one transaction: BenchPurge's baseline.
	RawDelete func(ctx context.Context, prefix string) error
	// Raw is the raw queue beside which the wake storm and the queue
	// drain are measured (BenchWakeStorm, BenchQueueDrain).
	Raw RawQueue
	// RawFork copies run from's row to a new pending run to, and its step
	// rows whose seq is below seq, in plain statements, one transaction:
	// BenchFork's baseline.
	RawFork func(ctx context.Context, from, to string, seq int64) error
}

// benchState is what the benchmark workflow reads: the workflow body is
// package code, like a user's. The timing fields are used only when a
// baseline is set, by one run at a time.
var benchState struct {
	policy   resume.Policy
	baseline func(context.Context) error
	txInsert func(context.Context) error
	raw      time.Duration // time spent in the baseline
	step     time.Duration // time spent in the journaled step
}

var benchRuns atomic.Int64

func benchRunID(prefix string) string { return fmt.Sprintf("%s-%d", prefix, benchRuns.Add(1)) }

// BenchFlow runs n steps of the benchmark's policy, each after its baseline
// if one is set. It is the benchmarks' workflow; its durable form is
// registered by hand below, as resumegen would generate it.
func BenchFlow(ctx context.Context, n int) error { return nil }

var benchSteps = []resume.StepDef{
	{Name: "Default", Callee: "journaltest.Empty", Signature: "func(context.Context) error", Policy: resume.PolicyDefault},
	{Name: "Once", Callee: "journaltest.Empty", Signature: "func(context.Context) error", Policy: resume.PolicyOnce},
	{Name: "Tx", Callee: "journaltest.Insert", Signature: "func(context.Context) error", Policy: resume.PolicyTx},
}

var benchDef = &resume.WorkflowDef{
	Package: "github.com/resumegen/resumegen/runtime/journaltest",
	Name:    "BenchFlow",
	Version: "bench-v1",
	Steps:   benchSteps,
	Run: func(ctx context.Context, args resume.Args) (any, error) {
		var n int
		if err := args.Decode(&n); err != nil {
			return nil, err
		}
		return nil, benchBody(ctx, n)
	},
}

func init() { resume.Register(BenchFlow, benchDef) }

func benchBody(ctx context.Context, n int) error {
	def := &benchSteps[benchState.policy]
	baseline := benchState.baseline
	for i := 0; i < n; i++ {
		if baseline != nil {
			t0 := time.Now()
			if err := baseline(ctx); err != nil {
				return err
			}
			benchState.raw += time.Since(t0)
		}
		t0 := time.Now()
		err := resume.Call0(ctx, def, func(ctx context.Context) error {
			if def.Policy == resume.PolicyTx {
				return benchState.txInsert(ctx)
			}
			return nil
		})
		if baseline != nil {
			benchState.step += time.Since(t0)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// StartBenchRun runs one run of n empty steps of policy p and waits for it,
// without timing: for benchmarks a journal adds of its own.
func StartBenchRun(ctx context.Context, e *resume.Engine, p resume.Policy, n int) error {
	benchState.policy, benchState.baseline = p, nil
	_, err := e.Start(ctx, benchRunID("bench"), BenchFlow, n)
	return err
}

// BenchStep runs b.N steps of policy p in one run, each beside its
// baseline (RawTx for tx, RawInsert otherwise), and reports per-step times,
// their ratio (step/raw) and the journal's commits per step. Targets:
// default <= 1.15x, tx <= 1.1x, once <= 2.2x with exactly 2 commits.
func BenchStep(b *testing.B, h BenchHarness, p resume.Policy) {
	b.Helper()
	ctx := context.Background()
	e := resume.NewEngine(h.Journal)
	benchState.txInsert = h.TxInsert
	defer func() { benchState.baseline, benchState.txInsert = nil, nil }()
	// Warm up: the manifest is saved once per engine and version.
	if err := StartBenchRun(ctx, e, p, 1); err != nil {
		b.Fatal(err)
	}
	baseline := h.RawInsert
	if p == resume.PolicyTx {
		baseline = h.RawTx
	}
	benchState.policy, benchState.baseline = p, baseline
	benchState.raw, benchState.step = 0, 0
	before := h.Journal.Counters()
	b.ResetTimer()
	if _, err := e.Start(ctx, benchRunID("bench"), BenchFlow, b.N); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	// The run's own commits (create, claim, finish) are not the steps'; the
	// baseline's commits go around the journal's counters.
	commits := h.Journal.Counters().Commits - before.Commits - 3
	b.ReportMetric(float64(benchState.step.Nanoseconds())/float64(b.N), "step-ns/op")
	b.ReportMetric(float64(benchState.raw.Nanoseconds())/float64(b.N), "raw-ns/op")
	b.ReportMetric(float64(benchState.step)/float64(benchState.raw), "step/raw")
	b.ReportMetric(float64(commits)/float64(b.N), "step-commits/op")
}

// BenchRunLength measures the per-step cost of default steps in runs of
// length steps (ns/op is per step). Target: flat across lengths.
func BenchRunLength(b *testing.B, h BenchHarness, length int) {
	b.Helper()
	ctx := context.Background()
	e := resume.NewEngine(h.Journal)
	b.ResetTimer()
	for done := 0; done < b.N; done += length {
		if err := StartBenchRun(ctx, e, resume.PolicyDefault, min(length, b.N-done)); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchResume measures entering a run whose steps all succeeded: the
// claim, one read of the journal, the replays and the finish. Target for
// 1000 steps: <= 5 ms. It reports the journal's reads per entry (1).
func BenchResume(b *testing.B, h BenchHarness, steps int) {
	b.Helper()
	ctx := context.Background()
	e := resume.NewEngine(h.Journal)
	benchState.policy, benchState.baseline = resume.PolicyDefault, nil
	id := benchRunID("resume")
	if _, err := e.Start(ctx, id, BenchFlow, steps); err != nil {
		b.Fatal(err)
	}
	before := h.Journal.Counters()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		if err := h.Reopen(ctx, id); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if _, err := e.Resume(ctx, id); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(h.Journal.Counters().Reads-before.Reads)/float64(b.N), "reads/op")
}

// BenchResumeCrashed measures the crash path: a run of steps journaled
// steps left running by a process that was killed (its liveness signal
// released, its lease an hour away), taken over by Resume at once: one
// claim that checks the owner's liveness and reads the journal, the
// replays, finish. Target: one read, within 5 ms per 1000 steps.
func BenchResumeCrashed(b *testing.B, h BenchHarness, steps int) {
	b.Helper()
	ctx := context.Background()
	e := resume.NewEngine(h.Journal)
	benchState.policy, benchState.baseline = resume.PolicyDefault, nil
	id := benchRunID("crashed")
	if _, err := e.Start(ctx, id, BenchFlow, steps); err != nil {
		b.Fatal(err)
	}
	// The killed process: it held its liveness signal, and is gone.
	dead := "killed-" + id
	other := h.OpenAgain(b)
	if err := other.(journal.Liveness).KeepAlive(ctx, dead); err != nil {
		b.Fatal(err)
	}
	other.Close()
	waitGone(b, h.Journal, dead)
	var reads int64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		if err := h.Abandon(ctx, id, dead); err != nil {
			b.Fatal(err)
		}
		before := h.Journal.Counters()
		b.StartTimer()
		res, err := e.Resume(ctx, id)
		if err != nil || res.Status != journal.StatusSucceeded {
			b.Fatalf("resume of a crashed run: %v, %v", res.Status, err)
		}
		b.StopTimer()
		reads += h.Journal.Counters().Reads - before.Reads
		b.StartTimer()
	}
	b.StopTimer()
	b.ReportMetric(float64(reads)/float64(b.N), "reads/op")
}

// BenchReattachFinished measures Start on a finished run of steps steps:
// it returns the journaled outcome from the run's row, reading no step.
func BenchReattachFinished(b *testing.B, h BenchHarness, steps int) {
	b.Helper()
	ctx := context.Background()
	e := resume.NewEngine(h.Journal)
	benchState.policy, benchState.baseline = resume.PolicyDefault, nil
	id := benchRunID("finished")
	if _, err := e.Start(ctx, id, BenchFlow, steps); err != nil {
		b.Fatal(err)
	}
	before := h.Journal.Counters()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if res, err := e.Start(ctx, id, BenchFlow, steps); err != nil || res.Status != journal.StatusSucceeded {
			b.Fatalf("re-attach: %v, %v", res.Status, err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(h.Journal.Counters().Reads-before.Reads)/float64(b.N), "reads/op")
}

// NestFlow is the nested-resume benchmark's workflow: n steps reached
// through a helper (two a call), then NestKid as a child run with n more.
// Its durable form is registered by hand below, as resumegen would
// generate it.
func NestFlow(ctx context.Context, n int) error { return nil }

// NestKid is NestFlow's child workflow: n-1 steps, then KLast.
func NestKid(ctx context.Context, n int) error { return nil }

var nestSteps = []resume.StepDef{
	{Name: "HA", Callee: "journaltest.Empty", Signature: "func(context.Context) error"},
	{Name: "HB", Callee: "journaltest.Empty", Signature: "func(context.Context) error"},
	{Name: "NestKid", Callee: "journaltest.NestKid", Signature: "func(context.Context, int) error", Child: true},
	{Name: "K", Callee: "journaltest.Empty", Signature: "func(context.Context) error"},
	{Name: "KLast", Callee: "journaltest.Empty", Signature: "func(context.Context) error"},
}

func empty(context.Context) error { return nil }

// nestHelper is the helper NestFlow's body calls: two steps.
func nestHelper(ctx context.Context) error {
	if err := resume.Call0(ctx, &nestSteps[0], empty); err != nil {
		return err
	}
	return resume.Call0(ctx, &nestSteps[1], empty)
}

var nestDef = &resume.WorkflowDef{
	Package: "github.com/resumegen/resumegen/runtime/journaltest", Name: "NestFlow", Version: "nest-v1", Steps: nestSteps[:3],
	Run: func(ctx context.Context, args resume.Args) (any, error) {
		var n int
		if err := args.Decode(&n); err != nil {
			return nil, err
		}
		for i := 0; i < n/2; i++ {
			if err := nestHelper(ctx); err != nil {
				return nil, err
			}
		}
		return nil, resume.CallChild0(ctx, &nestSteps[2], NestKid, func(ctx context.Context) error { return NestKid(ctx, n) }, n)
	},
}

var nestKidDef = &resume.WorkflowDef{
	Package: "github.com/resumegen/resumegen/runtime/journaltest", Name: "NestKid", Version: "nestkid-v1", Steps: nestSteps[3:],
	Run: func(ctx context.Context, args resume.Args) (any, error) {
		var n int
		if err := args.Decode(&n); err != nil {
			return nil, err
		}
		for i := 0; i < n-1; i++ {
			if err := resume.Call0(ctx, &nestSteps[3], empty); err != nil {
				return nil, err
			}
		}
		return nil, resume.Call0(ctx, &nestSteps[4], empty)
	},
}

func init() {
	resume.Register(NestFlow, nestDef)
	resume.Register(NestKid, nestKidDef)
}

// BenchResumeNested measures resuming a run that died inside its child: a
// parent whose half steps went through a helper, then a child run that
// died before its last step. Timed: entering the parent (one read of its
// journal), replaying its steps, entering the child (a read of its run,
// then its claim and journal in one), replaying its steps, executing the
// last one and finishing both. half is the number of steps on each side.
// Target for 2 x 500: <= 5 ms plus the commits the resume makes (child
// claim, its last step, child finish, parent's child step, parent finish),
// which it reports with the reads.
func BenchResumeNested(b *testing.B, h BenchHarness, half int) {
	b.Helper()
	ctx := context.Background()
	// One engine for every resume, as a worker has: it saves each
	// workflow's manifest once, not once per run.
	e := resume.NewEngine(h.Journal)
	var reads, commits int64
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		id := benchRunID("nested")
		if !startDying(h.Journal, id, NestFlow, half, resume.Fault{Step: "KLast", Point: resume.FaultBefore}) {
			b.Fatal("the run did not die inside its child")
		}
		before := h.Journal.Counters()
		b.StartTimer()
		if _, err := e.Resume(ctx, id); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		after := h.Journal.Counters()
		reads += after.Reads - before.Reads
		commits += after.Commits - before.Commits
	}
	b.ReportMetric(float64(reads)/float64(b.N), "reads/op")
	b.ReportMetric(float64(commits)/float64(b.N), "commits/op")
}

// BenchClaimNext times ClaimNext taking a worker's next run when the
// claim lists the worker's versions, beside (interleaved in one loop, so
// that machine noise hits both alike) the claim of any version of another
// workflow: it reports both and their ratio (versions/any). Behind
// skipped runs at the head of the queue: half of a newer version, half of
// an older version another worker advertises, which the claim with
// versions must pass over.
func BenchClaimNext(b *testing.B, h BenchHarness, skipped int) {
	ctx := context.Background()
	j := h.Journal
	const wf, other = "journaltest.BenchClaimed", "journaltest.BenchAny"
	for _, v := range []string{"v1", "v2", "v3"} {
		if err := j.SaveManifest(ctx, journal.ManifestRecord{Workflow: wf, Version: v, Manifest: v}); err != nil {
			b.Fatal(err)
		}
	}
	if err := j.Advertise(ctx, "bench-v1-worker", []journal.WorkflowVersion{{Workflow: wf, Version: "v1"}}); err != nil {
		b.Fatal(err)
	}
	create := func(wf, version string) {
		now := time.Now()
		r := journal.RunRecord{RunID: benchRunID("claim"), Workflow: wf, Version: version, Input: []byte(`[]`), CreatedAt: now, UpdatedAt: now}
		if _, _, err := j.CreateRun(ctx, r); err != nil {
			b.Fatal(err)
		}
	}
	for i := 0; i < skipped; i++ {
		create(wf, []string{"v1", "v3"}[i%2])
	}
	withVersions := journal.ClaimNextRequest{Owner: "bench-v2-worker", Lease: time.Minute, Workflows: []string{wf},
		Versions: []journal.WorkflowVersion{{Workflow: wf, Version: "v2"}}, Older: []journal.WorkflowVersion{{Workflow: wf, Version: "v1"}},
		AdvertisedWithin: time.Hour}
	anyVersion := journal.ClaimNextRequest{Owner: "bench-any-worker", Lease: time.Minute, Workflows: []string{other}}
	var spent [2]time.Duration
	claim := func(i int, req journal.ClaimNextRequest) {
		t0 := time.Now()
		r, _, err := j.ClaimNext(ctx, req)
		spent[i] += time.Since(t0)
		if err != nil {
			b.Fatal(err)
		}
		if r.Version != "v2" {
			b.Fatalf("claimed run %s of version %s", r.RunID, r.Version)
		}
		l := journal.Lease{RunID: r.RunID, Owner: req.Owner, Epoch: r.Epoch}
		if err := j.FinishRun(ctx, l, journal.RunRecord{Status: journal.StatusSucceeded, Output: []byte(`null`), UpdatedAt: time.Now()}); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		create(other, "v2")
		claim(0, anyVersion)
		create(wf, "v2")
		claim(1, withVersions)
	}
	b.ReportMetric(float64(spent[0].Nanoseconds())/float64(b.N), "any-ns/claim")
	b.ReportMetric(float64(spent[1].Nanoseconds())/float64(b.N), "versions-ns/claim")
	b.ReportMetric(float64(spent[1])/float64(spent[0]), "versions/any")
}

// ClaimLadder is the number of runs queued ahead (pending) or asleep
// (waiting) that BenchClaimDepth is run at.
var ClaimLadder = []int{0, 10_000, 100_000, 1_000_000}

// BenchClaimDepth times ClaimNext with pending runs queued (each claim
// takes the oldest, and the run is finished untimed), beside as many
// waiting runs asleep for centuries that every claim must pass over. It
// reports the time of one claim; flat across ClaimLadder is the target.
func BenchClaimDepth(b *testing.B, h BenchHarness, pending, waiting int) {
	ctx := context.Background()
	j := h.Journal
	const wf = "journaltest.BenchDeep"
	if err := h.FillRuns(ctx, "asleep-", wf, waiting, true); err != nil {
		b.Fatal(err)
	}
	if err := h.FillRuns(ctx, "queued-", wf, pending+b.N, false); err != nil {
		b.Fatal(err)
	}
	req := journal.ClaimNextRequest{Owner: "bench-worker", Lease: time.Minute, Workflows: []string{wf}}
	var spent time.Duration
	b.ResetTimer()
	for range b.N {
		t0 := time.Now()
		r, _, err := j.ClaimNext(ctx, req)
		spent += time.Since(t0)
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		l := journal.Lease{RunID: r.RunID, Owner: req.Owner, Epoch: r.Epoch}
		if err := j.FinishRun(ctx, l, journal.RunRecord{Status: journal.StatusSucceeded, Output: []byte(`null`), UpdatedAt: time.Now()}); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	b.ReportMetric(float64(spent.Nanoseconds())/float64(b.N), "ns/claim")
}

// BenchClaimBatchDepth is BenchClaimDepth for batches of size runs
// (journal.BatchClaimer): it reports the time of one batch and per run
// claimed. Flat across ClaimLadder is the target.
func BenchClaimBatchDepth(b *testing.B, h BenchHarness, pending, waiting, size int) {
	ctx := context.Background()
	bc, ok := h.Journal.(journal.BatchClaimer)
	if !ok {
		b.Fatalf("%T does not claim batches", h.Journal)
	}
	const wf = "journaltest.BenchDeepBatch"
	if err := h.FillRuns(ctx, "asleep-", wf, waiting, true); err != nil {
		b.Fatal(err)
	}
	if err := h.FillRuns(ctx, "queued-", wf, pending+b.N*size, false); err != nil {
		b.Fatal(err)
	}
	req := journal.ClaimNextRequest{Owner: "bench-worker", Lease: time.Minute, Workflows: []string{wf}}
	var spent time.Duration
	b.ResetTimer()
	for range b.N {
		t0 := time.Now()
		runs, err := bc.ClaimBatch(ctx, req, size)
		spent += time.Since(t0)
		if err != nil {
			b.Fatal(err)
		}
		if len(runs) != size {
			b.Fatalf("claimed %d runs, want %d", len(runs), size)
		}
		b.StopTimer()
		for _, r := range runs {
			l := journal.Lease{RunID: r.Run.RunID, Owner: req.Owner, Epoch: r.Run.Epoch}
			if err := h.Journal.FinishRun(ctx, l, journal.RunRecord{Status: journal.StatusSucceeded, Output: []byte(`null`), UpdatedAt: time.Now()}); err != nil {
				b.Fatal(err)
			}
		}
		b.StartTimer()
	}
	b.ReportMetric(float64(spent.Nanoseconds())/float64(b.N), "ns/batch")
	b.ReportMetric(float64(spent.Nanoseconds())/float64(b.N*size), "ns/run")
}
