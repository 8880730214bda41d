package difffuzz

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"

	"github.com/resumegen/resumegen/internal/difffuzz/fuzzrt"
)

// Kind classifies a divergence.
type Kind string

// The kinds of divergence, from the generator's to the runtime's.
const (
	// KindProgram: the fuzzer generated a program that is not valid Go
	// (a bug of the fuzzer's own).
	KindProgram Kind = "program"
	// KindGenerator: resumegen crashed, or failed without file:line:col
	// diagnostics.
	KindGenerator Kind = "generator"
	// KindRefusal: a refusal that is no refusal: its message is a parse
	// error of resumegen's own making, or asks for what the line has.
	KindRefusal Kind = "refusal"
	// KindBuild: resumegen accepted the program and wrote code that does
	// not compile.
	KindBuild Kind = "build"
	// KindAccepted: resumegen accepted a program it must refuse (a
	// non-deterministic call in the second package, ForeignNondet), or
	// refused it without naming the path from the workflow to the call.
	KindAccepted Kind = "accepted"
	// KindDriver: the program could not be crash-tested at all.
	KindDriver Kind = "driver"
	// KindHarness: package resumetest found the resumed run wrong.
	KindHarness Kind = "harness"
	// KindDirect: the durable run computed another outcome than the
	// workflow called as a plain function with the same input.
	KindDirect Kind = "direct"
	// KindOutcome: the resumed run ended otherwise than the
	// uninterrupted one (status, output, error).
	KindOutcome Kind = "outcome"
	// KindDuplicate: a step executed more often than its policy allows.
	KindDuplicate Kind = "duplicate"
	// KindMissing: a step executed less often than in the uninterrupted
	// run.
	KindMissing Kind = "missing"
	// KindTx: a tx step's rows committed another number of times.
	KindTx Kind = "tx"
	// KindPolicy: a step ran under another policy or name than the
	// program means.
	KindPolicy Kind = "policy"
	// KindPark: a once step killed at its effect did not park the run
	// for a person, or a run parked where nothing was unknown.
	KindPark Kind = "park"
	// KindReal: a case played with real processes could not be played
	// (the process was not killed at the fault, or did not finish).
	KindReal Kind = "real"
)

// Divergence is one way a program's runs broke the replay promise.
type Divergence struct {
	Program string `json:"program"`
	// Case is the crash case ("S3:effect"; "real S3:effect" for a real
	// process), or "" for the program as a whole.
	Case   string `json:"case,omitempty"`
	Kind   Kind   `json:"kind"`
	Detail string `json:"detail"`
}

func (d Divergence) String() string {
	if d.Case == "" {
		return fmt.Sprintf("%s: %s: %s", d.Program, d.Kind, d.Detail)
	}
	return fmt.Sprintf("%s, crash %s: %s: %s", d.Program, d.Case, d.Kind, d.Detail)
}

// runKey names a step key of a run (run ids relative to the top run).
type runKey struct{ run, key string }

func (k runKey) String() string {
	if k.run == "" {
		return k.key
	}
	return k.key + " of run " + strings.TrimPrefix(k.run, "/")
}

