package difffuzz

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/resumegen/resumegen/internal/difffuzz/fuzzrt"
)

// ModulePath is the path of the temporary module the programs are built
// in: below this repository's, so that they may import fuzzrt.
const ModulePath = "github.com/resumegen/resumegen/internal/difffuzz/fuzzmod"

// Config says how to run a batch of programs.
type Config struct {
	// Root is the resumegen checkout the programs build against.
	Root string
	// Kills is how many crash cases of each program are also played
	// with real processes killed by SIGKILL.
	Kills int
	// Parallel is how many programs are crash-tested at once.
	Parallel int
	// Log receives progress lines (nil: none).
	Log io.Writer
	// Keep leaves the temporary module on disk, for a person to look at.
	Keep bool
	// TempDir holds the journals of the crash cases ("": /dev/shm when
	// there is one, else the system's). The cases test what the journal
	// records and replays, not the disk: on a RAM disk their fsyncs cost
	// nothing.
	TempDir string
}

// Result is what became of one program of a batch.
type Result struct {
	Program *Program
	// Refusals are resumegen's diagnostics, when it refused the program.
	Refusals []Refusal
	// Divergences are every way the program broke the replay promise.
	Divergences []Divergence
	// Observation is what the driver saw (nil when the program was
	// refused or did not build).
	Observation *fuzzrt.Observation
}

// Refused reports whether resumegen refused the program.
func (r *Result) Refused() bool { return len(r.Refusals) > 0 }

// Refusal is one of resumegen's diagnostics on a program.
type Refusal struct {
	// File is the refused file, relative to the program's directory
	// (program.go, lib/lib.go).
	File      string
	Line, Col int
	Message   string
	// Construct wrote the refused line.
	Construct Construct
}

// Batch generates, builds and crash-tests programs in one temporary
// module: one resumegen run (two, when some are refused), one go build,
// one test binary for all of them. The error is for failures of the
// fuzzer itself; what the programs did is in the results.
func Batch(ctx context.Context, cfg Config, progs []*Program) ([]*Result, error) {
	b, err := newBatch(cfg, progs)
	if err != nil {
		return nil, err
	}
	if !cfg.Keep {
		defer os.RemoveAll(b.dir)
	} else {
		b.logf("keeping the module in %s", b.dir)
	}
	start := time.Now()
	accepted, err := b.generate(ctx, progs)
	if err != nil {
		return nil, err
	}
	if err := b.checkRefused(ctx); err != nil {
		return nil, err
	}
	b.checkMustRefuse()
	b.logf("resumegen: %d of %d programs accepted (%.1fs)", len(accepted), len(progs), time.Since(start).Seconds())
	start = time.Now()
	built, err := b.build(ctx, accepted)
	if err != nil {
		return nil, err
	}
	b.logf("built %d programs (%.1fs)", len(built), time.Since(start).Seconds())
	start = time.Now()
	if err := b.drive(ctx, built); err != nil {
		return nil, err
	}
	b.logf("crash-tested %d programs (%.1fs)", len(built), time.Since(start).Seconds())
	return b.collect(), nil
}

// batch is one temporary module and its programs' results.
type batch struct {
	cfg     Config
	dir     string
	env     []string
	progs   []*Program
	results map[string]*Result
}

