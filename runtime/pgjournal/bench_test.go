package pgjournal_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/resumegen/resumegen/runtime/pgjournal"
	"github.com/resumegen/resumegen/runtime/resume"
)

// The benchmarks put journaled steps beside their raw pgx baseline on the
// same pool and server, interleaved in one loop, so machine noise hits both
// alike; they report the ratio. The server must keep its data on a real
// disk with fsync on (scripts/with-postgres.sh does): the commit is the
// cost being compared.

// bench is the state the benchmark workflow reads: the workflow body is
// package code, like a user's. The timing fields are used only by the
// sequential benchmarks (baseline set), never by concurrent runs.
var bench struct {
	pool     *pgxpool.Pool
	rows     string // the quoted bench_rows table
	policy   resume.Policy
	raw      time.Duration // time spent in the baseline
	step     time.Duration // time spent in the journaled step
	baseline func(context.Context) error
}

// benchFlow runs n steps of bench.policy, each after its baseline if any.
func benchFlow(ctx context.Context, n int) error { return nil }

var benchSteps = []resume.StepDef{
	{Name: "Default", Callee: "bench.Empty", Signature: "func(context.Context) error", Policy: resume.PolicyDefault},
	{Name: "Once", Callee: "bench.Empty", Signature: "func(context.Context) error", Policy: resume.PolicyOnce},
	{Name: "Tx", Callee: "bench.Insert", Signature: "func(context.Context) error", Policy: resume.PolicyTx},
}

