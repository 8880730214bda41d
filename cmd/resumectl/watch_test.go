package main

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestWatch follows a live run of the example to its end, a parked run and
// an unknown one, and reads each step's call site in runs show.
func TestWatch(t *testing.T) {
	backends(t, func(t *testing.T, e env) {
		cmd := exec.Command(onboardBin, "-db", e.db, "-run", "w1", "-world", filepath.Join(e.dir, "world-w1"), "-step-delay", "150ms")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		defer cmd.Wait()
		waitListed(t, e, "w1")
		code, out, errOut := e.ctl("runs", "watch", "w1", "-interval", "20ms")
		if code != 0 {
			t.Fatalf("runs watch w1 exited %d, want 0\nstdout: %s\nstderr: %s", code, out, errOut)
		}
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if last := lines[len(lines)-1]; !strings.Contains(last, "run w1  succeeded") {
			t.Errorf("the last line is %q, want the run's success", last)
		}
		for _, step := range []string{"FetchRecords", "ScoreAll", "WriteScores", "MarkComplete"} {
			if n := countMatches(out, `step \d+\s+`+step+`\s+succeeded `); n != 1 {
				t.Errorf("%s succeeded %d times in the watch, want once:\n%s", step, n, out)
			}
		}
		// NotifyOwner is once: its in_flight row shows before its
		// success, at least for one owner, so the watch saw the run live.
		if !regexp.MustCompile(`step \d+\s+NotifyOwner\S*\s+in_flight `).MatchString(out) || !strings.Contains(out, "run w1  running") {
			t.Errorf("the watch did not follow the run live:\n%s", out)
		}
		if err := cmd.Wait(); err != nil {
			t.Fatalf("onboard w1: %v", err)
		}

		var s struct {
			Steps []struct {
				StepKey string `json:"step_key"`
				Where   string `json:"where"`
			} `json:"steps"`
		}
		if err := json.Unmarshal([]byte(e.mustCtl("runs", "show", "w1", "-json")), &s); err != nil {
			t.Fatal(err)
		}
		where := map[string]string{}
		for _, st := range s.Steps {
			where[st.StepKey] = st.Where
		}
		if where["FetchRecords"] != "examples/onboard/onboard.go:49" || where["NotifyOwner#2"] != "examples/onboard/onboard.go:62" {
			t.Errorf("runs show -json call sites = %v", where)
		}
		if human := e.mustCtl("runs", "show", "w1"); !regexpLine(human, `^1\s+FetchRecords\s+succeeded\s+1\s.*examples/onboard/onboard.go:49`) {
			t.Errorf("runs show does not say where FetchRecords is:\n%s", human)
		}

		// A run that parks ends the watch with exit status 1.
		e.mustExample(onboardBin, "w2", -9, "-crash", "NotifyOwner:effect")
		e.mustExample(onboardBin, "w2", 3)
		code, out, _ = e.ctl("runs", "watch", "w2")
		if code != 1 || !strings.Contains(out, "needs_attention") {
			t.Errorf("runs watch of a parked run exited %d, want 1, and said:\n%s", code, out)
		}
		code, out, _ = e.ctl("runs", "watch", "w2", "-json")
		var ev watchEvent
		lines = strings.Split(strings.TrimSpace(out), "\n")
		if code != 1 || json.Unmarshal([]byte(lines[len(lines)-1]), &ev) != nil || ev.Status != "needs_attention" {
			t.Errorf("runs watch -json of a parked run exited %d and ended with %q", code, lines[len(lines)-1])
		}
		e.refused("run not found", "runs", "watch", "nope")
	})
}

// waitListed waits until the journal holds run id.
func waitListed(t *testing.T, e env, id string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		// Until the example created the journal, resumectl refuses.
		if code, out, _ := e.ctl("runs", "list", "-json"); code == 0 && strings.Contains(out, `"run_id": "`+id+`"`) {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("run %s never appeared in the journal", id)
}

func countMatches(s, expr string) int {
	return len(regexp.MustCompile(expr).FindAllStringIndex(s, -1))
}
