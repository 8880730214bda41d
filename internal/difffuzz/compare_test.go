package difffuzz

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/resumegen/resumegen/internal/difffuzz/fuzzrt"
)

// The comparison's tests: an observation that keeps every promise passes,
// and each broken promise is reported with its kind.

func eff(key, name, policy string, attempt int) fuzzrt.Effect {
	return fuzzrt.Effect{Key: key, Name: name, Func: name, Policy: policy, Attempt: attempt, OK: true}
}

// passing is the observation of a program of a default step A, a once
// step B and a tx step C, and its crash cases, as a correct runtime
// leaves them.
func passing() (*Program, *fuzzrt.Observation) {
	p := &Program{Name: "p", Intent: map[string]string{"A": "default", "B": "once", "C": "tx"}}
	base := []fuzzrt.Effect{eff("A", "A", "default", 1), eff("B", "B", "once", 1), eff("C", "C", "tx", 1)}
	rows := []fuzzrt.TxRow{{Key: "C", Rows: 1}}
	out := `succeeded output {"Acc":1}`
	obs := &fuzzrt.Observation{
		Program: "p",
		Direct:  fuzzrt.DirectObs{Output: json.RawMessage(`{"Acc": 1}`)},
		Result:  fuzzrt.ResultObs{Status: "succeeded", Output: json.RawMessage(`{"Acc":1}`)},
		Base:    fuzzrt.RunObs{Outcome: out, Effects: base, TxRows: rows},
	}
	with := func(name, step, point string, parked bool, effects ...fuzzrt.Effect) fuzzrt.CaseObs {
		return fuzzrt.CaseObs{Name: name, Step: step, Point: point, Parked: parked, RunObs: fuzzrt.RunObs{Outcome: out, Effects: effects, TxRows: rows}}
	}
	obs.Cases = []fuzzrt.CaseObs{
		with("A:before", "A", "before", false, base...),
		// A default step killed at its effect runs once more.
		with("A:effect", "A", "effect", false, eff("A", "A", "default", 1), eff("A", "A", "default", 2), base[1], base[2]),
		// A once step killed at its effect parks, and is resolved.
		with("B:effect", "B", "effect", true, base...),
		// A tx step killed at its effect runs again; its row commits once.
		with("C:effect", "C", "effect", false, base[0], base[1], eff("C", "C", "tx", 1), eff("C", "C", "tx", 2)),
	}
	return p, obs
}

func TestComparePassesKeptPromises(t *testing.T) {
	p, obs := passing()
	if ds := Compare(p, obs); len(ds) > 0 {
		t.Fatalf("a correct observation diverges: %v", ds)
	}
}

func TestCompareReportsEachBrokenPromise(t *testing.T) {
	for _, tc := range []struct {
		name    string
		kind    Kind
		breakIt func(p *Program, o *fuzzrt.Observation)
	}{
		{"once step twice", KindDuplicate, func(p *Program, o *fuzzrt.Observation) {
			c := &o.Cases[2]
			c.Effects = append(c.Effects, eff("B", "B", "once", 2))
		}},
		{"default step twice without a crash at its effect", KindDuplicate, func(p *Program, o *fuzzrt.Observation) {
			c := &o.Cases[0]
			c.Effects = append(c.Effects, eff("A", "A", "default", 2))
		}},
		{"default step three times after a crash at its effect", KindDuplicate, func(p *Program, o *fuzzrt.Observation) {
			c := &o.Cases[1]
			c.Effects = append(c.Effects, eff("A", "A", "default", 3))
		}},
		{"a step skipped", KindMissing, func(p *Program, o *fuzzrt.Observation) {
			c := &o.Cases[0]
			c.Effects = c.Effects[1:]
		}},
		{"tx rows committed twice", KindTx, func(p *Program, o *fuzzrt.Observation) {
			c := &o.Cases[3]
			c.TxRows = []fuzzrt.TxRow{{Key: "C", Rows: 2}}
		}},
		{"once step not parked", KindPark, func(p *Program, o *fuzzrt.Observation) { o.Cases[2].Parked = false }},
		{"default step parked", KindPark, func(p *Program, o *fuzzrt.Observation) { o.Cases[1].Parked = true }},
		{"another outcome", KindOutcome, func(p *Program, o *fuzzrt.Observation) {
			o.Cases[0].Outcome = `succeeded output {"Acc":2}`
		}},
		{"another policy", KindPolicy, func(p *Program, o *fuzzrt.Observation) { p.Intent["B"] = "tx" }},
		{"a step the program does not have", KindPolicy, func(p *Program, o *fuzzrt.Observation) { delete(p.Intent, "A") }},
		{"plain call differs", KindDirect, func(p *Program, o *fuzzrt.Observation) {
			o.Direct.Output = json.RawMessage(`{"Acc":7}`)
		}},
		{"plain call fails", KindDirect, func(p *Program, o *fuzzrt.Observation) { o.Direct = fuzzrt.DirectObs{Error: "boom"} }},
		{"the harness complains", KindHarness, func(p *Program, o *fuzzrt.Observation) {
			o.Cases[0].Problems = []string{"the resumed body took another path"}
		}},
		{"the driver could not run it", KindDriver, func(p *Program, o *fuzzrt.Observation) { o.Fatal = "uninterrupted run failed" }},
		{"a real process not killed", KindReal, func(p *Program, o *fuzzrt.Observation) {
			o.Cases[0].Real, o.Cases[0].Error = true, "the process was not killed at A:before"
		}},
		{"unresolved, yet executed twice", KindDuplicate, func(p *Program, o *fuzzrt.Observation) {
			c := &o.Cases[2]
			c.Unresolved, c.Outcome = true, "needs_attention at step B"
			c.Effects = append(c.Effects, eff("B", "B", "once", 2))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, obs := passing()
			tc.breakIt(p, obs)
			ds := Compare(p, obs)
			for _, d := range ds {
				if d.Kind == tc.kind {
					return
				}
			}
			t.Errorf("want a %s divergence, got %v", tc.kind, ds)
		})
	}
}

func TestBadRefusal(t *testing.T) {
	p := &Program{Source: "package p\n\tx := f(a, S(ctx, a)) //resume:step name=Sb\n\ty := S(ctx) //resume:step key=ID{i}\n"}
	for _, tc := range []struct {
		ref  Refusal
		want string
	}{
		{Refusal{Line: 2, Message: "step name S is already used by the call at p.go:9:8: add //resume:step name=NAME at the end of one call's line"}, "asks for name="},
		{Refusal{Line: 3, Message: "//resume:step key=ID{i}: key=ID{…}: 1:4: illegal character U+2026 '…'"}, "syntax error"},
		{Refusal{Line: 3, Message: "step S: its result type chan int cannot be journaled"}, ""},
	} {
		got := badRefusal(p, tc.ref)
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("badRefusal(%q) = %q, want %q", tc.ref.Message, got, tc.want)
		}
	}
}