// Compare judges what the driver observed of program p: within each
// policy, every crash case's outcome must equal the uninterrupted run's;
// a default step executes at least as often as uninterrupted and at most
// once more when the crash landed at its effect; a tx step's rows commit
// exactly as often; a once step never executes more often, and a kill at
// its effect parks the run for a person; every step runs under the name
// and policy the program means.
func Compare(p *Program, obs *fuzzrt.Observation) []Divergence {
	var out []Divergence
	add := func(cs string, kind Kind, format string, args ...any) {
		out = append(out, Divergence{Program: p.Name, Case: cs, Kind: kind, Detail: fmt.Sprintf(format, args...)})
	}
	if obs.Fatal != "" {
		add("", KindDriver, "the driver could not crash-test it: %s", obs.Fatal)
	}
	if obs.Fatal == "" {
		if why := directDiffers(obs.Direct, obs.Result); why != "" {
			add("", KindDirect, "%s", why)
		}
	}
	reported := map[string]bool{}
	out = append(out, policies(p, "", obs.Base.Effects, reported)...)
	base := counts(obs.Base.Effects)
	names := stepNames(obs.Base.Effects)
	for _, c := range obs.Cases {
		name := c.Name
		if c.Real {
			name = "real " + name
		}
		for _, pr := range c.Problems {
			add(name, KindHarness, "%s", pr)
		}
		if c.Step == "" {
			continue // the harness's own reports
		}
		if c.Error != "" {
			add(name, KindReal, "%s", c.Error)
			continue
		}
		for _, e := range c.Effects {
			names[runKey{e.Run, e.Key}] = e.Name
		}
		out = append(out, policies(p, name, c.Effects, reported)...)
		crashed := crashedKey(obs.Base.Effects, c.Step)
		intent := p.Intent[names[crashed]]
		wantPark := c.Point == string(resumeFaultEffect) && intent == "once"
		switch {
		case wantPark && !c.Parked:
			add(name, KindPark, "once step %s was killed after its effect, and the run did not stop for a person: its effect may repeat", crashed)
		case !wantPark && c.Parked:
			add(name, KindPark, "the run stopped for a person at %s, whose outcome was known (a %s step killed at %s)", crashed, orDefault(intent), c.Point)
		}
		got := counts(c.Effects)
		if c.Unresolved {
			// Left parked: nothing may have executed more often.
			if !strings.HasPrefix(c.Outcome, "needs_attention") {
				add(name, KindPark, "left unresolved, the run is %s, not needs_attention", c.Outcome)
			}
			for _, k := range union(base, got) {
				if got[k] > base[k] {
					add(name, KindDuplicate, "step %s executed %s, the uninterrupted run %s, and the run waits for a person", k, times(got[k]), times(base[k]))
				}
			}
			continue
		}
		if c.Outcome != obs.Base.Outcome {
			add(name, KindOutcome, "the resumed run ended %s; the uninterrupted run %s", c.Outcome, obs.Base.Outcome)
		}
		for _, k := range union(base, got) {
			policy, known := p.Intent[names[k]]
			if !known {
				continue // reported by policies
			}
			allowed := base[k]
			if k == crashed && c.Point == string(resumeFaultEffect) && policy != "once" {
				allowed++ // its effect happened, its journal row did not
			}
			switch {
			case got[k] > allowed:
				add(name, KindDuplicate, "%s step %s executed %s, the uninterrupted run %s%s", policy, k, times(got[k]), times(base[k]), allowance(k == crashed, c.Point, policy))
			case got[k] < base[k]:
				add(name, KindMissing, "%s step %s executed %s, the uninterrupted run %s", policy, k, times(got[k]), times(base[k]))
			}
		}
		baseRows, gotRows := txRows(obs.Base.TxRows), txRows(c.TxRows)
		for _, k := range union(baseRows, gotRows) {
			if p.Intent[names[k]] == "tx" && baseRows[k] != gotRows[k] {
				add(name, KindTx, "tx step %s committed %s, the uninterrupted run %s", k, times(gotRows[k]), times(baseRows[k]))
			}
		}
	}
	return out
}

// directDiffers says how the uninterrupted durable run's result r differs
// from the workflow called as a plain function (d): a succeeded run must
// return what the function returns, a failed one its error's text.
func directDiffers(d fuzzrt.DirectObs, r fuzzrt.ResultObs) string {
	if d.Skipped {
		return ""
	}
	switch r.Status {
	case "succeeded":
		if d.Error != "" {
			return fmt.Sprintf("the run succeeded with %s; the plain function failed: %s", r.Output, d.Error)
		}
		if !jsonEqual(d.Output, r.Output) {
			return fmt.Sprintf("the run's output is %s; the plain function returned %s", r.Output, d.Output)
		}
	case "failed":
		if d.Error != r.Error {
			if d.Error == "" {
				return fmt.Sprintf("the run failed (%s); the plain function returned %s", r.Error, d.Output)
			}
			return fmt.Sprintf("the run failed with %q; the plain function with %q", r.Error, d.Error)
		}
	default:
		return fmt.Sprintf("the uninterrupted run ended %s: %s", r.Status, r.Error)
	}
	return ""
}

