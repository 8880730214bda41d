package difffuzz

import (
	"fmt"
	"go/format"
	"hash/fnv"
	"math/rand/v2"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Program is one workflow program and what the fuzzer needs to judge its
// runs: which policy the program means for each step, and which
// construct wrote each line (to tell what a refusal refused).
type Program struct {
	// Name is the program's package name and id.
	Name string `json:"name"`
	// Seed and Knobs made the program (zero for a program written by
	// hand).
	Seed  uint64 `json:"seed"`
	Knobs Knobs  `json:"knobs"`
	// Source is the program's file.
	Source string `json:"-"`
	// Lib is the file of the program's second package, lib (package
	// path <program>/lib), "" when the program has none (no Foreign).
	Lib string `json:"-"`
	// Intent maps each step's journal name to the policy the program
	// means for it: default, once or tx.
	Intent map[string]string `json:"intent"`
	// Lines maps a line of Source to the construct that wrote it, and
	// LibLines a line of Lib.
	Lines    map[int]Construct `json:"lines"`
	LibLines map[int]Construct `json:"lib_lines,omitempty"`
	// Used are the constructs the program contains, sorted.
	Used []Construct `json:"used"`
}

// UsesHole reports whether the program contains one of issue 18's
// constructs.
func (p *Program) UsesHole() bool {
	return slices.ContainsFunc(p.Used, Construct.IsHole)
}

// Construct returns the construct that wrote line n of the source, or
// "" when none is known.
func (p *Program) Construct(line int) Construct { return p.Lines[line] }

// LibConstruct is Construct for line n of Lib.
func (p *Program) LibConstruct(line int) Construct { return p.LibLines[line] }

// ProgramName is the name of the program generated from seed.
func ProgramName(seed uint64) string { return fmt.Sprintf("p%d", seed) }

// Generate returns the program of seed and knobs. It is deterministic:
// the same seed and knobs give the same text.
func Generate(seed uint64, k Knobs) *Program {
	return GenerateNamed(ProgramName(seed), seed, k)
}

// GenerateNamed is [Generate] with the program's package named name.
func GenerateNamed(name string, seed uint64, k Knobs) *Program {
	k = k.normal()
	g := &gen{seed: seed, k: k, intent: map[string]string{}, used: map[Construct]bool{}, types: map[string]bool{}, written: map[string]bool{}, signals: map[string]int{}}
	return g.program(name)
}

// gen builds one program.
type gen struct {
	seed   uint64
	k      Knobs
	intent map[string]string
	used   map[Construct]bool
	// funcs are the helpers, methods and child workflows; steps the step
	// functions: each a chunk of lines, in order of creation.
	funcs, steps []*chunk
	// callable are step functions a second call site may call with name=.
	callable []*stepFn
	// types are the optional declarations the program needs.
	types     map[string]bool
	written   map[string]bool // step functions declared
	inputDash bool
	// signals are the events the driver sends (name to payload); awaits
	// says the workflow awaits events, so that it cannot be called as a
	// plain function.
	signals map[string]int
	awaits  bool
	// inLib is set while the statements of a Foreign helper, in the
	// second package, are generated; lib holds what they declare there.
	inLib bool
	lib   libPart
}

// libPart is what a program declares in its second package: helpers and
// steps (each a chunk, in order of creation), the steps a second call
// site there may call, whether anything is there, and whether a helper
// draws on math/rand.
type libPart struct {
	funcs, steps []*chunk
	callable     []*stepFn
	used, rand   bool
}

// addFunc records f, a helper, method or child workflow, in the package
// being generated.
func (g *gen) addFunc(f *chunk) {
	if g.inLib {
		g.lib.funcs = append(g.lib.funcs, f)
	} else {
		g.funcs = append(g.funcs, f)
	}
}

// addCallable records s as a step a later call site (name=) of the same
// package may call.
func (g *gen) addCallable(s *stepFn) {
	if g.inLib {
		g.lib.callable = append(g.lib.callable, s)
	} else {
		g.callable = append(g.callable, s)
	}
}

// callableHere are the steps a call site of the package being generated
// may call a second time.
func (g *gen) callableHere() []*stepFn {
	if g.inLib {
		return g.lib.callable
	}
	return g.callable
}

// chunk is a run of source lines, each with the construct that wrote it.
type chunk struct{ lines []tline }

type tline struct {
	text string
	tag  Construct
}

// add appends a line indented by indent tabs.
func (c *chunk) add(tag Construct, indent int, format string, args ...any) {
	c.lines = append(c.lines, tline{text: strings.Repeat("\t", indent) + fmt.Sprintf(format, args...), tag: tag})
}

// frame is the construct of the lines every program has.
const frame Construct = "frame"

// rng returns the random stream of the statement at path: each statement
// draws from its own, so a knob turned off changes only the statements it
// governs.
func (g *gen) rng(path string) *rand.Rand {
	h := fnv.New64a()
	h.Write([]byte(path))
	return rand.New(rand.NewPCG(g.seed, h.Sum64()))
}

// scope is where a block of statements is generated.
type scope struct {
	fn     fnKind
	depth  int  // nesting levels left
	once   bool // the block runs at most once per run (a key= loop may go here)
	top    bool // the workflow's own top level (named results in reach)
	indent int
}

type fnKind int

const (
	inWorkflow fnKind = iota
	inHelper
	inChild
)

// ret is the statement that returns err from the function of s.
func (s scope) ret(err string) string {
	if s.fn == inWorkflow {
		return fmt.Sprintf("return Output{}, fmt.Errorf(\"flow: %%w\", %s)", err)
	}
	return "return acc, " + err
}

// okReturn is an early successful return from the function of s.
func (s scope) okReturn() string {
	if s.fn == inWorkflow {
		return "return Output{Acc: acc, Trace: trace}, nil"
	}
	return "return acc, nil"
}

func (s scope) inner() scope {
	s.depth--
	s.top = false
	s.indent++
	return s
}

func (g *gen) program(name string) *Program {
	r := g.rng("frame")
	base := r.IntN(1000)
	names := []string{"ann", "bob", "cy"}[:2+r.IntN(2)]
	body := &chunk{}
	sc := scope{fn: inWorkflow, depth: g.k.Depth, once: true, top: true, indent: 1}
	for i := 1; i <= g.k.Size; i++ {
		g.stmt(body, sc, strconv.Itoa(i))
	}
	g.used[Step] = true

	var f chunk
	add := func(format string, args ...any) { f.add(frame, 0, format, args...) }
	add("// Package %s is a workflow program the differential fuzzer generated", name)
	add("// (seed %d, knobs %s).", g.seed, g.k)
	add("package %s", name)
	add("")
	add("import (")
	for _, imp := range []string{"context", "errors", "fmt", "time"} {
		add("\t%q", imp)
	}
	add("")
	if g.lib.used {
		add("\t%q", ModulePath+"/"+name+"/lib")
	}
	add("\t%q", "github.com/resumegen/resumegen/internal/difffuzz/fuzzrt")
	add("\t%q", "github.com/resumegen/resumegen/runtime/resume")
	add(")")
	add("")
	g.declareTypes(&f)
	add("// Flow is the program's workflow.")
	add("//")
	add("//resume:workflow")
	add("func Flow(ctx context.Context, in Input) (out Output, err error) {")
	add("\tacc := in.Base")
	add("\tvar trace []string")
	f.lines = append(f.lines, body.lines...)
	add("\treturn Output{Acc: acc, Trace: trace}, nil")
	add("}")
	for _, c := range append(slices.Clone(g.funcs), g.steps...) {
		add("")
		f.lines = append(f.lines, c.lines...)
	}
	add("")
	add("// Program describes the program to the fuzzer's driver.")
	token := ""
	if g.inputDash {
		token = ", Token: 7"
	}
	waits := ""
	if g.awaits {
		var events []string
		for ev := range g.signals {
			events = append(events, ev)
		}
		sort.Strings(events)
		var sig []string
		for _, ev := range events {
			sig = append(sig, fmt.Sprintf("%q: %d", ev, g.signals[ev]))
		}
		waits = fmt.Sprintf(", Signals: map[string]any{%s}, Awaits: true", strings.Join(sig, ", "))
	}
	add("var Program = fuzzrt.Program{Name: %q, Workflow: Flow, Args: []any{Input{Base: %d, Names: %#v%s}}%s}", name, base, names, token, waits)
	add("")
	add("var _ = resume.Permanent // the import, whether or not a step uses it")

	p := &Program{Name: name, Seed: g.seed, Knobs: g.k, Intent: g.intent}
	p.Source, p.Lines = render(f.lines)
	if g.lib.used {
		p.Lib, p.LibLines = render(g.libFile(name).lines)
	}
	for c := range g.used {
		p.Used = append(p.Used, c)
	}
	sort.Slice(p.Used, func(i, j int) bool { return p.Used[i] < p.Used[j] })
	return p
}

// render returns the text of lines, gofmt'd when that keeps every line
// where it is, and the construct of each line but the frame's.
func render(lines []tline) (string, map[int]Construct) {
	tags := map[int]Construct{}
	var src strings.Builder
	for i, l := range lines {
		src.WriteString(l.text)
		src.WriteByte('\n')
		if l.tag != frame {
			tags[i+1] = l.tag
		}
	}
	text := src.String()
	if b, err := format.Source([]byte(text)); err == nil && strings.Count(string(b), "\n") == strings.Count(text, "\n") {
		text = string(b) // gofmt keeps lines where they are
	}
	return text, tags
}

// libFile is the file of the program's second package: its own copy of
// the program's sentinels and types (so that a step of lib fails, and is
// handled, there as in the workflow's package), then its helpers and
// steps.
func (g *gen) libFile(name string) *chunk {
	var f chunk
	add := func(format string, args ...any) { f.add(frame, 0, format, args...) }
	add("// Package lib is the second package of program %s: the helpers its", name)
	add("// workflow calls across a package boundary, and their steps.")
	add("package lib")
	add("")
	add("import (")
	imports := []string{"context", "errors", "fmt"}
	if g.lib.rand {
		imports = append(imports, "math/rand/v2")
	}
	for _, imp := range append(imports, "time") {
		add("\t%q", imp)
	}
	add("")
	add("\t%q", "github.com/resumegen/resumegen/internal/difffuzz/fuzzrt")
	add("\t%q", "github.com/resumegen/resumegen/runtime/resume")
	add(")")
	add("")
	g.declareShared(&f) // ends with an empty line
	for _, c := range append(slices.Clone(g.lib.funcs), g.lib.steps...) {
		f.lines = append(f.lines, c.lines...)
		add("")
	}
	add("var _ = resume.Permanent // the import, whether or not a step uses it")
	return &f
}

// declareTypes writes the types and sentinels of the program.
func (g *gen) declareTypes(f *chunk) {
	add := func(tag Construct, format string, args ...any) { f.add(tag, 0, format, args...) }
	add(frame, "// Input is the run's input.")
	add(frame, "type Input struct {")
	add(frame, "\tBase  int")
	add(frame, "\tNames []string")
	if g.inputDash {
		add(HoleInputDash, "\tToken int `json:\"-\"`")
	}
	add(frame, "}")
	add(frame, "")
	add(frame, "// Output is what a run returns.")
	add(frame, "type Output struct {")
	add(frame, "\tAcc   int")
	add(frame, "\tTrace []string")
	add(frame, "}")
	add(frame, "")
	g.declareShared(f)
	if g.types["RecDash"] {
		add(HoleJSONDash, "// RecDash has a field JSON drops.")
		add(HoleJSONDash, "type RecDash struct {")
		add(HoleJSONDash, "\tN      int")
		add(HoleJSONDash, "\tSecret int `json:\"-\"`")
		add(HoleJSONDash, "}")
		add(HoleJSONDash, "")
	}
	if g.types["RecHidden"] {
		add(HoleUnexported, "// RecHidden has an unexported field.")
		add(HoleUnexported, "type RecHidden struct {")
		add(HoleUnexported, "\tN      int")
		add(HoleUnexported, "\thidden int")
		add(HoleUnexported, "}")
		add(HoleUnexported, "")
	}
	if g.types["RecDup"] {
		add(HoleDupJSON, "// RecDup has two fields of one JSON name.")
		add(HoleDupJSON, "type RecDup struct {")
		add(HoleDupJSON, "\tA int `json:\"v\"`")
		add(HoleDupJSON, "\tB int `json:\"v\"`")
		add(HoleDupJSON, "}")
		add(HoleDupJSON, "")
	}
	if g.types["ID"] {
		add(HoleKeyComposite, "// ID names a loop's occurrences: a fmt.Stringer key.")
		add(HoleKeyComposite, "type ID struct{ N int }")
		add(HoleKeyComposite, "")
		add(HoleKeyComposite, "func (d ID) String() string { return fmt.Sprintf(\"id-%%d\", d.N) }")
		add(HoleKeyComposite, "")
	}
	if g.types["fold"] {
		add(HoleTwoCalls, "// fold is plain code, no step.")
		add(HoleTwoCalls, "func fold(a, b int) int { return fuzzrt.Mix(a, b) }")
		add(HoleTwoCalls, "")
	}
}

// declareShared writes the sentinels and types both packages of a
// program declare, each its own.
func (g *gen) declareShared(f *chunk) {
	add := func(tag Construct, format string, args ...any) { f.add(tag, 0, format, args...) }
	add(frame, "// ErrSoft is the sentinel of the failures the body handles.")
	add(frame, "var ErrSoft = errors.New(\"soft failure\")")
	add(frame, "")
	add(frame, "// ErrHard is the sentinel of the failures the body does not handle.")
	add(frame, "var ErrHard = errors.New(\"hard failure\")")
	add(frame, "")
	add(frame, "// CodeError is a typed failure.")
	add(frame, "type CodeError struct {")
	add(frame, "\tStep string")
	add(frame, "\tCode int")
	add(frame, "}")
	add(frame, "")
	add(frame, "func (e *CodeError) Error() string { return fmt.Sprintf(\"%%s: code %%d\", e.Step, e.Code) }")
	add(frame, "")
	add(frame, "// Inner is nested in Rec.")
	add(frame, "type Inner struct {")
	add(frame, "\tA int")
	add(frame, "\tB []int")
	add(frame, "}")
	add(frame, "")
	add(frame, "// Rec is a struct result: nested fields, a slice, a map, a pointer, a time.")
	add(frame, "type Rec struct {")
	add(frame, "\tN     int")
	add(frame, "\tName  string")
	add(frame, "\tTags  []string")
	add(frame, "\tAttrs map[string]int")
	add(frame, "\tInner Inner")
	add(frame, "\tPtr   *Inner")
	add(frame, "\tAt    time.Time")
	add(frame, "}")
	add(frame, "")
	add(frame, "// Pair is what an out-parameter step writes.")
	add(frame, "type Pair struct{ A, B int }")
	add(frame, "")
}

// The statements a block draws from, with their weights.
var stmtWeights = []struct {
	c Construct
	w int
}{
	{Step, 6}, {Branch, 3}, {LoopNumbered, 2}, {LoopKeyed, 1}, {Helper, 2},
	{Method, 1}, {Child, 1}, {BodyRetry, 1}, {Defer, 1}, {Sleep, 1},
	{CallSiteName, 1}, {CallSitePolicy, 1}, {NestedCall, 1}, {Await, 1},
	{Foreign, 2},
}

func pickWeighted(n int) Construct {
	for _, sw := range stmtWeights {
		if n < sw.w {
			return sw.c
		}
		n -= sw.w
	}
	return Step
}

func totalWeight() int {
	t := 0
	for _, sw := range stmtWeights {
		t += sw.w
	}
	return t
}

// holeShare is the share of statements that are one of issue 18's holes,
// when the knobs allow some: about a third of the programs then hold one,
// and the others still test the supported constructs.
const holeShare = 0.035

// stmt writes the statement at path.
func (g *gen) stmt(c *chunk, sc scope, path string) {
	r := g.rng(path)
	holeU, holePick, kindPick := r.Float64(), r.IntN(1<<16), r.IntN(totalWeight())
	if holes := g.k.Holes(); len(holes) > 0 && holeU < holeShare && !g.inLib {
		if h := holes[holePick%len(holes)]; g.holeFits(h, sc) {
			g.used[h] = true
			g.hole(c, sc, path, r, h)
			return
		}
	}
	kind := pickWeighted(kindPick)
	if !g.k.Has(kind) || !g.fits(kind, sc) {
		kind = Step
	}
	g.used[kind] = true
	switch kind {
	case Step:
		s := g.newStep("S"+path, r, Step)
		g.addCallable(s)
		g.call(c, sc, Step, s, path, "acc", "")
	case Branch:
		g.branch(c, sc, path, r)
	case LoopNumbered:
		g.loopNumbered(c, sc, path, r)
	case LoopKeyed:
		g.loopKeyed(c, sc, path, r)
	case Helper:
		g.helper(c, sc, path, r)
	case Method:
		g.method(c, sc, path, r)
	case Child:
		g.child(c, sc, path, r)
	case BodyRetry:
		g.bodyRetry(c, sc, path, r)
	case Defer:
		g.deferred(c, sc, path, r)
	case Sleep:
		// Milliseconds: the workflow called as a plain function
		// sleeps for real; a run's clock jumps.
		c.add(Sleep, sc.indent, "if err := resume.Sleep(ctx, %d*time.Millisecond); err != nil {", 1+r.IntN(20))
		c.add(Sleep, sc.indent+1, "%s", sc.ret("err"))
		c.add(Sleep, sc.indent, "}")
	case CallSiteName:
		g.callSiteName(c, sc, path, r)
	case CallSitePolicy:
		g.callSitePolicy(c, sc, path, r)
	case Await:
		g.await(c, sc, path, r)
	case Foreign:
		g.foreign(c, sc, path, r)
	case NestedCall:
		n := g.newStep("N"+path, r, NestedCall)
		n.shape, n.fail, n.retry, n.transient = shapeNoErr, failNone, 0, 0
		g.declare(n)
		s := g.newStep("S"+path, r, NestedCall)
		g.call(c, sc, NestedCall, s, path, fmt.Sprintf("%s(ctx, acc)", n.name), "")
	}
}

// fits reports whether a statement of kind may go in scope sc.
func (g *gen) fits(kind Construct, sc scope) bool {
	switch kind {
	case Branch, LoopNumbered, Method, Child:
		return sc.depth > 0
	case Helper:
		return sc.depth > 0 && (sc.fn != inHelper || g.k.Has(NestedHelper))
	case LoopKeyed:
		return sc.once
	case Defer:
		return sc.fn != inHelper
	case Foreign:
		return sc.depth > 0 && !g.inLib
	}
	return true
}

// shape is the signature of a step function.
type shape int

const (
	shapeValue     shape = iota // (int, error)
	shapeErr                    // error
	shapeStr                    // (string, error)
	shapeRec                    // (Rec, error)
	shapeMulti                  // (int, string, error)
	shapeNoErr                  // int
	shapeOut                    // writes a *Pair; error
	shapeRecDash                // (RecDash, error)
	shapeRecHidden              // (RecHidden, error)
	shapeRecDup                 // (RecDup, error)
)

// failKind is how a step fails, and how the body handles it.
type failKind int

const (
	failNone      failKind = iota
	failIs                 // wraps ErrSoft; errors.Is
	failAs                 // a *CodeError; errors.As
	failJoin               // errors.Join(ErrSoft, *CodeError); both
	failUnhandled          // wraps ErrHard; the body returns it
)

// stepFn is a step function of the program.
type stepFn struct {
	name             string
	shape            shape
	policy           string
	retry, transient int // retry=N; attempts that fail transiently first
	fail             failKind
	every            int // the share of inputs that fail: one in every
	tries            int // a body-retry step: fails while its try < tries
	tag              Construct
}

// newStep draws a step function named name and declares it. Every draw
// is made whatever the knobs, so that knobs only change what they govern.
func (g *gen) newStep(name string, r *rand.Rand, tag Construct) *stepFn {
	shapeU, policyU, retryU, retryN, transN, failU, everyN := r.Float64(), r.Float64(), r.Float64(), r.IntN(3), r.IntN(3), r.Float64(), r.IntN(3)
	s := &stepFn{name: name, shape: shapeValue, policy: "default", tag: tag, every: 2 + everyN}
	switch {
	case shapeU < 0.35:
	case shapeU < 0.55:
		s.shape = shapeErr
	case shapeU < 0.65:
		s.shape = shapeStr
	case shapeU < 0.80:
		s.shape = useIf(g, Struct, shapeRec, shapeValue)
	case shapeU < 0.88:
		s.shape = useIf(g, MultiResult, shapeMulti, shapeValue)
	case shapeU < 0.93:
		s.shape = useIf(g, MultiResult, shapeNoErr, shapeValue)
	default:
		s.shape = useIf(g, OutParam, shapeOut, shapeErr)
	}
	switch {
	case policyU < 0.25 && g.k.Has(Once):
		s.policy = "once"
		g.used[Once] = true
	case policyU >= 0.25 && policyU < 0.45 && g.k.Has(Tx):
		s.policy = "tx"
		g.used[Tx] = true
	}
	if retryU < 0.35 && g.k.Has(StepRetry) && s.shape != shapeNoErr {
		s.retry = 2 + retryN
		s.transient = 1 + transN%(s.retry-1)
		g.used[StepRetry] = true
	}
	if s.shape != shapeNoErr {
		switch {
		case failU < 0.15:
			s.fail = useIf(g, ErrorIs, failIs, failNone)
		case failU < 0.25:
			s.fail = useIf(g, ErrorAs, failAs, failNone)
		case failU < 0.30:
			s.fail = useIf(g, ErrorJoin, failJoin, failNone)
		case failU < 0.38:
			s.fail = useIf(g, Failure, failUnhandled, failNone)
		}
	}
	g.intent[name] = s.policy
	return s
}

// useIf returns yes, recording c as used, when the knobs allow c, and no
// otherwise.
func useIf[T any](g *gen, c Construct, yes, no T) T {
	if g.k.Has(c) {
		g.used[c] = true
		return yes
	}
	return no
}

// declare writes step function s.
func (g *gen) declare(s *stepFn) {
	c := &chunk{}
	add := func(indent int, format string, args ...any) { c.add(s.tag, indent, format, args...) }
	var opts []string
	if s.policy != "default" {
		opts = append(opts, s.policy)
	}
	if s.retry > 1 {
		opts = append(opts, fmt.Sprintf("retry=%d backoff=1ms..2ms", s.retry))
	}
	directive := "//resume:step"
	if len(opts) > 0 {
		directive += " " + strings.Join(opts, " ")
	}
	seed := seedOf(s.name)
	params, results, zero := "a int", "", ""
	switch s.shape {
	case shapeValue:
		results, zero = "(int, error)", "0, "
	case shapeErr:
		results = "error"
	case shapeStr:
		results, zero = "(string, error)", `"", `
	case shapeRec:
		results, zero = "(Rec, error)", "Rec{}, "
	case shapeMulti:
		results, zero = "(int, string, error)", `0, "", `
	case shapeNoErr:
		results = "int"
	case shapeOut:
		params, results = "a int, p *Pair", "error"
	case shapeRecDash:
		results, zero = "(RecDash, error)", "RecDash{}, "
	case shapeRecHidden:
		results, zero = "(RecHidden, error)", "RecHidden{}, "
	case shapeRecDup:
		results, zero = "(RecDup, error)", "RecDup{}, "
	}
	if s.tries > 0 {
		params = "a, try int"
	}
	add(0, "// %s is a step (%s).", s.name, s.policy)
	add(0, "//")
	add(0, "%s", directive)
	add(0, "func %s(ctx context.Context, %s) %s {", s.name, params, results)
	if s.transient > 0 {
		add(1, "ctx, at := fuzzrt.Exec(ctx, %q)", s.name)
		add(1, "if at <= %d {", s.transient)
		add(2, "return %sfuzzrt.Fail(ctx, fuzzrt.ErrTransient)", zero)
		add(1, "}")
	} else {
		add(1, "ctx, _ = fuzzrt.Exec(ctx, %q)", s.name)
	}
	if s.tries > 0 {
		add(1, "if try < %d {", s.tries)
		add(2, "return %sfuzzrt.Fail(ctx, resume.Permanent(fmt.Errorf(\"%s(%%d) try %%d: %%w\", a, try, ErrSoft)))", zero, s.name)
		add(1, "}")
	}
	if s.fail != failNone {
		add(1, "if fuzzrt.Hit(%d, a, %d) {", seed, s.every)
		add(2, "return %sfuzzrt.Fail(ctx, resume.Permanent(%s))", zero, failure(s))
		add(1, "}")
	}
	switch s.shape {
	case shapeValue:
		add(1, "return fuzzrt.Return(ctx, fuzzrt.Val(%d, a)), nil", seed)
	case shapeErr:
		add(1, "fuzzrt.Done(ctx)")
		add(1, "return nil")
	case shapeStr:
		add(1, "return fuzzrt.Return(ctx, fuzzrt.Str(%d, a)), nil", seed)
	case shapeRec:
		add(1, "v := fuzzrt.Val(%d, a)", seed)
		add(1, "r := Rec{N: v, Name: fuzzrt.Str(%d, a), Tags: []string{fuzzrt.Str(%d, a)}, Attrs: map[string]int{\"k\": v %% 7, \"j\": v %% 5}, Inner: Inner{A: v %% 11, B: []int{v %% 3, v %% 5}}, At: fuzzrt.At(%d, a)}", seed, seed+1, seed)
		add(1, "if v%%2 == 0 {")
		add(2, "r.Ptr = &Inner{A: v %% 13, B: []int{v %% 17}}")
		add(1, "}")
		add(1, "if v%%3 == 0 {")
		add(2, "r.Tags = nil")
		add(1, "}")
		add(1, "return fuzzrt.Return(ctx, r), nil")
	case shapeMulti:
		add(1, "m, n := fuzzrt.Val(%d, a), fuzzrt.Str(%d, a)", seed, seed)
		add(1, "fuzzrt.Journaled(ctx, map[string]any{\"result1\": m, \"result2\": n})")
		add(1, "return m, n, nil")
	case shapeNoErr:
		add(1, "return fuzzrt.Return(ctx, fuzzrt.Val(%d, a))", seed)
	case shapeOut:
		add(1, "p.A, p.B = fuzzrt.Val(%d, a), fuzzrt.Val(%d, a)", seed, seed+1)
		add(1, "fuzzrt.Journaled(ctx, map[string]any{\"arg3\": p})")
		add(1, "return nil")
	case shapeRecDash:
		add(1, "v := fuzzrt.Val(%d, a)", seed)
		add(1, "return fuzzrt.Return(ctx, RecDash{N: v, Secret: v%%97 + 1}), nil")
	case shapeRecHidden:
		add(1, "v := fuzzrt.Val(%d, a)", seed)
		add(1, "return fuzzrt.Return(ctx, RecHidden{N: v, hidden: v%%89 + 1}), nil")
	case shapeRecDup:
		add(1, "v := fuzzrt.Val(%d, a)", seed)
		add(1, "return fuzzrt.Return(ctx, RecDup{A: v%%83 + 1, B: v%%79 + 1}), nil")
	}
	add(0, "}")
	if g.inLib {
		g.lib.steps = append(g.lib.steps, c)
	} else {
		g.steps = append(g.steps, c)
	}
	g.written[s.name] = true
}

// failure is the Go expression of step s's permanent failure.
func failure(s *stepFn) string {
	switch s.fail {
	case failAs:
		return fmt.Sprintf("&CodeError{Step: %q, Code: a %% 97}", s.name)
	case failJoin:
		return fmt.Sprintf("errors.Join(ErrSoft, &CodeError{Step: %q, Code: a %% 97})", s.name)
	case failUnhandled:
		return fmt.Sprintf("fmt.Errorf(\"%s(%%d): %%w\", a, ErrHard)", s.name)
	}
	return fmt.Sprintf("fmt.Errorf(\"%s(%%d): %%w\", a, ErrSoft)", s.name)
}

// seedOf is the seed of a step's values: a hash of its name.
func seedOf(name string) int {
	h := fnv.New32a()
	h.Write([]byte(name))
	return int(h.Sum32() % 100_000)
}

// call writes a call of step s (declaring s on its first call) with arg
// as its input, the call-site directive dir ("" for none), and the
// handling of its failures.
func (g *gen) call(c *chunk, sc scope, tag Construct, s *stepFn, id, arg, dir string) {
	if !g.declared(s) {
		g.declare(s)
	}
	id = strings.ReplaceAll(id, "_", "x")
	in := sc.indent
	add := func(indent int, format string, args ...any) { c.add(tag, indent, format, args...) }
	trailer := ""
	if dir != "" {
		trailer = " //" + dir
	}
	if s.tries > 0 {
		arg += ", try" + id
	}
	cond := ""
	switch s.fail {
	case failIs:
		cond = "errors.Is(err, ErrSoft)"
	case failAs:
		cond = fmt.Sprintf("errors.As(err, &ce%s)", id)
	case failJoin:
		cond = fmt.Sprintf("errors.Is(err, ErrSoft) && errors.As(err, &ce%s)", id)
	}
	if s.fail == failAs || s.fail == failJoin {
		add(in, "var ce%s *CodeError", id)
	}
	handled := func() {
		if s.fail == failAs || s.fail == failJoin {
			add(in+1, "acc = fuzzrt.Mix(acc, 17, ce%s.Code)", id)
		} else {
			add(in+1, "acc = fuzzrt.Mix(acc, 17)")
		}
		if sc.fn == inWorkflow {
			add(in+1, "trace = append(trace, %q)", s.name+" handled")
		}
	}
	var success []string
	switch s.shape {
	case shapeValue, shapeNoErr:
		success = []string{fmt.Sprintf("acc = fuzzrt.Mix(acc, v%s)", id)}
	case shapeErr:
		success = []string{"acc = fuzzrt.Mix(acc, 1)"}
	case shapeStr:
		success = []string{fmt.Sprintf("acc = fuzzrt.Mix(acc, len(s%s))", id)}
		if sc.fn == inWorkflow {
			success = append(success, fmt.Sprintf("trace = append(trace, s%s)", id))
		}
	case shapeRec:
		r := "r" + id
		success = []string{
			fmt.Sprintf("acc = fuzzrt.Mix(acc, %[1]s.N, len(%[1]s.Name), len(%[1]s.Tags), %[1]s.Attrs[\"k\"], %[1]s.Attrs[\"j\"], len(%[1]s.Attrs), %[1]s.Inner.A, len(%[1]s.Inner.B), %[1]s.At.Nanosecond(), %[1]s.At.Second())", r),
			fmt.Sprintf("if %s.Ptr != nil {", r),
			fmt.Sprintf("\tacc = fuzzrt.Mix(acc, %[1]s.Ptr.A, len(%[1]s.Ptr.B))", r),
			"}",
			fmt.Sprintf("if %s.Tags == nil {", r),
			"\tacc = fuzzrt.Mix(acc, 1)",
			"}",
		}
		if sc.fn == inWorkflow {
			success = append(success, fmt.Sprintf("trace = append(trace, %[1]s.At.Format(time.RFC3339Nano), %[1]s.At.Location().String())", r))
		}
	case shapeMulti:
		success = []string{fmt.Sprintf("acc = fuzzrt.Mix(acc, m%[1]s, len(n%[1]s))", id)}
	case shapeOut:
		success = []string{fmt.Sprintf("acc = fuzzrt.Mix(acc, p%[1]s.A, p%[1]s.B)", id)}
	case shapeRecDash:
		success = []string{fmt.Sprintf("acc = fuzzrt.Mix(acc, r%[1]s.N, r%[1]s.Secret)", id)}
	case shapeRecHidden:
		success = []string{fmt.Sprintf("acc = fuzzrt.Mix(acc, r%[1]s.N, r%[1]s.hidden)", id)}
	case shapeRecDup:
		success = []string{fmt.Sprintf("acc = fuzzrt.Mix(acc, r%[1]s.A, r%[1]s.B)", id)}
	}
	emit := func(indent int, lines []string) {
		for _, l := range lines {
			add(indent, "%s", l)
		}
	}
	callExpr := fmt.Sprintf("%s(ctx, %s)", s.name, arg)
	switch s.shape {
	case shapeErr, shapeOut:
		if s.shape == shapeOut {
			add(in, "var p%s Pair", id)
			callExpr = fmt.Sprintf("%s(ctx, %s, &p%s)", s.name, arg, id)
		}
		if cond == "" {
			add(in, "if err := %s; err != nil {%s", callExpr, trailer)
			add(in+1, "%s", sc.ret("err"))
			add(in, "}")
			emit(in, success)
			return
		}
		if dir != "" && (!g.k.Has(HoleDirectiveCondition) || seedOf(s.name+id)%4 != 0) {
			// One call on the directive's line: the condition's
			// errors.Is or errors.As goes on the next.
			e := "err" + id
			add(in, "%s := %s%s", e, callExpr, trailer)
			add(in, "if %s {", strings.ReplaceAll(cond, "err,", e+","))
			handled()
			add(in, "} else if %s != nil {", e)
			add(in+1, "%s", sc.ret(e))
			add(in, "} else {")
			emit(in+1, success)
			add(in, "}")
			return
		}
		if dir != "" {
			tag = HoleDirectiveCondition
			g.used[tag] = true
		}
		add(in, "if err := %s; %s {%s", callExpr, cond, trailer)
		handled()
		add(in, "} else if err != nil {")
		add(in+1, "%s", sc.ret("err"))
		add(in, "} else {")
		emit(in+1, success)
		add(in, "}")
		return
	case shapeNoErr:
		add(in, "v%s := %s%s", id, callExpr, trailer)
		emit(in, success)
		return
	}
	lhs := map[shape]string{shapeValue: "v" + id, shapeStr: "s" + id, shapeRec: "r" + id, shapeMulti: "m" + id + ", n" + id,
		shapeRecDash: "r" + id, shapeRecHidden: "r" + id, shapeRecDup: "r" + id}[s.shape]
	add(in, "%s, err := %s%s", lhs, callExpr, trailer)
	if cond == "" {
		add(in, "if err != nil {")
		add(in+1, "%s", sc.ret("err"))
		add(in, "}")
		emit(in, success)
		return
	}
	add(in, "if %s {", cond)
	handled()
	add(in, "} else if err != nil {")
	add(in+1, "%s", sc.ret("err"))
	add(in, "} else {")
	emit(in+1, success)
	add(in, "}")
}

// declared reports whether step s has been written.
func (g *gen) declared(s *stepFn) bool { return g.written[s.name] }

// block writes n statements in scope sc below path.
func (g *gen) block(c *chunk, sc scope, path string, n int) {
	for i := 1; i <= n; i++ {
		g.stmt(c, sc, path+"_"+strconv.Itoa(i))
	}
}

func (g *gen) branch(c *chunk, sc scope, path string, r *rand.Rand) {
	form, m, n1, n2, early := r.IntN(3), 2+r.IntN(3), 1+r.IntN(2), 1+r.IntN(2), r.IntN(3) == 0
	in := sc.inner()
	if form == 0 {
		c.add(Branch, sc.indent, "switch acc %% %d {", m+1)
		c.add(Branch, sc.indent, "case 0:")
		g.block(c, in, path+"_1", n1)
		c.add(Branch, sc.indent, "case 1:")
		g.block(c, in, path+"_2", n2)
		c.add(Branch, sc.indent, "default:")
		if early {
			c.add(Branch, sc.indent+1, "%s", sc.okReturn())
		} else {
			c.add(Branch, sc.indent+1, "acc = fuzzrt.Mix(acc, 5)")
		}
		c.add(Branch, sc.indent, "}")
		return
	}
	c.add(Branch, sc.indent, "if acc%%%d == 0 {", m)
	g.block(c, in, path+"_1", n1)
	c.add(Branch, sc.indent, "} else {")
	if early {
		c.add(Branch, sc.indent+1, "if acc%%7 == 0 {")
		c.add(Branch, sc.indent+2, "%s", sc.okReturn())
		c.add(Branch, sc.indent+1, "}")
	}
	g.block(c, in, path+"_2", n2)
	c.add(Branch, sc.indent, "}")
}

func (g *gen) loopNumbered(c *chunk, sc scope, path string, r *rand.Rand) {
	id := strings.ReplaceAll(path, "_", "x")
	fixed, n := r.IntN(2) == 0, 1+r.IntN(3)
	in := sc.inner()
	in.once = false
	if fixed {
		c.add(LoopNumbered, sc.indent, "for i%[1]s := 0; i%[1]s < %[2]d; i%[1]s++ {", id, n)
	} else {
		c.add(LoopNumbered, sc.indent, "n%s := acc%%3 + 1", id)
		c.add(LoopNumbered, sc.indent, "for i%[1]s := 0; i%[1]s < n%[1]s; i%[1]s++ {", id)
	}
	c.add(LoopNumbered, sc.indent+1, "acc = fuzzrt.Mix(acc, i%s)", id)
	g.block(c, in, path, 1+r.IntN(2))
	c.add(LoopNumbered, sc.indent, "}")
}

func (g *gen) loopKeyed(c *chunk, sc scope, path string, r *rand.Rand) {
	id := strings.ReplaceAll(path, "_", "x")
	byInt := r.IntN(2) == 0
	s := g.newStep("S"+path, r, LoopKeyed)
	in := sc
	in.indent++
	in.top = false
	var key string
	switch {
	case byInt:
		key = "i" + id
		c.add(LoopKeyed, sc.indent, "for i%s := range 3 {", id)
		g.call(c, in, LoopKeyed, s, path, fmt.Sprintf("fuzzrt.Mix(acc, i%s)", id), "resume:step key="+key)
	default:
		key = "k" + id
		names := "in.Names"
		if sc.fn != inWorkflow {
			names = `[]string{"x", "y", "z"}`
		}
		c.add(LoopKeyed, sc.indent, "for _, k%s := range %s {", id, names)
		g.call(c, in, LoopKeyed, s, path, fmt.Sprintf("fuzzrt.Mix(acc, len(k%s))", id), "resume:step key="+key)
	}
	c.add(LoopKeyed, sc.indent, "}")
}

func (g *gen) helper(c *chunk, sc scope, path string, r *rand.Rand) {
	tag := Helper
	if sc.fn == inHelper {
		tag = NestedHelper
		g.used[NestedHelper] = true
	}
	twice, n := r.IntN(3) == 0, 1+r.IntN(2)
	name := "h" + path
	for i := range 1 + b2i(twice) {
		arg := "acc"
		if i > 0 {
			arg = "fuzzrt.Mix(acc, 1)"
		}
		c.add(tag, sc.indent, "acc, err = %s(ctx, %s)", name, arg)
		c.add(tag, sc.indent, "if err != nil {")
		c.add(tag, sc.indent+1, "%s", sc.ret("err"))
		c.add(tag, sc.indent, "}")
	}
	f := &chunk{}
	g.addFunc(f)
	f.add(tag, 0, "// %s is a helper of its package that calls steps.", name)
	f.add(tag, 0, "func %s(ctx context.Context, acc int) (int, error) {", name)
	g.helperBody(f, sc, path, n, fmt.Sprintf("acc = fuzzrt.Mix(acc, %d)", seedOf(name)))
	f.add(tag, 0, "}")
}

// helperBody writes the body of a helper or method.
func (g *gen) helperBody(f *chunk, sc scope, path string, n int, first string) {
	f.add(frame, 1, "var err error")
	f.add(frame, 1, "_ = err")
	f.add(frame, 1, "%s", first)
	in := scope{fn: inHelper, depth: sc.depth - 1, indent: 1}
	g.block(f, in, path, n)
	f.add(frame, 1, "return acc, nil")
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func (g *gen) method(c *chunk, sc scope, path string, r *rand.Rand) {
	pointer, n := r.IntN(2) == 0, 1+r.IntN(2)
	typ, v := "calc"+path, "c"+strings.ReplaceAll(path, "_", "x")
	if pointer {
		c.add(Method, sc.indent, "%s := &%s{base: acc %% 10}", v, typ)
	} else {
		c.add(Method, sc.indent, "%s := %s{base: acc %% 10}", v, typ)
	}
	c.add(Method, sc.indent, "acc, err = %s.run(ctx, acc)", v)
	c.add(Method, sc.indent, "if err != nil {")
	c.add(Method, sc.indent+1, "%s", sc.ret("err"))
	c.add(Method, sc.indent, "}")
	f := &chunk{}
	g.addFunc(f)
	f.add(Method, 0, "// %s carries state into its method run, which calls steps.", typ)
	f.add(Method, 0, "type %s struct{ base int }", typ)
	f.add(Method, 0, "")
	recv := typ
	if pointer {
		recv = "*" + typ
	}
	f.add(Method, 0, "func (c %s) run(ctx context.Context, acc int) (int, error) {", recv)
	g.helperBody(f, sc, path, n, "acc = fuzzrt.Mix(acc, c.base)")
	f.add(Method, 0, "}")
}

func (g *gen) child(c *chunk, sc scope, path string, r *rand.Rand) {
	handle, n := r.IntN(3) == 0 && g.k.Has(Failure), 1+r.IntN(3)
	name := "C" + path
	c.add(Child, sc.indent, "acc, err = %s(ctx, acc)", name)
	if handle {
		c.add(Child, sc.indent, "if errors.Is(err, ErrHard) {")
		c.add(Child, sc.indent+1, "acc = fuzzrt.Mix(acc, 23)")
		c.add(Child, sc.indent, "} else if err != nil {")
	} else {
		c.add(Child, sc.indent, "if err != nil {")
	}
	c.add(Child, sc.indent+1, "%s", sc.ret("err"))
	c.add(Child, sc.indent, "}")
	f := &chunk{}
	g.addFunc(f)
	f.add(Child, 0, "// %s is a child workflow.", name)
	f.add(Child, 0, "//")
	f.add(Child, 0, "//resume:workflow")
	f.add(Child, 0, "func %s(ctx context.Context, acc int) (int, error) {", name)
	f.add(frame, 1, "var err error")
	f.add(frame, 1, "_ = err")
	in := scope{fn: inChild, depth: sc.depth - 1, once: true, top: true, indent: 1}
	g.block(f, in, path, n)
	f.add(frame, 1, "return acc, nil")
	f.add(Child, 0, "}")
}

// foreign writes calls of a helper of the program's second package, lib,
// and the helper there: its statements, and the steps and helpers they
// declare, are generated in lib. With ForeignNondet, one in twenty such
// helpers first mixes in a value an unexported function of lib draws
// from math/rand or the clock, which resumegen must refuse there.
func (g *gen) foreign(c *chunk, sc scope, path string, r *rand.Rand) {
	twice, n, nondetU, viaRand := r.IntN(3) == 0, 1+r.IntN(2), r.IntN(20), r.IntN(2) == 0
	name := "H" + path
	for i := range 1 + b2i(twice) {
		arg := "acc"
		if i > 0 {
			arg = "fuzzrt.Mix(acc, 1)"
		}
		c.add(Foreign, sc.indent, "acc, err = lib.%s(ctx, %s)", name, arg)
		c.add(Foreign, sc.indent, "if err != nil {")
		c.add(Foreign, sc.indent+1, "%s", sc.ret("err"))
		c.add(Foreign, sc.indent, "}")
	}
	outer := g.inLib
	g.inLib, g.lib.used = true, true
	defer func() { g.inLib = outer }()
	f := &chunk{}
	g.addFunc(f)
	f.add(Foreign, 0, "// %s is a helper of the program's second package that calls steps.", name)
	f.add(Foreign, 0, "func %s(ctx context.Context, acc int) (int, error) {", name)
	first := fmt.Sprintf("acc = fuzzrt.Mix(acc, %d)", seedOf(name))
	if nondetU == 0 && g.k.Has(ForeignNondet) {
		g.used[ForeignNondet] = true
		draw := "jitter" + path
		first = fmt.Sprintf("acc = fuzzrt.Mix(acc, %s())", draw)
		j := &chunk{}
		g.addFunc(j)
		j.add(ForeignNondet, 0, "// %s is not deterministic: resumegen refuses the program here.", draw)
		if viaRand {
			g.lib.rand = true
			j.add(ForeignNondet, 0, "func %s() int { return rand.IntN(1000) }", draw)
		} else {
			j.add(ForeignNondet, 0, "func %s() int { return time.Now().Nanosecond() %% 1000 }", draw)
		}
	}
	g.helperBody(f, sc, path, n, first)
	f.add(Foreign, 0, "}")
}

func (g *gen) bodyRetry(c *chunk, sc scope, path string, r *rand.Rand) {
	id := strings.ReplaceAll(path, "_", "x")
	tries := 1 + r.IntN(3)
	s := g.newStep("S"+path, r, BodyRetry)
	s.shape, s.fail, s.tries = shapeValue, failNone, tries
	g.declare(s)
	in := sc.indent
	c.add(BodyRetry, in, "for try%[1]s := 0; try%[1]s < 3; try%[1]s++ {", id)
	c.add(BodyRetry, in+1, "v%s, err := %s(ctx, acc, try%s)", id, s.name, id)
	c.add(BodyRetry, in+1, "if err == nil {")
	c.add(BodyRetry, in+2, "acc = fuzzrt.Mix(acc, v%s)", id)
	c.add(BodyRetry, in+2, "break")
	c.add(BodyRetry, in+1, "}")
	c.add(BodyRetry, in+1, "if !errors.Is(err, ErrSoft) {")
	c.add(BodyRetry, in+2, "%s", sc.ret("err"))
	c.add(BodyRetry, in+1, "}")
	c.add(BodyRetry, in+1, "acc = fuzzrt.Mix(acc, try%s)", id)
	c.add(BodyRetry, in, "}")
}

func (g *gen) deferred(c *chunk, sc scope, path string, r *rand.Rand) {
	id := strings.ReplaceAll(path, "_", "x")
	form := r.IntN(3)
	s := g.newStep("D"+path, r, Defer)
	s.fail, s.retry, s.transient = failNone, 0, 0
	if !sc.top || sc.fn != inWorkflow {
		form = 0
	}
	switch form {
	case 0:
		s.shape = shapeErr
		g.declare(s)
		c.add(Defer, sc.indent, "defer %s(ctx, acc)", s.name)
	case 1:
		s.shape = shapeErr
		g.declare(s)
		c.add(Defer, sc.indent, "acc%s := acc", id)
		c.add(Defer, sc.indent, "defer func() {")
		c.add(Defer, sc.indent+1, "if err != nil {")
		c.add(Defer, sc.indent+2, "_ = %s(ctx, acc%s)", s.name, id)
		c.add(Defer, sc.indent+1, "}")
		c.add(Defer, sc.indent, "}()")
	default:
		s.shape = shapeValue
		g.declare(s)
		c.add(Defer, sc.indent, "defer func() {")
		c.add(Defer, sc.indent+1, "if v, derr := %s(ctx, out.Acc); derr == nil {", s.name)
		c.add(Defer, sc.indent+2, "out.Acc = fuzzrt.Mix(out.Acc, v)")
		c.add(Defer, sc.indent+1, "}")
		c.add(Defer, sc.indent, "}()")
	}
}

func (g *gen) callSiteName(c *chunk, sc scope, path string, r *rand.Rand) {
	reuse, pick := r.IntN(3) != 0, r.IntN(1<<16)
	var candidates []*stepFn
	for _, s := range g.callableHere() {
		if s.tries == 0 {
			candidates = append(candidates, s)
		}
	}
	if reuse && len(candidates) > 0 {
		s := candidates[pick%len(candidates)]
		name := s.name + "n" + strings.ReplaceAll(path, "_", "x")
		g.intent[name] = s.policy
		g.call(c, sc, CallSiteName, s, path, "fuzzrt.Mix(acc, 2)", "resume:step name="+name)
		return
	}
	id := strings.ReplaceAll(path, "_", "x")
	name := "f" + id
	g.intent[name] = "default"
	c.add(CallSiteName, sc.indent, "f%s, err := fuzzrt.Foreign(ctx, %q, acc) //resume:step name=%s", id, name, name)
	c.add(CallSiteName, sc.indent, "if err != nil {")
	c.add(CallSiteName, sc.indent+1, "%s", sc.ret("err"))
	c.add(CallSiteName, sc.indent, "}")
	c.add(CallSiteName, sc.indent, "acc = fuzzrt.Mix(acc, f%s)", id)
}

func (g *gen) callSitePolicy(c *chunk, sc scope, path string, r *rand.Rand) {
	s := g.newStep("S"+path, r, CallSitePolicy)
	s.policy = "default"
	var choices []string
	if g.k.Has(Once) {
		choices = append(choices, "once")
	}
	if g.k.Has(Tx) {
		choices = append(choices, "tx")
	}
	pick := r.IntN(2)
	if len(choices) == 0 {
		g.intent[s.name] = s.policy
		g.call(c, sc, CallSitePolicy, s, path, "acc", "")
		return
	}
	policy := choices[pick%len(choices)]
	g.intent[s.name] = policy
	g.call(c, sc, CallSitePolicy, s, path, "acc", "resume:step "+policy)
}

// await writes an await of an event of its own, with a timeout; the
// driver sends the event to half of them.
func (g *gen) await(c *chunk, sc scope, path string, r *rand.Rand) {
	id := strings.ReplaceAll(path, "_", "x")
	name := "ev" + id
	if r.IntN(2) == 0 {
		g.signals[name] = seedOf(name) % 1000
	}
	g.awaits = true
	in := sc.indent
	c.add(Await, in, "ev%s, err := resume.Await[int](ctx, %q, time.Hour)", id, name)
	c.add(Await, in, "if errors.Is(err, resume.ErrTimeout) {")
	c.add(Await, in+1, "acc = fuzzrt.Mix(acc, 29)")
	c.add(Await, in, "} else if err != nil {")
	c.add(Await, in+1, "%s", sc.ret("err"))
	c.add(Await, in, "} else {")
	c.add(Await, in+1, "acc = fuzzrt.Mix(acc, ev%s)", id)
	c.add(Await, in, "}")
}

// holeFits reports whether hole h may go in scope sc.
func (g *gen) holeFits(h Construct, sc scope) bool {
	switch h {
	case HoleInputDash, HoleTimeNow:
		return sc.fn == inWorkflow
	case HoleKeyComposite:
		return sc.once
	}
	return true
}

// hole writes one of issue 18's constructs.
func (g *gen) hole(c *chunk, sc scope, path string, r *rand.Rand, h Construct) {
	id := strings.ReplaceAll(path, "_", "x")
	switch h {
	case HoleJSONDash, HoleUnexported, HoleDupJSON:
		s := g.newStep("S"+path, r, h)
		s.shape, s.fail = map[Construct]shape{HoleJSONDash: shapeRecDash, HoleUnexported: shapeRecHidden, HoleDupJSON: shapeRecDup}[h], failNone
		g.types[map[Construct]string{HoleJSONDash: "RecDash", HoleUnexported: "RecHidden", HoleDupJSON: "RecDup"}[h]] = true
		g.call(c, sc, h, s, path, "acc", "")
	case HoleInputDash:
		g.inputDash = true
		c.add(h, sc.indent, "acc = fuzzrt.Mix(acc, in.Token)")
	case HoleTwoCalls:
		s := g.newStep("P"+path, r, h)
		s.shape, s.fail, s.retry, s.transient, s.policy = shapeNoErr, failNone, 0, 0, "default"
		g.declare(s)
		g.types["fold"] = true
		g.intent[s.name] = "once" // what the directive on the line means
		c.add(h, sc.indent, "acc = fold(acc, %s(ctx, acc)) //resume:step once", s.name)
	case HoleTwoCallsName:
		s := g.newStep("S"+path, r, h)
		s.shape, s.fail, s.retry, s.transient = shapeNoErr, failNone, 0, 0
		g.declare(s)
		g.types["fold"] = true
		g.intent[s.name+"b"] = s.policy
		c.add(h, sc.indent, "v%s := %s(ctx, acc)", id, s.name)
		c.add(h, sc.indent, "acc = fuzzrt.Mix(acc, v%s)", id)
		c.add(h, sc.indent, "acc = fold(acc, %s(ctx, fuzzrt.Mix(acc, 1))) //resume:step name=%sb", s.name, s.name)
	case HoleKeyComposite:
		s := g.newStep("S"+path, r, h)
		g.types["ID"] = true
		in := sc
		in.indent++
		in.top = false
		c.add(h, sc.indent, "for i%s := range 3 {", id)
		g.call(c, in, h, s, path, fmt.Sprintf("fuzzrt.Mix(acc, i%s)", id), fmt.Sprintf("resume:step key=ID{i%s}", id))
		c.add(h, sc.indent, "}")
	case HoleTimeNow:
		c.add(h, sc.indent, "now%[1]s := time.Now() //resume:step name=now%[1]s", id)
		c.add(h, sc.indent, "trace = append(trace, fmt.Sprint(now%[1]s.Location(), now%[1]s == now%[1]s.Round(0)))", id)
	}
}
