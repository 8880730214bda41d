package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/resumegen/resumegen/runtime/journal"
	"github.com/resumegen/resumegen/runtime/resume"
	"github.com/resumegen/resumegen/runtime/sqlitejournal"
)

// TestHelpAndUsage: help asked for goes to stdout with exit 0; a usage
// error says what is wrong and prints one usage line on stderr, exit 2,
// not the whole usage.
func TestHelpAndUsage(t *testing.T) {
	for _, args := range [][]string{{"help"}, {"-h"}, {"--help"}, {"-help"}, {"runs", "-h"}} {
		code, out, stderr := ctl(t, args...)
		if code != exitOK || !strings.Contains(out, "resumectl runs list") || stderr != "" {
			t.Errorf("resumectl %v: exit %d, stdout %d bytes, stderr %q; want 0, the usage on stdout", args, code, len(out), stderr)
		}
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"runs", "list", "-h"}, "usage: resumectl runs list"},
		{[]string{"help", "runs", "list"}, "usage: resumectl runs list"},
		{[]string{"ui", "--help"}, "usage: resumectl ui"},
	} {
		code, out, stderr := ctl(t, c.args...)
		if code != exitOK || !strings.Contains(out, c.want) || !strings.Contains(out, "-db") || stderr != "" {
			t.Errorf("resumectl %v: exit %d, stdout %q, stderr %q; want 0, the command's usage and flags on stdout", c.args, code, out, stderr)
		}
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "usage: resumectl"},
		{[]string{"frobnicate"}, `unknown command "frobnicate"`},
		{[]string{"runs", "frobnicate"}, "unknown command"},
		{[]string{"-bogus", "runs", "list"}, "flag provided but not defined: -bogus"},
		{[]string{"runs", "list", "-bogus"}, "flag provided but not defined: -bogus"},
		{[]string{"runs", "show", "-db", "x"}, "want 1 argument"},
		{[]string{"runs", "list", "-limit", "-3", "-db", "x"}, "-limit"},
	} {
		code, out, stderr := ctl(t, c.args...)
		lines := strings.Count(stderr, "\n")
		if code != exitUsage || !strings.Contains(stderr, c.want) || out != "" || lines > 3 || strings.Contains(stderr, "-key-file") {
			t.Errorf("resumectl %v: exit %d, stdout %q, stderr (%d lines) %q; want 2, %q and a short usage line", c.args, code, out, lines, stderr, c.want)
		}
	}
}

// TestNextCommandNamed: a run that is not there names the command that
// lists the runs.
func TestNextCommandNamed(t *testing.T) {
	path := seedRuns(t, 1)
	code, _, stderr := ctl(t, "runs", "show", "nope", "-db", path)
	if code != exitFail || !strings.Contains(stderr, "run not found") || !strings.Contains(stderr, "resumectl runs list") || strings.Count(stderr, "\n") != 1 {
		t.Errorf("runs show of an unknown run: exit %d, %q; want 1, one line naming runs list", code, stderr)
	}
}

// TestVersion: resumectl version names the module version (from the
// build info) and the generated code the runtime runs.
func TestVersion(t *testing.T) {
	code, out, _ := ctl(t, "version")
	if code != exitOK || !regexp.MustCompile(`^resumectl \S+`).MatchString(out) || !strings.Contains(out, "resume.SupportPackageIsVersion5") {
		t.Errorf("version: exit %d, %q", code, out)
	}
	code, out, _ = ctl(t, "version", "-json")
	var v map[string]string
	if code != exitOK || json.Unmarshal([]byte(out), &v) != nil || v["module"] != "github.com/resumegen/resumegen" || v["version"] == "" || !strings.Contains(v["generated_code"], "SupportPackageIsVersion5") {
		t.Errorf("version -json: exit %d, %q", code, out)
	}
}

