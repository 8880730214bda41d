package main

import (
	"database/sql"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/resumegen/resumegen/internal/fixture"
)

// The version-change tests build the example twice in a fixture module,
// through the real resumegen: as committed, then edited.

// edit changes the example's onboard.go; ok is false when the source no
// longer has what the edit changes.
type edit func(src string) (changed string, ok bool)

var (
	fixturesMu sync.Mutex
	fixtures   = map[string]*builtFixture{}
)

// builtFixture is one fixture module and its two binaries.
type builtFixture struct {
	once           sync.Once
	dir            string // the module, holding the edited code
	oldBin, newBin string
	err            error
}

// insertStep adds AuditOnboarding before MarkComplete in the workflow.
func insertStep(src string) (string, bool) {
	const last = "\treturn Summary{Scored: len(scored), Notified: notified}, MarkComplete(ctx, in.CustomerID)\n"
	if !strings.Contains(src, last) {
		return src, false
	}
	src = strings.Replace(src, last, "\tif err := AuditOnboarding(ctx, in.CustomerID); err != nil {\n\t\treturn Summary{}, err\n\t}\n"+last, 1)
	return src + `
// AuditOnboarding records the onboarding in the audit log.
//
//resume:step
func AuditOnboarding(ctx context.Context, customerID string) error {
	defer worldFrom(ctx).track(ctx, "AuditOnboarding")()
	return nil
}
`, true
}

// addScoreField adds a field to Score, the result of step ScoreAll: the
// steps stay the same, what ScoreAll journals does not.
func addScoreField(src string) (string, bool) {
	const points = "\tPoints   int\n"
	if !strings.Contains(src, "type Score struct {\n") || !strings.Contains(src, points) {
		return src, false
	}
	return strings.Replace(src, points, points+"\tRegion   string\n", 1), true
}

// asIs leaves the example as it is.
func asIs(src string) (string, bool) { return src, true }

// codeDir makes (once per name) a fixture module of the example with the
// edit, generated but not built: code for check-deploy to read. The
// example is generated as it is first, as the deployed code was, so that
// the edited code's generated file records the lineage a user's would.
func codeDir(t *testing.T, name string, change edit) string {
	t.Helper()
	fixturesMu.Lock()
	f := fixtures["code-"+name]
	if f == nil {
		f = &builtFixture{}
		fixtures["code-"+name] = f
	}
	fixturesMu.Unlock()
	f.once.Do(func() {
		f.dir = filepath.Join(binDir, "code-"+name)
		f.err = func() error {
			m, err := fixture.FromExample("../..", "onboard", f.dir)
			if err != nil {
				return err
			}
			if err := m.Go("generate", "./..."); err != nil {
				return err
			}
			src, err := m.ReadFile("onboard.go")
			if err != nil {
				return err
			}
			changed, ok := change(string(src))
			if !ok {
				return errors.New("the fixture cannot edit onboard.go: the example changed")
			}
			if err := m.WriteFile("onboard.go", []byte(changed)); err != nil {
				return err
			}
			return m.Go("generate", "./...")
		}()
	})
	if f.err != nil {
		t.Fatal(f.err)
	}
	return f.dir
}

// buildFixture builds (once per name) the example as committed (oldBin)
// and with the edit (newBin).
func buildFixture(t *testing.T, name string, change edit) (dir, oldBin, newBin string) {
	t.Helper()
	fixturesMu.Lock()
	f := fixtures[name]
	if f == nil {
		f = &builtFixture{}
		fixtures[name] = f
	}
	fixturesMu.Unlock()
	f.once.Do(func() {
		f.dir = filepath.Join(binDir, "fixture-"+name)
		f.oldBin, f.newBin = filepath.Join(binDir, "onboard-old-"+name), filepath.Join(binDir, "onboard-new-"+name)
		f.err = makeFixture(f.dir, f.oldBin, f.newBin, change)
	})
	if f.err != nil {
		t.Fatal(f.err)
	}
	return f.dir, f.oldBin, f.newBin
}

