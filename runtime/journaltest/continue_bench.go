package journaltest

import (
	"context"
	"testing"
	"time"

	"github.com/resumegen/resumegen/runtime/resume"
)

// pollState is what BenchPoll's body reads: how many polls (a Poll and a
// Tick step each) its run has made so far. Package code, like a user's.
var pollState struct{ polls int }

// BenchPoll is a poller that never continues: each entry replays every
// poll before and makes one more (steps Poll and Tick, as Poller's).
func BenchPoll(ctx context.Context) error { return nil }

var benchPollDef = &resume.WorkflowDef{
	Package: "github.com/resumegen/resumegen/runtime/journaltest", Name: "BenchPoll", Version: "benchpoll-v1", Steps: pollSteps[:2],
	Run: func(ctx context.Context, args resume.Args) (any, error) {
		for range pollState.polls {
			for i, name := range []string{"Poll", "Tick"} {
				if _, err := resume.Call(ctx, &pollSteps[i], func(ctx context.Context) (int, error) {
					seen.record(ctx, name)
					return 0, nil
				}); err != nil {
					return nil, err
				}
			}
		}
		return nil, nil
	},
}

func init() { resume.Register(BenchPoll, benchPollDef) }

// BenchPoller measures one wake-up of a long-lived poller that has polled
// history times already, beside its raw baseline (two RawInserts: one
// per step it journals), interleaved: with continued, a run of Poller,
// whose every wake-up is a run of its own (it executes its two steps and
// continues as new in one commit); without, one run of BenchPoll that
// replays every earlier poll before it makes one more (reopened by
// h.Reopen, as its sleep's end would). It reports entry/raw and the
// journal rows the wake-up's run holds. Target: continued flat across
// history; one run growing with it.
func BenchPoller(b *testing.B, h BenchHarness, history int, continued bool) {
	b.Helper()
	ctx := context.Background()
	e := resume.NewEngine(h.Journal)
	var cur string
	if continued {
		cur = benchRunID("chain")
		if _, err := e.Start(ctx, cur, Poller, PollPlan{At: 1, Until: 1 << 30}); err != nil {
			b.Fatal(err)
		}
		for range history - 1 {
			res, err := e.Resume(ctx, resume.NextRunID(cur))
			if err != nil {
				b.Fatal(err)
			}
			cur = res.RunID
		}
	} else {
		cur = benchRunID("poller")
		pollState.polls = history
		if _, err := e.Start(ctx, cur, BenchPoll); err != nil {
			b.Fatal(err)
		}
	}
	var entry, raw time.Duration
	var rows int
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		t0 := time.Now()
		for range 2 {
			if err := h.RawInsert(ctx); err != nil {
				b.Fatal(err)
			}
		}
		raw += time.Since(t0)
		id := cur
		if continued {
			id = resume.NextRunID(cur)
		} else {
			pollState.polls++
			if err := h.Reopen(ctx, cur); err != nil {
				b.Fatal(err)
			}
		}
		b.StartTimer()
		t0 = time.Now()
		res, err := e.Resume(ctx, id)
		entry += time.Since(t0)
		b.StopTimer()
		if err != nil || res.Status != resume.StatusSucceeded {
			b.Fatalf("wake-up of %s: %s, %v", id, res.Status, err)
		}
		cur = id
		b.StartTimer()
	}
	b.StopTimer()
	_, steps, err := h.Journal.LoadRun(ctx, cur)
	if err != nil {
		b.Fatal(err)
	}
	rows = len(steps)
	b.ReportMetric(float64(entry.Nanoseconds())/float64(b.N), "entry-ns/op")
	b.ReportMetric(float64(raw.Nanoseconds())/float64(b.N), "raw-ns/op")
	b.ReportMetric(float64(entry)/float64(raw), "entry/raw")
	b.ReportMetric(float64(rows), "rows/run")
}