// seedRuns creates runs r0..r(n-1), r0 the oldest, of workflows A (even)
// and B (odd), and returns the journal's path.
func seedRuns(t *testing.T, n int) string {
	t.Helper()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "j.db")
	j, err := sqlitejournal.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	at := time.Now().Add(-time.Hour)
	for i := range n {
		id := "r" + string(rune('0'+i))
		wf := "example.com/app.A"
		if i%2 == 1 {
			wf = "example.com/app.B"
		}
		if _, _, err := j.CreateRun(ctx, journal.RunRecord{RunID: id, Workflow: wf, Version: "v1", Input: []byte("[]"),
			CreatedAt: at.Add(time.Duration(i) * time.Minute), UpdatedAt: at}); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

func listedIDs(t *testing.T, out string) []string {
	t.Helper()
	var runs []runJSON
	if err := json.Unmarshal([]byte(out), &runs); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	var ids []string
	for _, r := range runs {
		ids = append(ids, r.RunID)
	}
	return ids
}

// TestGlobalFlagsAndListOrder: -db and -json are accepted before the
// command as after it (after wins); runs list lists newest first, as the
// UI, -oldest oldest first, and -limit cuts, with -workflow too.
func TestGlobalFlagsAndListOrder(t *testing.T) {
	path := seedRuns(t, 6)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"runs", "list", "-json", "-db", path}, "r5 r4 r3 r2 r1 r0"},
		{[]string{"-db", path, "-json", "runs", "list"}, "r5 r4 r3 r2 r1 r0"},
		{[]string{"-db", path, "runs", "list", "-json", "-limit", "2"}, "r5 r4"},
		{[]string{"-json", "runs", "list", "-oldest", "-limit", "2", "-db", path}, "r0 r1"},
		{[]string{"-json", "-db", path, "runs", "list", "-workflow", "app.B", "-limit", "2"}, "r5 r3"},
		{[]string{"-json", "-db", "/nonexistent", "runs", "list", "-db", path, "-limit", "1"}, "r5"},
	} {
		code, out, stderr := ctl(t, c.args...)
		if code != exitOK {
			t.Fatalf("%v: exit %d: %s", c.args, code, stderr)
		}
		if got := strings.Join(listedIDs(t, out), " "); got != c.want {
			t.Errorf("%v lists %s; want %s", c.args, got, c.want)
		}
	}
}

// TestWatchJSONComplete: runs watch -json carries each step's finished_at
// and duration_ms, as runs show -json does.
func TestWatchJSONComplete(t *testing.T) {
	path, ids := seedHostile(t)
	code, out, _ := ctl(t, "runs", "watch", "-json", ids[0], "-db", path)
	if code != exitFail {
		t.Errorf("watch of a failed run: exit %d, want 1", code)
	}
	n := 0
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var ev struct {
			Step map[string]any `json:"step"`
		}
		if err := json.Unmarshal([]byte(l), &ev); err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		if ev.Step == nil {
			continue
		}
		n++
		if ev.Step["finished_at"] == nil || ev.Step["duration_ms"] == nil {
			t.Errorf("watch -json step lacks finished_at or duration_ms: %s", l)
		}
	}
	if n != 2 {
		t.Errorf("watch -json printed %d steps, want 2:\n%s", n, out)
	}
}