// makeFixture builds the example as a user's module (oldBin), then edits
// its workflow, regenerates and builds again (newBin).
func makeFixture(dir, oldBin, newBin string, change edit) error {
	m, err := fixture.FromExample("../..", "onboard", dir)
	if err != nil {
		return err
	}
	if err := m.GenerateAndBuild(oldBin); err != nil {
		return err
	}
	src, err := m.ReadFile("onboard.go")
	if err != nil {
		return err
	}
	changed, ok := change(string(src))
	if !ok {
		return errors.New("the fixture cannot edit onboard.go: the example changed")
	}
	if err := m.WriteFile("onboard.go", []byte(changed)); err != nil {
		return err
	}
	return m.GenerateAndBuild(newBin)
}

// deployed is check-deploy -json.
type deployed struct {
	OK       bool `json:"ok"`
	Checked  int  `json:"checked"`
	Stopping []struct {
		RunID       string `json:"run_id"`
		Version     string `json:"version"`
		CodeVersion string `json:"code_version"`
	} `json:"stopping"`
	Diffs []struct {
		Runs []string `json:"runs"`
		Diff []struct {
			Op   string `json:"op"`
			Step string `json:"step"`
		} `json:"diff"`
	} `json:"diffs"`
}

// TestCheckDeployNamesField proves that adding a field to a step's
// result struct is a version change: check-deploy refuses the deploy
// naming the step, the type and the field, the new code parks the
// unfinished run instead of decoding its journaled scores into the new
// struct, and runs show names the field too.
func TestCheckDeployNamesField(t *testing.T) {
	dir, oldBin, newBin := buildFixture(t, "field", addScoreField)
	const field = "ScoreAll: result Score: + Region string"
	backends(t, func(t *testing.T, e env) {
		// ScoreAll is journaled, the run stops before WriteScores.
		e.mustExample(oldBin, "r1", -9, "-crash", "WriteScores:before")
		oldVersion := e.list()["r1"].Version

		code, out, errOut := e.ctlIn(dir, "check-deploy", "./...")
		if code != 1 || !strings.Contains(out, "r1") || !strings.Contains(out, field) {
			t.Errorf("check-deploy exited %d, want 1 listing r1 and %q\nstdout: %s\nstderr: %s", code, field, out, errOut)
		}
		code, out, _ = e.ctlIn(dir, "check-deploy", "-json", "./...")
		var d deployed
		if err := json.Unmarshal([]byte(out), &d); err != nil || code != 1 {
			t.Fatalf("check-deploy -json: exit %d, %v\n%s", code, err, out)
		}
		if d.OK || len(d.Stopping) != 1 || d.Stopping[0].RunID != "r1" || d.Stopping[0].Version != oldVersion || len(d.Diffs) != 1 {
			t.Fatalf("check-deploy -json = %+v", d)
		}
		var changed []string
		for _, l := range d.Diffs[0].Diff {
			if l.Op != " " {
				changed = append(changed, l.Op+" "+l.Step)
			}
		}
		if len(changed) != 1 || changed[0] != "+ ScoreAll: result Score: Region string" {
			t.Errorf("check-deploy -json changed lines %q, want only the added field", changed)
		}

		// The new code executes nothing of r1 and says why.
		before := e.report("r1").Executions
		e.mustExample(newBin, "r1", 3)
		if after := e.report("r1").Executions; !equalCounts(before, after) {
			t.Errorf("the new binary executed steps of a run of another version: %v, then %v", before, after)
		}
		r := e.list()["r1"]
		if r.Status != "needs_attention" || r.AttentionKind != "version" {
			t.Fatalf("r1 after the new binary: %+v, want needs_attention of kind version", r)
		}
		s, _ := e.show("r1")
		if !strings.Contains(s.Error, "\n  "+field) {
			t.Errorf("the parked run's error does not name the field %q:\n%s", field, s.Error)
		}
		if human := e.mustCtl("runs", "show", "r1"); !strings.Contains(human, field) {
			t.Errorf("runs show r1 does not name the field %q:\n%s", field, human)
		}

		// r2 stops too; both are accepted by one filter.
		e.mustExample(oldBin, "r2", -9, "-crash", "WriteScores:before")
		e.mustExample(newBin, "r2", 3)
		newVersion := d.Stopping[0].CodeVersion
		dry := e.mustCtl("runs", "accept-version", "-workflow", "Onboard", "-version", oldVersion, "-to", newVersion, "-dry-run")
		if !strings.Contains(dry, "would act on 2 run(s) of onboardfixture.Onboard (version "+oldVersion+"): r1, r2") {
			t.Errorf("accept-version dry run said %q", dry)
		}
		if r := e.list(); r["r1"].Version != oldVersion || r["r2"].Version != oldVersion {
			t.Errorf("a dry run moved runs: %+v", r)
		}
		out = e.mustCtl("runs", "accept-version", "-workflow", "Onboard", "-to", newVersion, "-yes")
		if !strings.Contains(out, "accept-version: 2 of 2 run(s) done, 0 failed") {
			t.Errorf("accept-version by filter said %q", out)
		}
		for _, id := range []string{"r1", "r2"} {
			wantOperatorMove(t, e, id, oldVersion, newVersion, "ScoreAll: result Score: Region string")
		}
	})
}