func newBatch(cfg Config, progs []*Program) (*batch, error) {
	root, err := filepath.Abs(cfg.Root)
	if err != nil {
		return nil, err
	}
	cfg.Root = root
	if cfg.TempDir == "" {
		cfg.TempDir = ramDisk()
	}
	dir, err := os.MkdirTemp("", "difffuzz-")
	if err != nil {
		return nil, err
	}
	b := &batch{cfg: cfg, dir: dir, progs: progs, results: map[string]*Result{},
		env: append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off", "GOPROXY=off")}
	for _, p := range progs {
		if b.results[p.Name] != nil {
			return nil, fmt.Errorf("difffuzz: two programs named %s in one batch", p.Name)
		}
		b.results[p.Name] = &Result{Program: p}
	}
	if err := b.writeModule(); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return b, nil
}

// ramDisk returns /dev/shm when it is a writable directory, else "".
func ramDisk() string {
	dir, err := os.MkdirTemp("/dev/shm", "difffuzz-probe-")
	if err != nil {
		return ""
	}
	os.Remove(dir)
	return "/dev/shm"
}

func (b *batch) logf(format string, args ...any) {
	if b.cfg.Log != nil {
		fmt.Fprintf(b.cfg.Log, "difffuzz: "+format+"\n", args...)
	}
}

// writeModule writes the module: go.mod requiring resumegen, replaced by
// the checkout; its go.sum; one package per program.
func (b *batch) writeModule() error {
	gomod, err := os.ReadFile(filepath.Join(b.cfg.Root, "go.mod"))
	if err != nil {
		return err
	}
	goLine := goDirective.FindSubmatch(gomod)
	if goLine == nil {
		return fmt.Errorf("difffuzz: %s/go.mod has no go directive", b.cfg.Root)
	}
	mod := fmt.Sprintf("module %s\n\ngo %s\n\nrequire github.com/resumegen/resumegen v0.0.0\n\nreplace github.com/resumegen/resumegen => %s\n", ModulePath, goLine[1], b.cfg.Root)
	if err := os.WriteFile(filepath.Join(b.dir, "go.mod"), []byte(mod), 0o644); err != nil {
		return err
	}
	sum, err := os.ReadFile(filepath.Join(b.cfg.Root, "go.sum"))
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(b.dir, "go.sum"), sum, 0o644); err != nil {
		return err
	}
	for _, p := range b.progs {
		if err := os.MkdirAll(filepath.Join(b.dir, p.Name), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(b.dir, p.Name, "program.go"), []byte(p.Source), 0o644); err != nil {
			return err
		}
		if p.Lib != "" {
			if err := os.MkdirAll(filepath.Join(b.dir, p.Name, "lib"), 0o755); err != nil {
				return err
			}
			if err := os.WriteFile(filepath.Join(b.dir, p.Name, "lib", "lib.go"), []byte(p.Lib), 0o644); err != nil {
				return err
			}
		}
	}
	return nil
}

// goCmd runs the go command in the module, returning its combined output.
func (b *batch) goCmd(ctx context.Context, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = b.dir
	cmd.Env = b.env
	return cmd.CombinedOutput()
}

// goDirective is go.mod's go line.
var goDirective = regexp.MustCompile(`(?m)^go (\S+)`)

// goPanic is the start of a Go panic's report.
var goPanic = regexp.MustCompile(`(?m)^(panic: |goroutine \d+ \[)`)

// diagLine is a diagnostic as resumegen prints it: file:line:col: message.
var diagLine = regexp.MustCompile(`^([^:\s]+\.go):(\d+):(\d+): (.*)$`)

// generate runs resumegen on the programs until the ones it accepts
// generate cleanly, and returns them; refused programs get their
// refusals, and a crash or an unreadable failure is a divergence.
func (b *batch) generate(ctx context.Context, progs []*Program) ([]*Program, error) {
	tool := filepath.Join(b.dir, "resumegen.bin")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", tool, "./cmd/resumegen")
	cmd.Dir = b.cfg.Root
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("difffuzz: build resumegen: %v\n%s", err, out)
	}
	pending := progs
	for len(pending) > 0 {
		args := make([]string, len(pending))
		for i, p := range pending {
			args[i] = "./" + p.Name
		}
		cmd := exec.CommandContext(ctx, tool, args...)
		cmd.Dir = b.dir
		cmd.Env = b.env
		out, err := cmd.CombinedOutput()
		if err == nil {
			return pending, nil
		}
		var exit *exec.ExitError
		if !errors.As(err, &exit) {
			return nil, fmt.Errorf("difffuzz: run resumegen: %v", err)
		}
		refused, crashed := b.readDiagnostics(out, exit.ExitCode())
		if crashed {
			if len(pending) == 1 {
				r := b.results[pending[0].Name]
				r.Divergences = append(r.Divergences, Divergence{Program: r.Program.Name, Kind: KindGenerator,
					Detail: fmt.Sprintf("resumegen exited %d without file:line:col diagnostics:\n%s", exit.ExitCode(), tail(out, 40))})
				return nil, nil
			}
			// Find the culprit: each program alone.
			var ok []*Program
			for _, p := range pending {
				acc, err := b.generateOnly(ctx, tool, p)
				if err != nil {
					return nil, err
				}
				ok = append(ok, acc...)
			}
			return ok, nil
		}
		if len(refused) == 0 {
			return nil, fmt.Errorf("difffuzz: resumegen failed, naming no program:\n%s", tail(out, 40))
		}
		var next []*Program
		for _, p := range pending {
			if !refused[p.Name] {
				next = append(next, p)
			}
		}
		pending = next
	}
	return nil, nil
}

