package sqlitejournal_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/resumegen/resumegen/runtime/resume"
	"github.com/resumegen/resumegen/runtime/sqlitejournal"
)

// The benchmarks put each journal step beside its raw baseline on the same
// SQLite file, interleaved in one loop, so machine noise hits both alike;
// they report the ratio as step/raw. Files live under RESUME_BENCH_DIR (or
// the test's temporary folder), which must be a real disk: fsync is the cost
// being compared.

// bench is the state the benchmark workflow reads: the workflow body is
// package code, like a user's.
var bench struct {
	db       *sql.DB
	n        int
	policy   resume.Policy
	raw      time.Duration // time spent in the baseline
	step     time.Duration // time spent in the journaled step
	baseline func(context.Context) error
}

// benchFlow runs bench.n steps of bench.policy, each after its baseline.
func benchFlow(ctx context.Context) error { return nil }

var benchSteps = []resume.StepDef{
	{Name: "Default", Callee: "bench.Empty", Signature: "func(context.Context) error", Policy: resume.PolicyDefault},
	{Name: "Once", Callee: "bench.Empty", Signature: "func(context.Context) error", Policy: resume.PolicyOnce},
	{Name: "Tx", Callee: "bench.Insert", Signature: "func(context.Context) error", Policy: resume.PolicyTx},
}

var benchDef = &resume.WorkflowDef{
	Package: "github.com/resumegen/resumegen/runtime/sqlitejournal_test",
	Name:    "benchFlow",
	Version: "bench-v1",
	Steps:   benchSteps,
	Run: func(ctx context.Context, args resume.Args) (any, error) {
		if err := args.Decode(); err != nil {
			return nil, err
		}
		return nil, benchBody(ctx)
	},
}

func init() { resume.Register(benchFlow, benchDef) }

func benchBody(ctx context.Context) error {
	def := &benchSteps[bench.policy]
	for i := 0; i < bench.n; i++ {
		if bench.baseline != nil {
			t0 := time.Now()
			if err := bench.baseline(ctx); err != nil {
				return err
			}
			bench.raw += time.Since(t0)
		}
		t0 := time.Now()
		err := resume.Call0(ctx, def, func(ctx context.Context) error {
			if def.Policy == resume.PolicyTx {
				return insert(ctx, resume.Tx[execer](ctx, bench.db))
			}
			return nil
		})
		bench.step += time.Since(t0)
		if err != nil {
			return err
		}
	}
	return nil
}

func insert(ctx context.Context, q execer) error {
	_, err := q.ExecContext(ctx, `INSERT INTO bench_rows (v) VALUES (?)`, 42)
	return err
}

// rawInsert is the default and once baseline: one single-row INSERT,
// committed on its own.
func rawInsert(ctx context.Context) error { return insert(ctx, bench.db) }

// rawTx is the tx baseline: the same INSERT in a plain transaction.
func rawTx(ctx context.Context) error {
	tx, err := bench.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := insert(ctx, tx); err != nil {
		return err
	}
	return tx.Commit()
}

func openBench(b *testing.B) *sqlitejournal.Journal {
	b.Helper()
	dir := os.Getenv("RESUME_BENCH_DIR")
	if dir == "" {
		dir = b.TempDir()
	} else {
		var err error
		if dir, err = os.MkdirTemp(dir, "bench-"); err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { os.RemoveAll(dir) })
	}
	j, err := sqlitejournal.Open(context.Background(), filepath.Join(dir, "bench.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { j.Close() })
	if _, err := j.DB().Exec(`CREATE TABLE bench_rows (id INTEGER PRIMARY KEY, v INTEGER NOT NULL)`); err != nil {
		b.Fatal(err)
	}
	bench.db = j.DB()
	return j
}

var benchRun int

// runSteps runs n steps of policy p in one run, each beside baseline, and
// reports the per-step times and their ratio.
func runSteps(b *testing.B, j *sqlitejournal.Journal, p resume.Policy, baseline func(context.Context) error) {
	b.Helper()
	e := resume.NewEngine(j)
	bench.n, bench.policy, bench.baseline, bench.raw, bench.step = b.N, p, baseline, 0, 0
	before := j.Counters()
	b.ResetTimer()
	benchRun++
	if _, err := e.Start(context.Background(), fmt.Sprintf("bench-%d", benchRun), benchFlow); err != nil {
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
// single-row INSERT + commit on the same file. Target: step/raw <= 1.15.
func BenchmarkDefaultStep(b *testing.B) {
	runSteps(b, openBench(b), resume.PolicyDefault, rawInsert)
}

// BenchmarkTxStep: a one-row user INSERT in a tx step against the same
// INSERT in a plain transaction. Target: step/raw <= 1.1.
func BenchmarkTxStep(b *testing.B) {
	runSteps(b, openBench(b), resume.PolicyTx, rawTx)
}

// BenchmarkOnceStep: an empty once step (in_flight, then succeeded) against
// one raw single commit. Targets: exactly 2 step-commits/op, step/raw <= 2.2.
func BenchmarkOnceStep(b *testing.B) {
	runSteps(b, openBench(b), resume.PolicyOnce, rawInsert)
}

// BenchmarkStepByRunLength: the per-step cost of default steps in runs of
// 10, 100 and 10,000 steps. Target: flat.
func BenchmarkStepByRunLength(b *testing.B) {
	for _, length := range []int{10, 100, 10000} {
		b.Run(fmt.Sprintf("steps=%d", length), func(b *testing.B) {
			j := openBench(b)
			e := resume.NewEngine(j)
			bench.policy, bench.baseline = resume.PolicyDefault, nil
			b.ResetTimer()
			for done := 0; done < b.N; done += length {
				bench.n = min(length, b.N-done)
				benchRun++
				if _, err := e.Start(context.Background(), fmt.Sprintf("bench-%d", benchRun), benchFlow); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkResume1000: entering a run whose 1000 steps all succeeded: claim,
// one read of the journal, 1000 replays, finish. Target: <= 5 ms.
func BenchmarkResume1000(b *testing.B) {
	j := openBench(b)
	e := resume.NewEngine(j)
	bench.n, bench.policy, bench.baseline = 1000, resume.PolicyDefault, nil
	if _, err := e.Start(context.Background(), "resume-1000", benchFlow); err != nil {
		b.Fatal(err)
	}
	reopen := func() {
		if _, err := j.DB().Exec(`UPDATE resume_runs SET status = 'pending' WHERE run_id = 'resume-1000'`); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		reopen()
		b.StartTimer()
		if _, err := e.Resume(context.Background(), "resume-1000"); err != nil {
			b.Fatal(err)
		}
	}
}