// checked is check-deploy -json's verdicts.
type checked struct {
	OK   bool `json:"ok"`
	Runs []struct {
		RunID   string `json:"run_id"`
		Version string `json:"version"`
		Verdict string `json:"verdict"`
		To      string `json:"to"`
		Why     string `json:"why"`
	} `json:"runs"`
	Stranded []string          `json:"stranded"`
	Hints    map[string]string `json:"hints"`
	Old      []struct {
		Version string `json:"version"`
		Func    string `json:"func"`
		Runs    int    `json:"runs"`
	} `json:"old_versions"`
}

// checkDeploy runs check-deploy -json on the code in dir, wants exit
// status code, and returns the verdicts by run id.
func (e env) checkDeploy(dir string, code int) (checked, map[string]string) {
	e.t.Helper()
	got, out, errOut := e.ctlIn(dir, "check-deploy", "-json", "./...")
	var c checked
	if err := json.Unmarshal([]byte(out), &c); err != nil || got != code {
		e.t.Fatalf("check-deploy -json in %s: exit %d, want %d (%v)\n%s%s", dir, got, code, err, out, errOut)
	}
	verdicts := map[string]string{}
	for _, r := range c.Runs {
		verdicts[r.RunID] = r.Verdict + " " + r.To + ": " + r.Why
	}
	return c, verdicts
}