// checkRefused builds the refused programs as plain Go: resumegen
// refuses a program that does not compile (it reports the type errors),
// and such a program is the fuzzer's own bug (KindProgram), not a
// refusal.
func (b *batch) checkRefused(ctx context.Context) error {
	args := []string{"build"}
	for _, p := range b.progs {
		if b.results[p.Name].Refused() {
			args = append(args, "./"+p.Name)
		}
	}
	if len(args) == 1 {
		return nil
	}
	out, err := b.goCmd(ctx, args...)
	if err == nil {
		return nil
	}
	broken := b.brokenPrograms(out, KindProgram, "the fuzzer generated a program that is not valid Go:")
	if len(broken) == 0 {
		return fmt.Errorf("difffuzz: build the refused programs: %v\n%s", err, tail(out, 40))
	}
	for name := range broken {
		b.results[name].Refusals = nil // type errors, not refusals
	}
	return nil
}

// checkMustRefuse records a divergence for each program holding a
// non-deterministic call in its second package (ForeignNondet) that
// resumegen did not refuse there, with the path from a workflow to the
// call and the fix.
func (b *batch) checkMustRefuse() {
	for _, p := range b.progs {
		r := b.results[p.Name]
		if !slices.Contains(p.Used, ForeignNondet) || slices.ContainsFunc(r.Divergences, func(d Divergence) bool { return d.Kind == KindProgram }) {
			continue
		}
		if !slices.ContainsFunc(r.Refusals, func(ref Refusal) bool {
			return ref.Construct == ForeignNondet && strings.Contains(ref.Message, ", called from workflow ") &&
				strings.Contains(ref.Message, " → lib.jitter") && strings.Contains(ref.Message, "make it a step")
		}) {
			r.Divergences = append(r.Divergences, Divergence{Program: p.Name, Kind: KindAccepted,
				Detail: fmt.Sprintf("lib calls math/rand or time.Now outside steps, reached from a workflow: want it refused at lib/lib.go with the path and the fix; refusals: %v", r.Refusals)})
		}
	}
}

// brokenPrograms reads the go command's compile errors, recording on
// each program they name a divergence of kind, and returns those
// programs.
func (b *batch) brokenPrograms(out []byte, kind Kind, why string) map[string]bool {
	broken := map[string]bool{}
	for _, line := range strings.Split(string(out), "\n") {
		name := strings.Split(strings.TrimPrefix(filepath.ToSlash(line), "./"), "/")[0]
		if r := b.results[name]; r != nil && diagLine.MatchString(line) && !broken[name] {
			broken[name] = true
			r.Divergences = append(r.Divergences, Divergence{Program: name, Kind: kind, Detail: why + "\n" + tail(out, 20)})
		}
	}
	return broken
}

// generateOnly runs resumegen on program p alone.
func (b *batch) generateOnly(ctx context.Context, tool string, p *Program) ([]*Program, error) {
	r := b.results[p.Name]
	r.Refusals = nil // the batch's run may have read some already
	r.Divergences = slices.DeleteFunc(r.Divergences, func(d Divergence) bool { return d.Kind == KindRefusal })
	cmd := exec.CommandContext(ctx, tool, "./"+p.Name)
	cmd.Dir = b.dir
	cmd.Env = b.env
	out, err := cmd.CombinedOutput()
	if err == nil {
		return []*Program{p}, nil
	}
	var exit *exec.ExitError
	if !errors.As(err, &exit) {
		return nil, fmt.Errorf("difffuzz: run resumegen: %v", err)
	}
	if _, crashed := b.readDiagnostics(out, exit.ExitCode()); crashed {
		r.Divergences = append(r.Divergences, Divergence{Program: p.Name, Kind: KindGenerator,
			Detail: fmt.Sprintf("resumegen exited %d without file:line:col diagnostics:\n%s", exit.ExitCode(), tail(out, 40))})
	}
	return nil, nil
}