// jsonEqual reports whether a and b are the same JSON value.
func jsonEqual(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return bytes.Equal(a, b)
	}
	return reflect.DeepEqual(x, y)
}

// resumeFaultEffect is the fault point after a step's effect.
const resumeFaultEffect = "effect"

// policies reports the effects that ran under another name or policy
// than p means, each step name once per program.
func policies(p *Program, cs string, effects []fuzzrt.Effect, reported map[string]bool) []Divergence {
	var out []Divergence
	for _, e := range effects {
		if reported[e.Name] {
			continue
		}
		intent, ok := p.Intent[e.Name]
		switch {
		case !ok:
			reported[e.Name] = true
			out = append(out, Divergence{Program: p.Name, Case: cs, Kind: KindPolicy, Detail: fmt.Sprintf(
				"the code of %s ran as step %s (%s), a step the program does not have", e.Func, e.Name, e.Policy)})
		case intent != e.Policy:
			reported[e.Name] = true
			out = append(out, Divergence{Program: p.Name, Case: cs, Kind: KindPolicy, Detail: fmt.Sprintf(
				"step %s ran under policy %s; the program means %s", e.Name, e.Policy, intent)})
		}
	}
	return out
}

// counts counts executions (attempts) by run and step key.
func counts(effects []fuzzrt.Effect) map[runKey]int {
	out := map[runKey]int{}
	for _, e := range effects {
		out[runKey{e.Run, e.Key}]++
	}
	return out
}

// stepNames maps each run and step key to its step's name.
func stepNames(effects []fuzzrt.Effect) map[runKey]string {
	out := map[runKey]string{}
	for _, e := range effects {
		out[runKey{e.Run, e.Key}] = e.Name
	}
	return out
}

// txRows maps each run and step key to its committed tx rows.
func txRows(rows []fuzzrt.TxRow) map[runKey]int {
	out := map[runKey]int{}
	for _, r := range rows {
		out[runKey{r.Run, r.Key}] += r.Rows
	}
	return out
}

// crashedKey is the step a fault at key strikes: its first execution in
// the uninterrupted run (a fault names a key; the harness crashes its
// first execution).
func crashedKey(effects []fuzzrt.Effect, key string) runKey {
	for _, e := range effects {
		if e.Key == key {
			return runKey{e.Run, e.Key}
		}
	}
	return runKey{key: key}
}

func union(a, b map[runKey]int) []runKey {
	seen := map[runKey]bool{}
	var out []runKey
	for _, m := range []map[runKey]int{a, b} {
		for k := range m {
			if !seen[k] {
				seen[k] = true
				out = append(out, k)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].run != out[j].run {
			return out[i].run < out[j].run
		}
		return out[i].key < out[j].key
	})
	return out
}

func times(n int) string {
	if n == 1 {
		return "once"
	}
	return fmt.Sprintf("%d times", n)
}

func orDefault(policy string) string {
	if policy == "" {
		return "default"
	}
	return policy
}

func allowance(crashed bool, point, policy string) string {
	switch {
	case crashed && point == resumeFaultEffect && policy != "once":
		return fmt.Sprintf(" (a %s step killed at its effect may execute once more, no more)", policy)
	case crashed:
		return fmt.Sprintf(" (a %s step killed at %s executes as often)", policy, point)
	}
	return " (only the killed step may execute more)"
}