// TestDeployContinues proves the continuation rule end to end on a step
// appended after what the runs journaled: check-deploy says each run
// moves to the new version and why, exit 0; the new code moves and
// finishes them without executing a journaled step again, and runs show
// lists the engine's move.
func TestDeployContinues(t *testing.T) {
	dir, oldBin, newBin := buildFixture(t, "step", insertStep)
	backends(t, func(t *testing.T, e env) {
		e.mustExample(oldBin, "r0", 0)
		e.mustExample(oldBin, "r1", -9, "-crash", "MarkComplete:before")
		e.mustExample(oldBin, "r2", -9, "-crash", "FetchRecords:before")
		oldVersion := e.list()["r1"].Version

		c, v := e.checkDeploy(dir, 0)
		if len(c.Runs) != 2 || !c.OK {
			t.Fatalf("check-deploy: %+v, want r1 and r2 only, ok", c)
		}
		newVersion := c.Runs[0].To
		if want := "moves " + newVersion + ": steps FetchRecords, ScoreAll, WriteScores, NotifyOwner journaled: an unchanged prefix of version " + newVersion; v["r1"] != want {
			t.Errorf("check-deploy on r1: %q, want %q", v["r1"], want)
		}
		if want := "moves " + newVersion + ": no step journaled"; v["r2"] != want {
			t.Errorf("check-deploy on r2: %q, want %q", v["r2"], want)
		}
		if newVersion == oldVersion || newVersion == "" {
			t.Fatalf("check-deploy: the code's version %q", newVersion)
		}
		code, out, errOut := e.ctlIn(dir, "check-deploy", "./...")
		if code != 0 || !regexpLine(out, `^r1\s+onboardfixture\.Onboard\s+\S+\s+`+oldVersion+`\s+moves to `+newVersion+`: steps FetchRecords`) || !strings.Contains(out, "ok: none of the 2 unfinished run(s)") {
			t.Errorf("check-deploy: exit %d\n%s%s", code, out, errOut)
		}

		e.mustExample(newBin, "r1", 0)
		rep := e.report("r1")
		if rep.Status != "succeeded" {
			t.Errorf("r1: %s, want succeeded", rep.Status)
		}
		wantExecutions(t, rep, map[string]int{"FetchRecords": 1, "ScoreAll": 1, "WriteScores": 1, "NotifyOwner": 3, "AuditOnboarding": 1, "MarkComplete": 1})
		var s struct {
			Moves []struct{ From, To, By, Why string } `json:"moves"`
		}
		if err := json.Unmarshal([]byte(e.mustCtl("runs", "show", "r1", "-json")), &s); err != nil {
			t.Fatal(err)
		}
		if len(s.Moves) != 1 || s.Moves[0].From != oldVersion || s.Moves[0].To != newVersion || !strings.HasPrefix(s.Moves[0].By, "engine ") || !strings.Contains(s.Moves[0].Why, "unchanged prefix") {
			t.Errorf("runs show r1: moves %+v, want one by the engine from %s to %s", s.Moves, oldVersion, newVersion)
		}
		if _, v := e.checkDeploy(dir, 0); v["r1"] != "" || v["r2"] == "" {
			t.Errorf("check-deploy after r1 finished: %v", v)
		}

		// Rolled back: a run pinned to the new version waits for it.
		e.mustExample(newBin, "r3", -9, "-crash", "ScoreAll:before")
		_, v = e.checkDeploy(codeDir(t, "asis", asIs), 0)
		if want := "waits : waits for version " + newVersion + ": the code's version " + oldVersion + " does not descend from it"; !strings.HasPrefix(v["r3"], want) {
			t.Errorf("check-deploy with the old code on r3: %q, want %q", v["r3"], want)
		}
	})
}

// wantOperatorMove checks that runs show lists run id's move by an
// operator from one version to the other, and the manifest of the new one.
func wantOperatorMove(t *testing.T, e env, id, from, to, manifestHas string) {
	t.Helper()
	var s struct {
		Moves []struct {
			From, To, By, Why string
			At                time.Time
		} `json:"moves"`
		Manifest string `json:"manifest"`
	}
	out := e.mustCtl("runs", "show", id, "-json")
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatal(err)
	}
	if len(s.Moves) != 1 || s.Moves[0].From != from || s.Moves[0].To != to || s.Moves[0].By != "operator" || s.Moves[0].At.IsZero() {
		t.Errorf("runs show %s -json: moves %+v, want one by an operator from %s to %s", id, s.Moves, from, to)
	}
	if !strings.Contains(s.Manifest, manifestHas) {
		t.Errorf("runs show %s -json: manifest %q, want the new version's", id, s.Manifest)
	}
	human := e.mustCtl("runs", "show", id)
	if !regexpLine(human, `^`+from+`\s+`+to+`\s+operator\s+\d{4}-\d\d-\d\d .*accepted by an operator$`) || !strings.Contains(human, "Version "+to+" (manifest):") {
		t.Errorf("runs show %s does not list the move %s -> %s and the manifest:\n%s", id, from, to, human)
	}
}