// readDiagnostics records resumegen's diagnostics on the programs they
// name, returning those programs; crashed is set when the output is not
// only diagnostics (a panic, a message without a position) or the exit
// status is not 1.
func (b *batch) readDiagnostics(out []byte, code int) (refused map[string]bool, crashed bool) {
	refused = map[string]bool{}
	crashed = code != 1 || goPanic.Match(out)
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.TrimSpace(line) == "" {
			continue
		}
		m := diagLine.FindStringSubmatch(line)
		if m == nil {
			if !strings.HasPrefix(line, "\t") { // a message's continuation lines are indented
				crashed = true
			}
			continue
		}
		if strings.HasPrefix(m[4], "warning: ") {
			continue // what is allowed but probably not meant: no refusal
		}
		name := strings.Split(filepath.ToSlash(m[1]), "/")[0]
		r := b.results[name]
		if r == nil {
			crashed = true
			continue
		}
		ln, _ := strconv.Atoi(m[2])
		col, _ := strconv.Atoi(m[3])
		ref := Refusal{File: strings.TrimPrefix(filepath.ToSlash(m[1]), name+"/"), Line: ln, Col: col, Message: m[4]}
		switch ref.File {
		case "program.go":
			ref.Construct = r.Program.Construct(ln)
		case "lib/lib.go":
			ref.Construct = r.Program.LibConstruct(ln)
		}
		r.Refusals = append(r.Refusals, ref)
		if why := badRefusal(r.Program, ref); why != "" {
			r.Divergences = append(r.Divergences, Divergence{Program: name, Kind: KindRefusal,
				Detail: fmt.Sprintf("%s:%d:%d: %s: %s", m[1], ln, col, ref.Message, why)})
		}
		refused[name] = true
	}
	return refused, crashed
}

// badRefusal says why a refusal is not one the generator means: a parse
// error of its own making (it re-read a printout of the user's code), or
// a request for what the refused line already has.
func badRefusal(p *Program, ref Refusal) string {
	text := p.Source
	if ref.File == "lib/lib.go" {
		text = p.Lib
	}
	src := strings.Split(text, "\n")
	line := ""
	if ref.Line >= 1 && ref.Line <= len(src) {
		line = src[ref.Line-1]
	}
	switch {
	case strings.Contains(ref.Message, "illegal character") || strings.Contains(ref.Message, "expected "):
		return "the message is a Go syntax error of a text the user did not write"
	case strings.Contains(ref.Message, "name=NAME") && strings.Contains(line, "name="):
		return "it asks for name=, which the line has"
	}
	return ""
}

// build writes the driver's test file for the programs and compiles it,
// dropping programs whose generated code does not compile (a divergence);
// it returns the programs built.
func (b *batch) build(ctx context.Context, progs []*Program) ([]*Program, error) {
	for len(progs) > 0 {
		if err := b.writeDriver(progs); err != nil {
			return nil, err
		}
		out, err := b.goCmd(ctx, "test", "-c", "-o", filepath.Join(b.dir, "drive.test"), "./drive")
		if err == nil {
			return progs, nil
		}
		broken := b.brokenPrograms(out, KindBuild, "resumegen accepted the program and its output does not compile:")
		if len(broken) == 0 {
			return nil, fmt.Errorf("difffuzz: build the driver: %v\n%s", err, tail(out, 40))
		}
		progs = slices.DeleteFunc(slices.Clone(progs), func(p *Program) bool { return broken[p.Name] })
	}
	return nil, nil
}

// writeDriver writes drive/drive_test.go, which registers the programs.
func (b *batch) writeDriver(progs []*Program) error {
	var src strings.Builder
	src.WriteString("// Package drive crash-tests the programs of this module.\npackage drive\n\nimport (\n\t\"testing\"\n\n")
	src.WriteString("\t\"github.com/resumegen/resumegen/internal/difffuzz/fuzzrt\"\n")
	for _, p := range progs {
		fmt.Fprintf(&src, "\t%s %q\n", p.Name, ModulePath+"/"+p.Name)
	}
	src.WriteString(")\n\nvar programs = []fuzzrt.Program{\n")
	for _, p := range progs {
		fmt.Fprintf(&src, "\t%s.Program,\n", p.Name)
	}
	src.WriteString("}\n\nfunc TestMain(m *testing.M) { fuzzrt.Main(m, programs) }\n\nfunc TestDrive(t *testing.T) { fuzzrt.Drive(t, programs) }\n")
	if err := os.MkdirAll(filepath.Join(b.dir, "drive"), 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(b.dir, "drive", "drive_test.go"), []byte(src.String()), 0o644)
}

