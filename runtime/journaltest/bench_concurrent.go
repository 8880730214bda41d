package journaltest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/resumegen/resumegen/runtime/resume"
)

// minRounds is the fewest rounds BenchConcurrent alternates.
const minRounds = 3

// ConcurrencyLadder is the number of concurrent runs BenchConcurrent is run
// at by every journal's benchmarks.
var ConcurrencyLadder = []int{1, 4, 16, 64}

// BenchConcurrent runs workflows of default steps from runs goroutines at
// once, each a fresh run of steps steps (its create, claim and finish
// counted in), beside runs goroutines doing as many raw single-row
// autocommit INSERTs. The two sides alternate in rounds, so that machine
// noise hits both alike, at least three rounds each. An op is one step
// (or insert) of one goroutine.
// It reports both rates, their ratio (journaled / raw: above 1 means the
// journal commits several runs' steps together) and the journal's commits
// per step; and, where the harness can count them, the statements and WAL
// bytes (and pages) per step of each side, read between the rounds.
func BenchConcurrent(b *testing.B, h BenchHarness, runs, steps int) {
	b.Helper()
	ctx := context.Background()
	e := resume.NewEngine(h.Journal)
	// Warm up: the manifest, and default steps from now on.
	if err := StartBenchRun(ctx, e, resume.PolicyDefault, 1); err != nil {
		b.Fatal(err)
	}
	all := func(fn func() error) time.Duration {
		t0 := time.Now()
		var wg sync.WaitGroup
		errs := make([]error, runs)
		for g := range runs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[g] = fn()
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
	var raw, journaled time.Duration
	var rawCost, journalCost storeCost
	var done, rounds int
	before := h.Journal.Counters()
	b.ResetTimer()
	// At least minRounds rounds, each side alternating, whatever b.N: one
	// round (a -benchtime of fewer steps than runs x steps) would measure
	// each side once, in whatever the machine was doing then.
	for done < b.N || rounds < minRounds {
		raw += rawCost.during(b, h, func() time.Duration {
			return all(func() error {
				for range steps {
					if err := h.RawInsert(ctx); err != nil {
						return err
					}
				}
				return nil
			})
		})
		journaled += journalCost.during(b, h, func() time.Duration {
			return all(func() error {
				_, err := e.Start(ctx, benchRunID("concurrent"), BenchFlow, steps)
				return err
			})
		})
		done += runs * steps
		rounds++
	}
	b.StopTimer()
	after := h.Journal.Counters()
	// ns/op over the steps both sides made, not b.N (fewer, when the
	// rounds ran past it).
	b.ReportMetric(float64((raw+journaled).Nanoseconds())/float64(2*done), "ns/op")
	b.ReportMetric(float64(done)/journaled.Seconds(), "steps/s")
	b.ReportMetric(float64(done)/raw.Seconds(), "raw-inserts/s")
	b.ReportMetric(raw.Seconds()/journaled.Seconds(), "throughput-ratio")
	b.ReportMetric(float64(after.Commits-before.Commits)/float64(done), "commits/step")
	journalCost.report(b, h, "", done)
	rawCost.report(b, h, "raw-", done)
}

// storeCost adds up the statements and WAL bytes of one side of a
// benchmark, over its rounds.
type storeCost struct {
	statements, wal int64
}

// during runs round, timed, and adds what it cost the store. The counts
// are read with the timer stopped.
func (c *storeCost) during(b *testing.B, h BenchHarness, round func() time.Duration) time.Duration {
	b.Helper()
	b.StopTimer()
	s0, w0 := c.read(b, h)
	b.StartTimer()
	d := round()
	b.StopTimer()
	s1, w1 := c.read(b, h)
	b.StartTimer()
	c.statements += s1 - s0
	c.wal += w1 - w0
	return d
}

func (c *storeCost) read(b *testing.B, h BenchHarness) (statements, wal int64) {
	b.Helper()
	if h.Statements != nil {
		statements = h.Statements()
	}
	if h.WALBytes != nil {
		var err error
		if wal, err = h.WALBytes(context.Background()); err != nil {
			b.Fatalf("read the WAL position: %v", err)
		}
	}
	return statements, wal
}

// report reports the side's statements and WAL per step (an insert of
// the raw side), those the harness counts.
func (c *storeCost) report(b *testing.B, h BenchHarness, prefix string, steps int) {
	b.Helper()
	if h.Statements != nil {
		b.ReportMetric(float64(c.statements)/float64(steps), prefix+"stmts/step")
	}
	if h.WALBytes != nil {
		b.ReportMetric(float64(c.wal)/float64(steps), prefix+"WAL-B/step")
		if h.WALPage > 0 {
			b.ReportMetric(float64(c.wal)/float64(h.WALPage)/float64(steps), prefix+"WAL-pages/step")
		}
	}
}