func equalCounts(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestDeployStranded: the example's package "moved" (the same code in
// another module): its unfinished runs are stranded, check-deploy fails
// naming them and says how name= keeps their identity; code without any
// such function gets the general hint.
func TestDeployStranded(t *testing.T) {
	moved := codeDir(t, "asis", asIs)
	backends(t, func(t *testing.T, e env) {
		e.mustExample(onboardBin, "r1", -9, "-crash", "ScoreAll:before")
		e.mustExample(onboardBin, "r2", 0)
		old := e.list()["r1"].Workflow
		c, v := e.checkDeploy(moved, 1)
		if c.OK || len(c.Stranded) != 1 || c.Stranded[0] != "r1" || v["r1"] != "stranded : workflow "+old+" is not in these packages" {
			t.Errorf("check-deploy: %+v", c)
		}
		if h := c.Hints[old]; !strings.Contains(h, "the code has example.com/onboardfixture.Onboard") || !strings.Contains(h, "name="+old) {
			t.Errorf("check-deploy hint for %s: %q", old, h)
		}
		code, out, errOut := e.ctlIn(moved, "check-deploy", "./...")
		if code != 1 || !strings.Contains(out, "stranded: workflow "+old+" is not in these packages: the code has") || !strings.Contains(errOut, "1 are stranded") {
			t.Errorf("check-deploy: exit %d\n%s%s", code, out, errOut)
		}
		c, _ = e.checkDeploy("../../examples/batch", 1)
		if h := c.Hints[old]; !strings.Contains(h, "pass it to check-deploy") {
			t.Errorf("check-deploy of another program: hint %q", h)
		}
	})
}

// keepOldVersion keeps Onboard as it is as onboardV1, an old version
// (old-version-of=), and inserts AuditOnboarding between ScoreAll and
// WriteScores in Onboard: a change in the middle.
func keepOldVersion(src string) (string, bool) {
	const start, mid = "//resume:workflow\nfunc Onboard(ctx context.Context, in Input) (Summary, error) {\n", "\tif err := WriteScores(ctx, scored); err != nil {\n"
	i := strings.Index(src, start)
	if i < 0 || !strings.Contains(src, mid) {
		return src, false
	}
	n := strings.Index(src[i:], "\n}\n")
	body := src[i+len(start) : i+n+3]
	old := "\n// onboardV1 is Onboard before the audit, kept for the runs pinned to it.\n//\n//resume:workflow old-version-of=Onboard\nfunc onboardV1(ctx context.Context, in Input) (Summary, error) {\n" + body
	src = strings.Replace(src, mid, "\tif err := AuditOnboarding(ctx, in.CustomerID); err != nil {\n\t\treturn Summary{}, err\n\t}\n"+mid, 1)
	return src + old + `
// AuditOnboarding records the onboarding in the audit log.
//
//resume:step
func AuditOnboarding(ctx context.Context, customerID string) error {
	defer worldFrom(ctx).track(ctx, "AuditOnboarding")()
	return nil
}
`, true
}

// TestDeployDrainsOldVersion: the new code changes a middle step and keeps
// the old version: a run past the change continues on the old version
// (check-deploy says so, and counts the old version's runs), the new code
// finishes it under the old function, and check-deploy then says the old
// function can be deleted.
func TestDeployDrainsOldVersion(t *testing.T) {
	dir, oldBin, newBin := buildFixture(t, "drain", keepOldVersion)
	backends(t, func(t *testing.T, e env) {
		e.mustExample(oldBin, "r1", -9, "-crash", "WriteScores:before")
		oldVersion := e.list()["r1"].Version
		c, v := e.checkDeploy(dir, 0)
		if want := "continues " + oldVersion + ": an old version the code keeps (onboardV1)"; v["r1"] != want {
			t.Errorf("check-deploy on r1: %q, want %q", v["r1"], want)
		}
		if len(c.Old) != 1 || c.Old[0].Version != oldVersion || c.Old[0].Func != "onboardV1" || c.Old[0].Runs != 1 {
			t.Errorf("check-deploy old versions: %+v, want onboardV1 at %s with 1 run", c.Old, oldVersion)
		}
		code, out, _ := e.ctlIn(dir, "check-deploy", "./...")
		if code != 0 || !strings.Contains(out, "old version "+oldVersion+" of onboardfixture.Onboard (onboardV1): 1 unfinished run(s) left") {
			t.Errorf("check-deploy: exit %d\n%s", code, out)
		}

		e.mustExample(newBin, "r1", 0)
		rep := e.report("r1")
		if rep.Status != "succeeded" || rep.Executions["AuditOnboarding"] != 0 || rep.Executions["ScoreAll"] != 1 {
			t.Errorf("r1 under the new code: %+v, want succeeded on the old version (no audit, one scoring)", rep)
		}
		if r := e.list()["r1"]; r.Version != oldVersion {
			t.Errorf("r1 finished on version %s, want its own %s", r.Version, oldVersion)
		}
		code, out, _ = e.ctlIn(dir, "check-deploy", "./...")
		if code != 0 || !strings.Contains(out, "old version "+oldVersion+" of onboardfixture.Onboard: no runs left: onboardV1 can be deleted") {
			t.Errorf("check-deploy after the drain: exit %d\n%s", code, out)
		}
	})
}

// TestDeployNamedIdentity: the code names its workflow with the identity
// its runs are stored under (name=) from another module, and the version
// it descends from (descends-from=: no generated file of the module
// records it): the runs are not stranded; a run with no step journaled
// moves, and so does a run that journaled a step: its callee moved with
// the workflow's package. Without descends-from= the runs wait.
func TestDeployNamedIdentity(t *testing.T) {
	backends(t, func(t *testing.T, e env) {
		e.mustExample(onboardBin, "r1", -9, "-crash", "FetchRecords:before")
		e.mustExample(onboardBin, "r2", -9, "-crash", "ScoreAll:before")
		id, version := e.list()["r1"].Workflow, e.list()["r1"].Version
		const d = "//resume:workflow\nfunc Onboard("
		orphan := codeDir(t, "named-no-lineage", func(src string) (string, bool) {
			return strings.Replace(src, d, "//resume:workflow name="+id+"\nfunc Onboard(", 1), strings.Contains(src, d)
		})
		if _, v := e.checkDeploy(orphan, 0); !strings.HasPrefix(v["r1"], "waits : waits for version "+version) {
			t.Errorf("check-deploy without descends-from= on r1: %q, want it to wait", v["r1"])
		}
		named := codeDir(t, "named", func(src string) (string, bool) {
			return strings.Replace(src, d, "//resume:workflow name="+id+" descends-from="+version+"\nfunc Onboard(", 1), strings.Contains(src, d)
		})
		c, v := e.checkDeploy(named, 0)
		if len(c.Stranded) != 0 || !strings.HasPrefix(v["r1"], "moves ") || !strings.Contains(v["r1"], ": no step journaled (package ") {
			t.Errorf("check-deploy on r1: %q (stranded %v)", v["r1"], c.Stranded)
		}
		if !strings.HasPrefix(v["r2"], "moves ") || !strings.Contains(v["r2"], "step FetchRecords journaled") || !strings.Contains(v["r2"], " moved to ") {
			t.Errorf("check-deploy on r2: %q, want a move: FetchRecords moved with its package", v["r2"])
		}
	})
}

// TestDeployRename: FetchRecords renamed LoadRecords with renamed-from=: a
// run that journaled FetchRecords moves, and check-deploy names the rename.
func TestDeployRename(t *testing.T) {
	_, oldBin, _ := buildFixture(t, "step", insertStep) // oldBin is the example as committed
	renamed := codeDir(t, "rename", func(src string) (string, bool) {
		for _, r := range [][2]string{
			{"\tdata, err := FetchRecords(ctx, in)\n", "\tdata, err := LoadRecords(ctx, in)\n"},
			{"//resume:step\nfunc FetchRecords(", "//resume:step renamed-from=FetchRecords\nfunc LoadRecords("},
		} {
			if !strings.Contains(src, r[0]) {
				return src, false
			}
			src = strings.Replace(src, r[0], r[1], 1)
		}
		return src, true
	})
	backends(t, func(t *testing.T, e env) {
		e.mustExample(oldBin, "r1", -9, "-crash", "WriteScores:before")
		_, v := e.checkDeploy(renamed, 0)
		if !strings.HasPrefix(v["r1"], "moves ") || !strings.HasSuffix(v["r1"], "(renamed FetchRecords -> LoadRecords)") {
			t.Errorf("check-deploy on r1: %q, want a move naming the rename", v["r1"])
		}
	})
}

// TestDeployPlainRename: FetchRecords renamed LoadRecords without
// renamed-from=, at its place and of the same signature, is a likely
// rename: check-deploy says a run killed between FetchRecords's effect and
// its row (nothing journaled, but entered) would stop, naming the fix, and
// exits 1.
func TestDeployPlainRename(t *testing.T) {
	_, oldBin, _ := buildFixture(t, "step", insertStep) // oldBin is the example as committed
	renamed := codeDir(t, "plainrename", func(src string) (string, bool) {
		for _, r := range [][2]string{
			{"\tdata, err := FetchRecords(ctx, in)\n", "\tdata, err := LoadRecords(ctx, in)\n"},
			{"//resume:step\nfunc FetchRecords(", "//resume:step\nfunc LoadRecords("},
		} {
			if !strings.Contains(src, r[0]) {
				return src, false
			}
			src = strings.Replace(src, r[0], r[1], 1)
		}
		return src, true
	})
	backends(t, func(t *testing.T, e env) {
		e.mustExample(oldBin, "r1", -9, "-crash", "FetchRecords:effect")
		c, v := e.checkDeploy(renamed, 1)
		if !strings.HasPrefix(v["r1"], "would stop : step 1 FetchRecords: looks like step FetchRecords renamed LoadRecords") ||
			!strings.Contains(v["r1"], "add renamed-from=FetchRecords to it") || c.OK {
			t.Errorf("check-deploy on r1: %q (ok %v), want a stop naming the likely rename and its fix", v["r1"], c.OK)
		}
	})
}

// TestDeployWithoutDefinition: a manifest stored by an older resumegen has
// no step list: check-deploy cannot show that the run may continue, so it
// says it would stop, and why, rather than guess.
func TestDeployWithoutDefinition(t *testing.T) {
	dir, oldBin, _ := buildFixture(t, "step", insertStep)
	e := env{t: t, dir: t.TempDir()}
	e.db = filepath.Join(e.dir, "journal.db")
	e.mustExample(oldBin, "r1", -9, "-crash", "MarkComplete:before")
	db, err := sql.Open("sqlite", "file:"+e.db)
	if err != nil {
		t.Fatal(err)
	}
	res, err := db.Exec(`UPDATE resume_manifests SET definition = NULL`)
	db.Close()
	if n, _ := res.RowsAffected(); err != nil || n == 0 {
		t.Fatalf("forget the definitions: %v (%d rows)", err, n)
	}
	version := e.list()["r1"].Version
	_, v := e.checkDeploy(dir, 1)
	if want := "the journal has no step list for version " + version + ": saved by an older resumegen"; !strings.HasPrefix(v["r1"], "would stop : ") || !strings.HasSuffix(v["r1"], want) {
		t.Errorf("check-deploy on r1: %q, want would stop: %s", v["r1"], want)
	}
}
