package difffuzz

import (
	"fmt"
	"slices"
	"strings"
)

// Construct is a kind of Go a generated program may contain: each is a
// knob, so that a failing program shrinks by turning knobs off.
type Construct string

// The constructs resumegen documents as journaled and replayed exactly.
const (
	// Step is a plain call of a declared step: always on.
	Step Construct = "step"
	// Branch is if/else and switch on values computed from step
	// results, and early returns.
	Branch Construct = "branch"
	// LoopNumbered is a for loop whose steps are numbered by occurrence
	// (S, S#2, ...), its count computed from step results.
	LoopNumbered Construct = "loop-numbered"
	// LoopKeyed is a range loop whose step has a call-site key=EXPR.
	LoopKeyed Construct = "loop-keyed"
	// Helper is a function of the workflow's package that calls steps,
	// called from the body, sometimes twice.
	Helper Construct = "helper"
	// NestedHelper is a helper that calls a helper.
	NestedHelper Construct = "nested-helper"
	// Method is a helper that is a method, on a pointer or a value
	// receiver.
	Method Construct = "method"
	// Child is a child workflow called from a workflow.
	Child Construct = "child"
	// ErrorIs is a step's permanent failure wrapping a sentinel, which
	// the body handles with errors.Is.
	ErrorIs Construct = "errors-is"
	// ErrorAs is a typed error, handled with errors.As.
	ErrorAs Construct = "errors-as"
	// ErrorJoin is errors.Join of a sentinel and a typed error, handled
	// with both.
	ErrorJoin Construct = "errors-join"
	// BodyRetry is a loop in the body calling a step again until it
	// succeeds.
	BodyRetry Construct = "body-retry"
	// StepRetry is retry=N on a step that fails transiently first.
	StepRetry Construct = "step-retry"
	// Defer is a deferred compensation step: a deferred step call, or a
	// deferred function literal calling steps.
	Defer Construct = "defer"
	// MultiResult is a step of several results, (a, b, error), or of a
	// value and no error.
	MultiResult Construct = "multi-result"
	// OutParam is a step writing its result through a pointer parameter.
	OutParam Construct = "out-param"
	// NestedCall is a step call in another step call's arguments.
	NestedCall Construct = "nested-call"
	// Sleep is resume.Sleep.
	Sleep Construct = "sleep"
	// Await is resume.Await of an event, sent to some runs (the harness's
	// WithSignal) and timing out in others.
	Await Construct = "await"
	// Once is a //resume:step once step.
	Once Construct = "once"
	// Tx is a //resume:step tx step.
	Tx Construct = "tx"
	// CallSiteName is //resume:step name=X at a call: a second call site
	// of a step, or a function of another package made a step there.
	CallSiteName Construct = "call-site-name"
	// CallSitePolicy is a policy given or overridden at a call site.
	CallSitePolicy Construct = "call-site-policy"
	// Struct is a struct result with nested fields, slices, maps,
	// pointers and a time.Time.
	Struct Construct = "struct"
	// Failure is a permanent failure the body does not handle: the run
	// fails with it.
	Failure Construct = "failure"
	// Foreign is a helper of a second package of the module (the
	// program's lib), exported and called as lib.H..., whose steps,
	// branches, loops, nested helpers, sleeps and call-site names are
	// declared there: resumegen journals them through a shared copy in
	// lib's generated file.
	Foreign Construct = "foreign-helper"
	// ForeignNondet is a foreign helper reaching, through an unexported
	// function of lib, a call of math/rand or time.Now: resumegen must
	// refuse the program at that call, naming the path from the workflow.
	ForeignNondet Construct = "foreign-nondet"
)