var benchDef = &resume.WorkflowDef{
	Package: "github.com/resumegen/resumegen/runtime/pgjournal_test",
	Name:    "benchFlow",
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

func init() { resume.Register(benchFlow, benchDef) }

func benchBody(ctx context.Context, n int) error {
	def := &benchSteps[bench.policy]
	timed := bench.baseline != nil
	for i := 0; i < n; i++ {
		if timed {
			t0 := time.Now()
			if err := bench.baseline(ctx); err != nil {
				return err
			}
			bench.raw += time.Since(t0)
		}
		t0 := time.Now()
		err := resume.Call0(ctx, def, func(ctx context.Context) error {
			if def.Policy == resume.PolicyTx {
				return insert(ctx, resume.Tx[execer](ctx, bench.pool))
			}
			return nil
		})
		if timed {
			bench.step += time.Since(t0)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func insert(ctx context.Context, q execer) error {
	_, err := q.Exec(ctx, `INSERT INTO `+bench.rows+` (v) VALUES ($1)`, 42)
	return err
}

// rawInsert is the default and once baseline: one single-row INSERT in
// autocommit.
func rawInsert(ctx context.Context) error { return insert(ctx, bench.pool) }

// rawTx is the tx baseline: the same INSERT in a plain transaction.
func rawTx(ctx context.Context) error {
	tx, err := bench.pool.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(ctx)
	if err := insert(ctx, tx); err != nil {
		return err
	}
	return tx.Commit(ctx)
}

// openBench opens a journal in a fresh schema with its bench_rows table.
func openBench(b *testing.B) *pgjournal.Journal {
	b.Helper()
	ctx := context.Background()
	pool := testPool(b)
	schema := freshSchema(b, pool)
	j, err := pgjournal.Open(ctx, pool, pgjournal.WithSchema(schema))
	if err != nil {
		b.Fatal(err)
	}
	bench.pool, bench.rows = pool, pgx.Identifier{schema, "bench_rows"}.Sanitize()
	if _, err := pool.Exec(ctx, `CREATE TABLE `+bench.rows+` (id bigserial PRIMARY KEY, v bigint NOT NULL)`); err != nil {
		b.Fatal(err)
	}
	return j
}

var benchRun int

// runSteps runs b.N steps of policy p in one run, each beside baseline, and
// reports the per-step times and their ratio.
func runSteps(b *testing.B, j *pgjournal.Journal, p resume.Policy, baseline func(context.Context) error) {
	b.Helper()
	e := resume.NewEngine(j)
	bench.policy, bench.baseline, bench.raw, bench.step = p, baseline, 0, 0
	defer func() { bench.baseline = nil }()
	before := j.Counters()
	b.ResetTimer()
	benchRun++
	if _, err := e.Start(context.Background(), fmt.Sprintf("bench-%d", benchRun), benchFlow, b.N); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	commits := j.Counters().Commits - before.Commits - 4 // manifest, create, claim, finish
	// The baseline's commits go around the journal's counters.
	b.ReportMetric(float64(bench.step.Nanoseconds())/float64(b.N), "step-ns/op")
	b.ReportMetric(float64(bench.raw.Nanoseconds())/float64(b.N), "raw-ns/op")
	b.ReportMetric(float64(bench.step)/float64(bench.raw), "step/raw")
	b.ReportMetric(float64(commits)/float64(b.N), "step-commits/op")
}

// BenchmarkDefaultStep: an empty default-policy step against a raw
// single-row INSERT in autocommit on the same pool. Target: step/raw <= 1.15.
func BenchmarkDefaultStep(b *testing.B) {
	runSteps(b, openBench(b), resume.PolicyDefault, rawInsert)
}

// BenchmarkTxStep: a one-row user INSERT in a tx step against the same
// INSERT in a plain transaction. Target (SQLite's): step/raw <= 1.1.
func BenchmarkTxStep(b *testing.B) {
	runSteps(b, openBench(b), resume.PolicyTx, rawTx)
}

// BenchmarkOnceStep: an empty once step (in_flight, then succeeded) against
// one raw autocommit INSERT. Targets (SQLite's): 2 step-commits/op, step/raw
// <= 2.2.
func BenchmarkOnceStep(b *testing.B) {
	runSteps(b, openBench(b), resume.PolicyOnce, rawInsert)
}

// concurrency is the number of runs, and of raw inserters, at once.
const concurrency = 16

// BenchmarkConcurrentRuns16: 16 goroutines each running a workflow of
// default steps against 16 goroutines doing raw autocommit INSERTs, on the
// same pool. An op is one step (or insert) of each goroutine. The two sides
// alternate in rounds of 100 steps per goroutine, each run a fresh run of
// 100 steps (its create, claim and finish counted in). Target: journaled
// throughput / raw throughput >= 0.9.
func BenchmarkConcurrentRuns16(b *testing.B) {
	const round = 100
	j := openBench(b)
	ctx := context.Background()
	e := resume.NewEngine(j)
	bench.policy, bench.baseline = resume.PolicyDefault, nil
	// Warm up: the manifest, and a connection for every goroutine.
	if _, err := e.Start(ctx, fmt.Sprintf("bench-warm-%d", benchRun), benchFlow, 1); err != nil {
		b.Fatal(err)
	}
	all := func(fn func(g int) error) time.Duration {
		t0 := time.Now()
		var wg sync.WaitGroup
		errs := make([]error, concurrency)
		for g := range concurrency {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[g] = fn(g)
			}()
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				b.Fatal(err)
			}
		}
		return time.Since(t0)
	}
	var raw, step time.Duration
	var steps int
	b.ResetTimer()
	for done := 0; done < b.N; done += round {
		n := min(round, b.N-done)
		raw += all(func(int) error {
			for range n {
				if err := rawInsert(ctx); err != nil {
					return err
				}
			}
			return nil
		})
		benchRun++
		step += all(func(g int) error {
			_, err := e.Start(ctx, fmt.Sprintf("bench-%d-%d", benchRun, g), benchFlow, n)
			return err
		})
		steps += n * concurrency
	}
	b.StopTimer()
	b.ReportMetric(float64(steps)/step.Seconds(), "steps/s")
	b.ReportMetric(float64(steps)/raw.Seconds(), "raw-inserts/s")
	b.ReportMetric(raw.Seconds()/step.Seconds(), "throughput-ratio")
}

// BenchmarkResume1000: entering a run whose 1000 steps all succeeded: claim
// and one read of the journal in one round trip, 1000 replays, finish.
// Target: <= 5 ms.
func BenchmarkResume1000(b *testing.B) {
	j := openBench(b)
	ctx := context.Background()
	e := resume.NewEngine(j)
	bench.policy, bench.baseline = resume.PolicyDefault, nil
	if _, err := e.Start(ctx, "resume-1000", benchFlow, 1000); err != nil {
		b.Fatal(err)
	}
	runs := pgx.Identifier{j.Schema(), "resume_runs"}.Sanitize()
	reopen := func() {
		if _, err := j.Pool().Exec(ctx, `UPDATE `+runs+` SET status = 'pending' WHERE run_id = 'resume-1000'`); err != nil {
			b.Fatal(err)
		}
	}
	before := j.Counters()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		reopen()
		b.StartTimer()
		if _, err := e.Resume(ctx, "resume-1000"); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(j.Counters().Reads-before.Reads)/float64(b.N), "reads/op")
}
