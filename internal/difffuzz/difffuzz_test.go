package difffuzz

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// seedDir holds the programs the fuzzer ever found failing.
const seedDir = "testdata/seeds"

// knownDivergent are the kept seeds that diverge today, each with the
// issue tracking its hole and the kind of divergence it shows. The short
// run requires each of them to still diverge that way: once one passes
// (the hole is fixed: the program is journaled and replayed exactly, or
// refused with its fix), the test says to move it out of this list, so
// that it guards the fix from then on.
var knownDivergent = map[string]struct {
	issue int
	kind  Kind
}{
	// A durable time.Time comes back from the journal in UTC when its
	// offset is zero, where the plain call's carries time.Local: JSON keeps
	// the instant and the offset, not the *time.Location (docs/reference.md,
	// the time.Time row of "What is journaled"). Resumed and uninterrupted
	// runs agree; only the plain call tells.
	"issue18-time-now.txtar": {18, KindDirect},
}

// settings are the run's budget, from the environment (make fuzz sets
// them; make test runs the defaults).
type settings struct {
	programs, kills, parallel, batch, shrink int
	seed                                     uint64
	holes, keep                              bool
	report, seeds                            string
}

func readSettings(t *testing.T) settings {
	s := settings{programs: 6, kills: 1, parallel: 4, batch: 50, seed: 1}
	ints := map[string]*int{"FUZZ_PROGRAMS": &s.programs, "FUZZ_KILLS": &s.kills, "FUZZ_PARALLEL": &s.parallel, "FUZZ_BATCH": &s.batch, "FUZZ_SHRINK": &s.shrink}
	for name, p := range ints {
		if v := os.Getenv(name); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				t.Fatalf("%s=%q: want a count", name, v)
			}
			*p = n
		}
	}
	if v := os.Getenv("FUZZ_SEED"); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("FUZZ_SEED=%q: want a number", v)
		}
		s.seed = n
	}
	s.holes = os.Getenv("FUZZ_HOLES") == "1"
	s.keep = os.Getenv("FUZZ_KEEP") == "1"
	s.report = os.Getenv("FUZZ_REPORT")
	s.seeds = os.Getenv("FUZZ_SEEDS") // a pattern of seed files; "" for all
	s.batch = max(s.batch, 1)
	return s
}

// TestDifferential is the differential fuzzer: every kept seed, and
// FUZZ_PROGRAMS random programs from FUZZ_SEED on, each run uninterrupted
// and then crashed at every step boundary and resumed (in process, and
// FUZZ_KILLS cases each with a real process killed by SIGKILL), compared
// within each policy (see [Compare]). A refusal with file:line:col
// diagnostics is a pass. A random program that diverges fails the test;
// FUZZ_SHRINK rounds shrink it first, and FUZZ_KEEP=1 writes it to
// testdata/seeds, to be replayed by every run from then on; FUZZ_SEEDS
// (a file pattern) replays only some of the seeds. With
// FUZZ_HOLES=1 random programs may contain issue 18's constructs too; one
// that diverges only through them (it passes with them off) is counted,
// not failed.
func TestDifferential(t *testing.T) {
	s := readSettings(t)
	seeds, err := ReadSeeds(seedDir)
	if err != nil {
		t.Fatal(err)
	}
	for file := range knownDivergent {
		if !slices.ContainsFunc(seeds, func(sd Seed) bool { return sd.File == file }) {
			t.Errorf("knownDivergent names %s, which is not in %s", file, seedDir)
		}
	}
	if s.seeds != "" {
		seeds = slices.DeleteFunc(seeds, func(sd Seed) bool {
			ok, err := filepath.Match(s.seeds, sd.File)
			return err != nil || !ok
		})
	}
	seedOf := map[string]Seed{}
	var progs []*Program
	for _, sd := range seeds {
		seedOf[sd.Program.Name] = sd
		progs = append(progs, sd.Program)
	}
	knobs := DefaultKnobs()
	if s.holes {
		knobs = knobs.With(Holes...)
	}
	for i := range s.programs {
		progs = append(progs, Generate(s.seed+uint64(i), knobs))
	}
	checks, checkSelf := selfChecks()
	progs = append(checks, progs...)
	cfg := Config{Root: "../..", Kills: s.kills, Parallel: s.parallel}
	if testing.Verbose() {
		cfg.Log = os.Stderr
	}
	start := time.Now()
	results := runAll(t, cfg, progs, s.batch)

	byName := map[string]*Result{}
	for _, r := range results {
		byName[r.Program.Name] = r
	}
	t.Run("self-check", func(t *testing.T) { checkSelf(t, byName) })
	results = results[len(checks):]

	var sum, sumHoles Summary // programs without and with issue 18's holes
	var failed, holed []*Result
	for _, r := range results {
		if r.Program.UsesHole() {
			sumHoles.Add(r)
		} else {
			sum.Add(r)
		}
		if sd, ok := seedOf[r.Program.Name]; ok {
			checkSeed(t, sd, r)
			continue
		}
		switch {
		case len(r.Divergences) == 0:
		case r.Program.UsesHole() && !slices.ContainsFunc(r.Divergences, func(d Divergence) bool { return d.Kind == KindProgram }):
			holed = append(holed, r)
		default:
			failed = append(failed, r)
		}
	}
	known, unexplained := explainByHoles(t, cfg, holed)
	failed = append(failed, unexplained...)
	for _, r := range failed {
		keepFailure(t, cfg, s, r)
	}
	t.Logf("without holes: %s\nwith issue 18's holes: %s\nrandom programs diverging only through the holes: %d; %.0fs", sum, sumHoles, known, time.Since(start).Seconds())
	if s.report != "" {
		writeReport(t, s, sum, sumHoles, known, len(failed), results, time.Since(start))
	}
}