// sealedJournal makes a journal whose runs are sealed with key k1: one
// waiting for the signal "approval", one parked on a once step. It
// returns the path, a key file and the $RESUME_KEYS text.
func sealedJournal(t *testing.T) (path, keyFile, keys string) {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	path = filepath.Join(dir, "j.db")
	raw, err := sqlitejournal.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	secret := []byte("0123456789abcdef0123456789abcdef")
	keys = "k1:" + base64.StdEncoding.EncodeToString(secret)
	keyFile = filepath.Join(dir, "keys")
	if err := os.WriteFile(keyFile, []byte("# the sealing key first\n"+keys+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ring, _ := resume.NewKeyring(resume.Key{ID: "k1", Secret: secret})
	j := resume.SealJournal(raw, ring)
	now := time.Now()
	for _, id := range []string{"waits", "parked"} {
		if _, _, err := j.CreateRun(ctx, journal.RunRecord{RunID: id, Workflow: "example.com/app.Flow", Version: "v1", Input: []byte(`[{"email":"ada@example.com"}]`),
			LeaseOwner: "w", LeaseUntil: now.Add(time.Minute), CreatedAt: now, UpdatedAt: now}); err != nil {
			t.Fatal(err)
		}
	}
	l := journal.Lease{RunID: "waits", Owner: "w", Epoch: 1}
	if err := j.FinishRun(ctx, l, journal.RunRecord{Status: journal.StatusWaiting, WaitKind: journal.WaitSignal, WaitName: "approval"}); err != nil {
		t.Fatal(err)
	}
	l = journal.Lease{RunID: "parked", Owner: "w", Epoch: 1}
	if err := j.WriteStep(ctx, l, journal.StepRecord{RunID: "parked", StepKey: "Charge", Name: "Charge", Status: journal.StepInFlight, Attempt: 1, Seq: 1, StartedAt: now}); err != nil {
		t.Fatal(err)
	}
	if err := j.FinishRun(ctx, l, journal.RunRecord{Status: journal.StatusNeedsAttention, AttentionKind: journal.AttentionKindStep, AttentionStep: "Charge", Error: "step Charge (once) was in flight"}); err != nil {
		t.Fatal(err)
	}
	return path, keyFile, keys
}

// TestSealedJournalNeedsItsKey is issue 20's plaintext signal: on a
// sealed journal, runs signal and runs resolve without the key are
// refused and store nothing; -unsealed writes in plaintext with a
// warning; with the key (-key-file, or $RESUME_KEYS) what they write is
// sealed, and runs show opens the values.
func TestSealedJournalNeedsItsKey(t *testing.T) {
	path, keyFile, keys := sealedJournal(t)
	t.Setenv("RESUME_KEYS", "")
	t.Setenv("RESUME_KEY_FILE", "")
	signals := func() []journal.SignalRecord {
		j, err := sqlitejournal.OpenReadOnly(context.Background(), path)
		if err != nil {
			t.Fatal(err)
		}
		defer j.Close()
		s, _ := j.ListSignals(context.Background(), "waits")
		return s
	}
	for _, args := range [][]string{{"runs", "signal", "waits", "approval", `{"ok":true}`}, {"runs", "resolve", "parked", "Charge", "-done", "-result", `{"id":"ch_1"}`}, {"runs", "resolve", "parked", "Charge", "-redo"}} {
		code, _, stderr := ctl(t, append(args, "-db", path)...)
		if code != exitFail || !strings.Contains(stderr, "the journal is sealed (keys k1)") || !strings.Contains(stderr, "-key-file") {
			t.Errorf("%v without the key: exit %d, %q; want refused, naming the key and -key-file", args, code, stderr)
		}
	}
	if s := signals(); len(s) != 0 {
		t.Fatalf("a refused signal stored %+v", s)
	}
	code, out, _ := ctl(t, "runs", "show", "parked", "-db", path)
	if code != exitOK || !strings.Contains(out, "keys k1; values sealed") || strings.Contains(out, "ada@") || !strings.Contains(out, encrypted) {
		t.Errorf("runs show without the key:\n%s", out)
	}
	code, _, stderr := ctl(t, "runs", "signal", "waits", "approval", `{"ok":1}`, "-unsealed", "-db", path)
	if code != exitOK || !strings.Contains(stderr, "warning") || !strings.Contains(stderr, "plaintext") {
		t.Errorf("signal -unsealed: exit %d, %q; want it sent with a warning", code, stderr)
	}
	if s := signals(); len(s) != 1 || journal.IsSealed(s[0].Payload) {
		t.Errorf("after -unsealed: %+v; want one plaintext signal", s)
	}
	code, _, stderr = ctl(t, "runs", "signal", "waits", "approval", `{"ok":2}`, "-key-file", keyFile, "-db", path)
	if code != exitOK {
		t.Fatalf("signal with -key-file: exit %d, %s", code, stderr)
	}
	t.Setenv("RESUME_KEYS", keys)
	code, _, stderr = ctl(t, "runs", "resolve", "parked", "Charge", "-done", "-result", `{"id":"ch_1"}`, "-db", path)
	if code != exitOK {
		t.Fatalf("resolve with $RESUME_KEYS: exit %d, %s", code, stderr)
	}
	if s := signals(); len(s) != 2 || !journal.IsSealed(s[1].Payload) || !strings.Contains(string(s[1].Payload), `"key":"k1"`) {
		t.Errorf("the signal sent with the key: %+v; want it sealed under k1", s)
	}
	code, out, _ = ctl(t, "runs", "show", "parked", "-json", "-db", path)
	var shown showJSON
	if code != exitOK || json.Unmarshal([]byte(out), &shown) != nil {
		t.Fatalf("show -json with the key: %d %s", code, out)
	}
	compact := func(b []byte) string {
		var c bytes.Buffer
		json.Compact(&c, b)
		return c.String()
	}
	if !shown.Opened || compact(shown.Input) != `[{"email":"ada@example.com"}]` || len(shown.Steps) != 1 || compact(shown.Steps[0].Result) != `{"id":"ch_1"}` {
		t.Errorf("show with the key: opened %v, input %s, steps %+v; want the values opened", shown.Opened, shown.Input, shown.Steps)
	}
	raw, _ := sqlitejournal.OpenReadOnly(context.Background(), path)
	_, steps, _ := raw.LoadRun(context.Background(), "parked")
	raw.Close()
	if len(steps) != 1 || !journal.IsSealed(steps[0].Result) {
		t.Errorf("the resolved result as stored: %+v; want it sealed", steps)
	}
}

// TestUIPublicNeedsAuth: ui -public without a token or a proxy header
// refuses to start; with a token file it serves, and a request without
// credentials gets no run (it is sent to the login form), nor one with
// a wrong Host; the token as a bearer gets in.
func TestUIPublicNeedsAuth(t *testing.T) {
	path := seedRuns(t, 1)
	t.Setenv("RESUME_UI_TOKEN", "")
	code, _, stderr := ctl(t, "ui", "-public", "-addr", "127.0.0.1:0", "-db", path)
	if code != exitUsage || !strings.Contains(stderr, "-public needs authentication") {
		t.Errorf("ui -public without a token: exit %d, %q; want 2, refused", code, stderr)
	}
	tok := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tok, []byte("a token of at least sixteen bytes\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out, errb lockedBuffer
	done := make(chan int)
	go func() {
		done <- run(ctx, []string{"ui", "-public", "-token-file", tok, "-addr", "127.0.0.1:0", "-db", path}, &out, &errb)
	}()
	addr := regexp.MustCompile(`http://(127\.0\.0\.1:\d+)/`)
	deadline := time.Now().Add(10 * time.Second)
	for addr.FindString(out.String()) == "" && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	m := addr.FindStringSubmatch(out.String())
	if m == nil {
		t.Fatalf("ui printed no address: %q %q", out.String(), errb.String())
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	get := func(host, auth string) int {
		req, _ := http.NewRequest("GET", "http://"+m[1]+"/run?id=r0", nil)
		if host != "" {
			req.Host = host
		}
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := get("", ""); code != http.StatusSeeOther {
		t.Errorf("GET a run without credentials: %d; want 303 to the login form", code)
	}
	if code := get("evil.example", "Bearer a token of at least sixteen bytes"); code != http.StatusForbidden {
		t.Errorf("GET with Host evil.example: %d; want 403", code)
	}
	if code := get("", "Bearer a token of at least sixteen bytes"); code != http.StatusOK {
		t.Errorf("GET with the token: %d; want 200", code)
	}
	cancel()
	<-done
}