// The constructs issue 18 reports as accepted without being understood:
// each diverges, or is refused with a wrong message, today.
const (
	// HoleJSONDash is a step result with a json:"-" field the body reads.
	HoleJSONDash Construct = "hole-json-dash"
	// HoleUnexported is a step result with an unexported field the body
	// reads.
	HoleUnexported Construct = "hole-unexported"
	// HoleDupJSON is a step result with two fields of one JSON name.
	HoleDupJSON Construct = "hole-dup-json"
	// HoleInputDash is a run input with a json:"-" field the body reads.
	HoleInputDash Construct = "hole-input-dash"
	// HoleTwoCalls is a directive on a line with two calls, meant for
	// the step: fold(acc, Pay(ctx, acc)) //resume:step once.
	HoleTwoCalls Construct = "hole-two-calls"
	// HoleTwoCallsName is the same with name=, where the step needs one.
	HoleTwoCallsName Construct = "hole-two-calls-name"
	// HoleKeyComposite is key= with a composite literal fmt.Stringer,
	// key=ID{i}.
	HoleKeyComposite Construct = "hole-key-composite"
	// HoleTimeNow is time.Now() //resume:step compared with == and read
	// for its Location.
	HoleTimeNow Construct = "hole-time-now"
	// HoleDirectiveCondition is a call-site directive on a line whose if
	// statement also calls errors.Is or errors.As in its condition:
	// if err := S(ctx, a); errors.As(err, &ce) { //resume:step once.
	// Found by this fuzzer: the directive makes errors.As the step.
	HoleDirectiveCondition Construct = "hole-directive-condition"
)

// Supported lists the constructs a random program uses, Step aside.
var Supported = []Construct{
	Branch, LoopNumbered, LoopKeyed, Helper, NestedHelper, Method, Child,
	ErrorIs, ErrorAs, ErrorJoin, BodyRetry, StepRetry, Defer, MultiResult,
	OutParam, NestedCall, Sleep, Await, Once, Tx, CallSiteName, CallSitePolicy,
	Struct, Failure, Foreign, ForeignNondet,
}

// Holes lists issue 18's constructs.
var Holes = []Construct{
	HoleJSONDash, HoleUnexported, HoleDupJSON, HoleInputDash, HoleTwoCalls,
	HoleTwoCallsName, HoleKeyComposite, HoleTimeNow, HoleDirectiveCondition,
}

// IsHole reports whether c is one of issue 18's constructs.
func (c Construct) IsHole() bool { return slices.Contains(Holes, c) }

// Knobs say what a program generated from a seed may contain. The same
// seed with fewer knobs gives a program whose remaining parts are the
// same (each statement draws from a random stream of its own), so a
// failing program shrinks knob by knob.
type Knobs struct {
	// Size is the number of statements of the workflow's body.
	Size int `json:"size"`
	// Depth is how deep blocks (branches, loops, helpers, children) nest.
	Depth int `json:"depth"`
	// Use are the constructs allowed, sorted.
	Use []Construct `json:"use"`
}

// DefaultKnobs are the knobs of the random programs: every supported
// construct, no hole.
func DefaultKnobs() Knobs {
	return Knobs{Size: 7, Depth: 2, Use: slices.Clone(Supported)}.normal()
}

// normal returns k with its constructs sorted and unique.
func (k Knobs) normal() Knobs {
	k.Use = slices.Clone(k.Use)
	slices.Sort(k.Use)
	k.Use = slices.Compact(k.Use)
	return k
}

// Has reports whether k allows c (Step always).
func (k Knobs) Has(c Construct) bool { return c == Step || slices.Contains(k.Use, c) }

// With returns k allowing cs too.
func (k Knobs) With(cs ...Construct) Knobs {
	k.Use = append(slices.Clone(k.Use), cs...)
	return k.normal()
}

// Without returns k without c.
func (k Knobs) Without(c Construct) Knobs {
	k.Use = slices.DeleteFunc(slices.Clone(k.Use), func(u Construct) bool { return u == c })
	return k
}

// Holes returns the holes k allows.
func (k Knobs) Holes() []Construct {
	var out []Construct
	for _, c := range k.Use {
		if c.IsHole() {
			out = append(out, c)
		}
	}
	return out
}

// String writes k as size=N depth=N use=a,b,c.
func (k Knobs) String() string {
	use := make([]string, len(k.Use))
	for i, c := range k.Use {
		use[i] = string(c)
	}
	return fmt.Sprintf("size=%d depth=%d use=%s", k.Size, k.Depth, strings.Join(use, ","))
}

// Shrinks returns the knobs one step smaller than k, smallest change
// first: each construct off, a smaller body, shallower nesting.
func (k Knobs) Shrinks() []Knobs {
	var out []Knobs
	for _, c := range k.Use {
		out = append(out, k.Without(c))
	}
	if k.Size > 1 {
		half := k
		half.Size = k.Size / 2
		out = append(out, half)
		less := k
		less.Size = k.Size - 1
		out = append(out, less)
	}
	if k.Depth > 0 {
		flat := k
		flat.Depth = k.Depth - 1
		out = append(out, flat)
	}
	return out
}