// runAll runs progs in batches of size n.
func runAll(t *testing.T, cfg Config, progs []*Program, n int) []*Result {
	var out []*Result
	for len(progs) > 0 {
		b := progs[:min(n, len(progs))]
		progs = progs[len(b):]
		res, err := Batch(context.Background(), cfg, b)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, res...)
	}
	return out
}

// checkSeed fails the test unless seed sd's result r is what the seed
// list says: a pass, or (knownDivergent) the divergence its hole shows.
func checkSeed(t *testing.T, sd Seed, r *Result) {
	t.Helper()
	kd, known := knownDivergent[sd.File]
	switch {
	case known && len(r.Divergences) == 0:
		what := "is journaled and replayed exactly"
		if r.Refused() {
			what = "is refused: " + r.Refusals[0].Message
		}
		t.Errorf("seed %s (issue %d) no longer diverges: the program %s. Move it out of knownDivergent, so that it guards the fix.", sd.File, kd.issue, what)
	case known && !slices.ContainsFunc(r.Divergences, func(d Divergence) bool { return d.Kind == kd.kind }):
		t.Errorf("seed %s (issue %d) diverges otherwise than known (a %s divergence): %v", sd.File, kd.issue, kd.kind, r.Divergences)
	case !known && len(r.Divergences) > 0:
		t.Errorf("seed %s diverges (%s):\n%s", sd.File, sd.Note, joinDivergences(r.Divergences))
	}
}

// explainByHoles runs each random program that diverged and used issue
// 18's constructs again without them: one that passes so diverged through
// a known hole (counted), one that still diverges is returned.
func explainByHoles(t *testing.T, cfg Config, holed []*Result) (known int, unexplained []*Result) {
	if len(holed) == 0 {
		return 0, nil
	}
	var progs []*Program
	for _, r := range holed {
		k := r.Program.Knobs
		for _, h := range Holes {
			k = k.Without(h)
		}
		progs = append(progs, GenerateNamed(r.Program.Name+"_noholes", r.Program.Seed, k))
	}
	for i, r := range runAll(t, cfg, progs, 50) {
		if len(r.Divergences) > 0 {
			unexplained = append(unexplained, r)
			continue
		}
		known++
		t.Logf("program %s diverges only through issue 18's holes (%v)", holed[i].Program.Name, holed[i].Program.Knobs.Holes())
	}
	return known, unexplained
}

// keepFailure shrinks a failing random program, writes it as a seed when
// asked, and fails the test with it.
func keepFailure(t *testing.T, cfg Config, s settings, r *Result) {
	t.Helper()
	if s.shrink > 0 {
		small, err := Shrink(context.Background(), cfg, r, s.shrink)
		if err != nil {
			t.Fatal(err)
		}
		r = small
	}
	msg := fmt.Sprintf("random program %s (seed %d, %s) diverges:\n%s", r.Program.Name, r.Program.Seed, r.Program.Knobs, joinDivergences(r.Divergences))
	if s.keep {
		path := filepath.Join(seedDir, fmt.Sprintf("found-%d.txtar", r.Program.Seed))
		note := fmt.Sprintf("Found by the differential fuzzer on %s: %s", time.Now().UTC().Format("2006-01-02"), r.Divergences[0])
		if err := WriteSeed(path, note, r.Program); err != nil {
			t.Fatal(err)
		}
		msg += "\nkept as " + path
	} else {
		msg += "\nrun with FUZZ_KEEP=1 (and FUZZ_SEED, FUZZ_PROGRAMS as here) to keep it as a seed"
	}
	t.Error(msg)
}

func joinDivergences(ds []Divergence) string {
	var b strings.Builder
	for _, d := range ds {
		fmt.Fprintf(&b, "\t%s\n", d)
	}
	return b.String()
}

// writeReport writes the run's figures for docs/reliability.md.
func writeReport(t *testing.T, s settings, sum, sumHoles Summary, known, failed int, results []*Result, took time.Duration) {
	f, err := os.Create(s.report)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w := io.Writer(f)
	fmt.Fprintf(w, "seed %d, %d random programs (+ %d kept seeds), holes %v, %d real kills each, %s\n", s.seed, s.programs, len(results)-s.programs, s.holes, s.kills, took.Round(time.Second))
	fmt.Fprintf(w, "programs without holes: %s\n", sum)
	fmt.Fprintf(w, "programs with issue 18's holes: %s\n", sumHoles)
	fmt.Fprintf(w, "random programs diverging only through issue 18's holes: %d; other divergent random programs: %d\n", known, failed)
	used := map[Construct]int{}
	for _, r := range results {
		for _, c := range r.Program.Used {
			used[c]++
		}
	}
	fmt.Fprintf(w, "programs per construct:")
	for _, c := range sortedKeys(used) {
		fmt.Fprintf(w, " %s %d", c, used[c])
	}
	fmt.Fprintln(w)
}
