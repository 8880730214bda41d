package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// The version-change test builds the example twice in a fixture module,
// through the real resumegen: as committed, then with a step inserted.

var fixture struct {
	once           sync.Once
	dir            string // the module, holding the new code
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

func buildFixture(t *testing.T) (dir, oldBin, newBin string) {
	t.Helper()
	fixture.once.Do(func() {
		fixture.dir = filepath.Join(binDir, "fixture")
		fixture.oldBin, fixture.newBin = filepath.Join(binDir, "onboard-old"), filepath.Join(binDir, "onboard-new")
		fixture.err = makeFixture(fixture.dir, fixture.oldBin, fixture.newBin)
	})
	if fixture.err != nil {
		t.Fatal(fixture.err)
	}
	return fixture.dir, fixture.oldBin, fixture.newBin
}

func makeFixture(dir, oldBin, newBin string) error {
	repo, err := filepath.Abs("../..")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	gomod := "module example.com/onboardfixture\n\ngo 1.24\n\n" +
		"require github.com/resumegen/resumegen v0.0.0\n\n" +
		"replace github.com/resumegen/resumegen => " + repo + "\n\n" +
		"tool github.com/resumegen/resumegen/cmd/resumegen\n"
	files := map[string][]byte{"go.mod": []byte(gomod)}
	if files["go.sum"], err = os.ReadFile(filepath.Join(repo, "go.sum")); err != nil {
		return err
	}
	src := filepath.Join(repo, "examples", "onboard")
	sources, err := filepath.Glob(filepath.Join(src, "*.go"))
	if err != nil {
		return err
	}
	for _, f := range sources {
		name := filepath.Base(f)
		if strings.HasSuffix(name, "_test.go") || strings.HasSuffix(name, "_resume.go") {
			continue
		}
		if files[name], err = os.ReadFile(f); err != nil {
			return err
		}
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			return err
		}
	}
	for _, args := range [][]string{{"mod", "tidy"}, {"generate", "./..."}, {"build", "-o", oldBin, "."}} {
		if err := goCmd(dir, args...); err != nil {
			return err
		}
	}
	changed, ok := insertStep(string(files["onboard.go"]))
	if !ok {
		return errorString("the fixture cannot insert a step: onboard.go's last line changed")
	}
	if err := os.WriteFile(filepath.Join(dir, "onboard.go"), []byte(changed), 0o644); err != nil {
		return err
	}
	for _, args := range [][]string{{"generate", "./..."}, {"build", "-o", newBin, "."}} {
		if err := goCmd(dir, args...); err != nil {
			return err
		}
	}
	return nil
}

type errorString string

func (e errorString) Error() string { return string(e) }

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

func TestVersionChange(t *testing.T) {
	dir, oldBin, newBin := buildFixture(t)
	const audit = "AuditOnboarding example.com/onboardfixture.AuditOnboarding func(context.Context, string) error default"
	backends(t, func(t *testing.T, e env) {
		// The old code leaves r1 unfinished, and finishes r0.
		e.mustExample(oldBin, "r0", 0)
		e.mustExample(oldBin, "r1", -9, "-crash", "MarkComplete:before")
		oldVersion := e.list()["r1"].Version

		// The gate refuses the deploy, naming r1 and the inserted step.
		code, out, errOut := e.ctlIn(dir, "check-deploy", "./...")
		if code != 1 || !strings.Contains(out, "r1") || !strings.Contains(out, "+ "+audit) || strings.Contains(out, "r0") {
			t.Errorf("check-deploy exited %d, want 1 listing r1 and + %s\nstdout: %s\nstderr: %s", code, audit, out, errOut)
		}
		if lines := strings.Split(strings.TrimSpace(errOut), "\n"); len(lines) != 1 || !strings.Contains(errOut, "1 unfinished run(s) would stop") {
			t.Errorf("check-deploy stderr: %q", errOut)
		}
		code, out, _ = e.ctlIn(dir, "check-deploy", "-json", "./...")
		var d deployed
		if err := json.Unmarshal([]byte(out), &d); err != nil || code != 1 {
			t.Fatalf("check-deploy -json: exit %d, %v\n%s", code, err, out)
		}
		if d.OK || d.Checked != 1 || len(d.Stopping) != 1 || d.Stopping[0].RunID != "r1" || d.Stopping[0].Version != oldVersion || len(d.Diffs) != 1 {
			t.Fatalf("check-deploy -json = %+v", d)
		}
		newVersion := d.Stopping[0].CodeVersion
		var added []string
		for _, l := range d.Diffs[0].Diff {
			if l.Op != " " {
				added = append(added, l.Op+" "+l.Step)
			}
		}
		if len(added) != 1 || added[0] != "+ "+audit || len(d.Diffs[0].Diff) != 6 {
			t.Errorf("check-deploy diff: changed lines %q of %d, want only + %s of 6", added, len(d.Diffs[0].Diff), audit)
		}

		// The new code parks r1 and executes nothing.
		before := e.report("r1").Executions
		e.mustExample(newBin, "r1", 3)
		if after := e.report("r1").Executions; !equalCounts(before, after) {
			t.Errorf("the new binary executed steps of a run of another version: %v, then %v", before, after)
		}
		r := e.list()["r1"]
		if r.Status != "needs_attention" || r.AttentionKind != "version" || r.Version != oldVersion {
			t.Fatalf("r1 after the new binary: %+v, want needs_attention of kind version at %s", r, oldVersion)
		}
		s, before1 := e.show("r1")
		vc := s.VersionChange
		if vc == nil || vc.From != oldVersion || vc.To != newVersion {
			t.Fatalf("runs show -json version_change = %+v, want %s -> %s", vc, oldVersion, newVersion)
		}
		var changed []string
		for _, l := range vc.Diff {
			if l.Op != " " {
				changed = append(changed, l.Op+" "+l.Step)
			}
		}
		if len(changed) != 1 || changed[0] != "+ "+audit {
			t.Errorf("runs show diff: %q, want only + %s", changed, audit)
		}
		human := e.mustCtl("runs", "show", "r1")
		if !strings.Contains(human, "+ "+audit) || !strings.Contains(human, "resumectl runs accept-version r1") || !strings.Contains(human, "needs_attention (version)") {
			t.Errorf("runs show r1 does not show the version change:\n%s", human)
		}
		e.refused("not stopped on a version change", "runs", "accept-version", "r0")
		e.refused("not in the journal", "runs", "accept-version", "r1", "-version", "nope")
		e.unchanged("r1", before1)

		// Accepted, the new code finishes it without repeating a step.
		out = e.mustCtl("runs", "accept-version", "r1")
		if !strings.Contains(out, newVersion) || !strings.Contains(out, "pending") {
			t.Errorf("accept-version said %q", out)
		}
		if r := e.list()["r1"]; r.Status != "pending" || r.Version != newVersion || r.AttentionKind != "" {
			t.Errorf("r1 after accept-version: %+v", r)
		}
		if code, out, errOut := e.ctlIn(dir, "check-deploy", "./..."); code != 0 || !strings.Contains(out, "ok") {
			t.Errorf("check-deploy after the accept: exit %d\n%s%s", code, out, errOut)
		}
		e.mustExample(newBin, "r1", 0)
		rep := e.report("r1")
		if rep.Status != "succeeded" {
			t.Errorf("r1: %s, want succeeded", rep.Status)
		}
		wantExecutions(t, rep, map[string]int{"FetchRecords": 1, "ScoreAll": 1, "WriteScores": 1, "NotifyOwner": 3, "AuditOnboarding": 1, "MarkComplete": 1})
	})
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