// drive runs the test binary over the built programs and reads what it
// observed.
func (b *batch) drive(ctx context.Context, progs []*Program) error {
	if len(progs) == 0 {
		return nil
	}
	obsPath := filepath.Join(b.dir, "observations.jsonl")
	parallel := max(b.cfg.Parallel, 1)
	cmd := exec.CommandContext(ctx, filepath.Join(b.dir, "drive.test"), "-test.run=^TestDrive$", "-test.parallel="+strconv.Itoa(parallel), "-test.timeout=2h")
	cmd.Dir = filepath.Join(b.dir, "drive")
	tmp, err := os.MkdirTemp(b.cfg.TempDir, "difffuzz-cases-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	cmd.Env = append(b.env, fuzzrt.EnvOut+"="+obsPath, fuzzrt.EnvKills+"="+strconv.Itoa(b.cfg.Kills), "TMPDIR="+tmp)
	out, runErr := cmd.CombinedOutput()
	raw, err := os.ReadFile(obsPath)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	seen := map[string]bool{}
	dec := json.NewDecoder(bytes.NewReader(raw))
	for dec.More() {
		var o fuzzrt.Observation
		if err := dec.Decode(&o); err != nil {
			return fmt.Errorf("difffuzz: read the observations: %w", err)
		}
		r := b.results[o.Program]
		if r == nil {
			return fmt.Errorf("difffuzz: an observation of an unknown program %s", o.Program)
		}
		seen[o.Program] = true
		r.Observation = &o
		r.Divergences = append(r.Divergences, Compare(r.Program, &o)...)
	}
	for _, p := range progs {
		if !seen[p.Name] {
			r := b.results[p.Name]
			r.Divergences = append(r.Divergences, Divergence{Program: p.Name, Kind: KindDriver,
				Detail: fmt.Sprintf("the driver wrote nothing about it (%v):\n%s", runErr, tail(out, 40))})
		}
	}
	return nil
}

// collect returns the batch's results in the programs' order.
func (b *batch) collect() []*Result {
	out := make([]*Result, len(b.progs))
	for i, p := range b.progs {
		out[i] = b.results[p.Name]
	}
	return out
}

// tail returns the last n lines of out.
func tail(out []byte, n int) string {
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	if len(lines) > n {
		lines = append([]string{"..."}, lines[len(lines)-n:]...)
	}
	return strings.Join(lines, "\n")
}

// Summary adds up the results of one or more batches.
type Summary struct {
	Programs    int
	Refused     int
	Built       int
	Cases       int // crash cases played in process
	RealKills   int // crash cases played with a real process killed by SIGKILL
	Parked      int // cases that parked a run for a person (once steps killed at their effect)
	Divergent   int // programs with a divergence
	Divergences map[Kind]int
	// RefusedBy counts refused programs by the construct of their first
	// refused line.
	RefusedBy map[Construct]int
	// Duplicates counts cases in which a step executed more often than
	// its policy allows (or a tx step committed twice).
	Duplicates int
}

// Add counts r.
func (s *Summary) Add(r *Result) {
	if s.Divergences == nil {
		s.Divergences, s.RefusedBy = map[Kind]int{}, map[Construct]int{}
	}
	s.Programs++
	if r.Refused() {
		s.Refused++
		s.RefusedBy[r.Refusals[0].Construct]++
	}
	if o := r.Observation; o != nil {
		s.Built++
		for _, c := range o.Cases {
			switch {
			case c.Step == "":
			case c.Real:
				s.RealKills++
			default:
				s.Cases++
			}
			if c.Parked {
				s.Parked++
			}
		}
	}
	if len(r.Divergences) > 0 {
		s.Divergent++
	}
	dupCases := map[string]bool{}
	for _, d := range r.Divergences {
		s.Divergences[d.Kind]++
		if d.Kind == KindDuplicate || (d.Kind == KindTx && strings.Contains(d.Detail, "committed")) {
			dupCases[d.Case] = true
		}
	}
	s.Duplicates += len(dupCases)
}

// String writes the summary in a few lines.
func (s Summary) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "programs %d (refused %d, crash-tested %d), crash cases %d in process + %d real SIGKILLs, %d parked for a person\n",
		s.Programs, s.Refused, s.Built, s.Cases, s.RealKills, s.Parked)
	fmt.Fprintf(&b, "divergent programs %d, duplicate effects in %d cases", s.Divergent, s.Duplicates)
	for _, k := range sortedKeys(s.Divergences) {
		fmt.Fprintf(&b, ", %s %d", k, s.Divergences[k])
	}
	if len(s.RefusedBy) > 0 {
		b.WriteString("\nrefused by construct:")
		for _, c := range sortedKeys(s.RefusedBy) {
			fmt.Fprintf(&b, " %s %d", orFrame(c), s.RefusedBy[c])
		}
	}
	return b.String()
}

func orFrame(c Construct) Construct {
	if c == "" {
		return frame
	}
	return c
}

func sortedKeys[K ~string, V any](m map[K]V) []K {
	out := make([]K, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}
