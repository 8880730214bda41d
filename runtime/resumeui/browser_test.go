package resumeui

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/resumegen/resumegen/runtime/journal"
)

var updateScreenshots = flag.Bool("update-screenshots", false, "write docs/ui-runs.png and docs/ui-parked.png from the browser test")

// chromium finds a Chromium or Chrome binary ($RESUME_CHROMIUM first). Without
// one the browser tests skip, unless RESUME_REQUIRE_BROWSER=1 (CI), where
// a skipped browser test is a failed one.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{os.Getenv("RESUME_CHROMIUM"), "chromium", "chromium-browser", "google-chrome", "headless-shell"} {
		if name == "" {
			continue
		}
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("RESUME_REQUIRE_BROWSER") == "1" {
		t.Fatal("RESUME_REQUIRE_BROWSER=1 but no Chromium found: apt-get install chromium, or set RESUME_CHROMIUM")
	}
	t.Skip("no Chromium found (apt-get install chromium, or set RESUME_CHROMIUM): the browser tests need one")
	return ""
}

// browser starts a headless Chromium for t, with extra options, and
// returns its tab's context.
func browser(t *testing.T, extra ...chromedp.ExecAllocatorOption) context.Context {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chromium(t)), chromedp.WindowSize(1360, 900))
	opts = append(opts, extra...)
	if os.Geteuid() == 0 {
		opts = append(opts, chromedp.NoSandbox) // Chromium refuses to run as root with its sandbox
	}
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancel)
	ctx, cancel2 := chromedp.NewContext(actx)
	t.Cleanup(cancel2)
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start Chromium: %v", err)
	}
	return ctx
}

func TestBrowserSQLite(t *testing.T) { browse(t, openSQLite(t), true) }

func TestBrowserPostgres(t *testing.T) { browse(t, openPG(t), false) }

// browse drives the UI in Chromium over j: the list (counts, filter,
// search, paging), a run page (escaping, position), an action with
// confirmation, and a live update. shots writes the README's screenshots
// when -update-screenshots is given.
func browse(t *testing.T, j journal.Journal, shots bool) {
	ctx := browser(t)
	plain := seed(t, j, 57)
	srv := serve(t, j, Options{Write: true, PageSize: 20, Poll: 150 * time.Millisecond})
	root := srv.URL + "/ops/"
	d := &driver{ctx: ctx}
	step, eval, until, ids := d.step, d.eval, d.until, d.ids

	t.Run("list counts, status filter and id search", func(t *testing.T) {
		d.t = t
		step("open the list", chromedp.Navigate(root), chromedp.WaitVisible(chromedp.ID("runs")))
		if got := eval(`[document.getElementById("total").textContent, document.querySelector('[data-status="failed"] b').textContent]`); !slices.Equal(got, []string{"60", "1"}) {
			t.Errorf("total and failed count = %v; want [60 1]", got)
		}
		if got := ids(); len(got) != 20 || got[0] != markupID {
			t.Errorf("first page lists %d runs, first %q; want 20, the newest (the markup id) first", len(got), got[0])
		}
		if shots && *updateScreenshots {
			screenshot(t, ctx, "ui-runs.png")
		}
		step("filter by status", chromedp.SetValue(chromedp.ID("f-status"), "failed"), chromedp.Click(chromedp.ID("f-apply")))
		until(`location.search.includes("status=failed") && document.readyState === "complete"`)
		if got := ids(); !slices.Equal(got, []string{failedID}) {
			t.Errorf("status failed lists %v; want [%s]", got, failedID)
		}
		step("search by id", chromedp.SetValue(chromedp.ID("f-status"), ""), chromedp.SetValue(chromedp.ID("f-q"), "1042"), chromedp.Click(chromedp.ID("f-apply")))
		until(`location.search.includes("q=1042") && document.readyState === "complete"`)
		if got := ids(); !slices.Equal(got, []string{parkedID}) {
			t.Errorf("search 1042 lists %v; want [%s]", got, parkedID)
		}
	})

	t.Run("paging lists every run once", func(t *testing.T) {
		d.t = t
		step("open the workflow's runs", chromedp.Navigate(root+"?workflow="+url.QueryEscape("example.com/batch.Sync")), chromedp.WaitVisible(chromedp.ID("runs")))
		var got []string
		for page := 0; ; page++ {
			got = append(got, ids()...)
			next := eval(`Array.from(document.querySelectorAll("#next")).map(a => a.href)`)
			if len(next) == 0 || page > 10 {
				break
			}
			if !strings.HasPrefix(next[0], root) {
				t.Fatalf("next page link %s leaves the mount point %s", next[0], root)
			}
			step("follow next", chromedp.Click(chromedp.ID("next")))
			until(`location.href === ` + jsString(next[0]) + ` && document.readyState === "complete"`)
		}
		if !slices.Equal(got, plain) {
			t.Errorf("pages list %d runs\n%v\nwant %d\n%v", len(got), got, len(plain), plain)
		}
	})

	t.Run("a run id holding markup is text", func(t *testing.T) {
		d.t = t
		step("open the run", chromedp.Navigate(root+"run?id="+url.QueryEscape(markupID)), chromedp.WaitVisible(chromedp.ID("run-id")))
		got := eval(`[document.getElementById("run-id").textContent, String(document.querySelectorAll("img").length), String(document.scripts.length)]`)
		if !slices.Equal(got, []string{markupID, "0", "3"}) {
			t.Errorf("heading, img count, script count = %q; want the id as text, no img, only mermaid, graph.js and live.js", got)
		}
	})

	t.Run("a cross-site form posting an action is refused", func(t *testing.T) {
		d.t = t
		step("open the parked run", chromedp.Navigate(root+"run?id="+parkedID), chromedp.WaitVisible(chromedp.ID("parked")))
		token := eval(`[document.querySelector('input[name="csrf"]').value]`)[0] // the worst case: the attacker has the token
		evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprintf(w, `<!doctype html><form id="f" method="post" action="%saction"><input name="csrf" value="%s"><input name="action" value="cancel">
				<input name="id" value="%s"><input name="confirm" value="yes"></form><script>document.getElementById("f").submit()</script>`, root, token, parkedID)
		}))
		defer evil.Close()
		// localhost is another site than 127.0.0.1: the browser says cross-site.
		step("visit the attacker's page", chromedp.Navigate(strings.Replace(evil.URL, "127.0.0.1", "localhost", 1)))
		until(`location.href.endsWith("/ops/action") && document.readyState === "complete"`)
		if got := eval(`[document.body.textContent]`)[0]; !strings.Contains(got, "cross-site request refused") {
			t.Errorf("the cross-site POST got %q; want it refused", got)
		}
		if r, _, _ := j.LoadRun(context.Background(), parkedID); r.Status != journal.StatusNeedsAttention {
			t.Fatalf("run %s is %s after a cross-site POST; want needs_attention", parkedID, r.Status)
		}
	})

	t.Run("a parked run's page and resolving it", func(t *testing.T) {
		d.t = t
		step("open the parked run", chromedp.Navigate(root+"run?id="+parkedID), chromedp.WaitVisible(chromedp.ID("parked")))
		if got := eval(`[document.getElementById("status").textContent, document.querySelector("tr.step.current").dataset.key, document.querySelector("#plan li.current .mono").textContent]`); !slices.Equal(got, []string{"needs_attention (step)", "Charge", "Charge"}) {
			t.Errorf("status, current step on the timeline and in the plan = %v", got)
		}
		until(`document.querySelector("#graph-svg svg") !== null || document.getElementById("graph-svg").dataset.error !== undefined`)
		got := eval(`(() => { const g = document.getElementById("graph-svg"), cur = g.querySelectorAll("svg .node.current");
			return [g.dataset.error || "", String(g.hidden), String(document.getElementById("graph").hidden), String(cur.length), cur.length ? cur[0].textContent.trim() : "",
				Array.from(g.querySelectorAll("svg .node.succeeded")).map(n => n.textContent.trim()).join(","),
				Array.from(g.querySelectorAll("svg .node.inflight")).map(n => n.textContent.trim()).join(",")] })()`)
		if want := []string{"", "false", "true", "1", "Charge (once)", "Reserve", "Charge (once)"}; !slices.Equal(got, want) {
			t.Errorf("drawn graph: error, svg hidden, text hidden, current nodes, current label, succeeded, in flight = %q; want %q", got, want)
		}
		time.Sleep(5 * 150 * time.Millisecond) // five polls of a run that does not change
		if got := eval(`[String(document.getElementById("live").dataset.updated), String(document.querySelectorAll("#graph-svg svg").length)]`); !slices.Equal(got, []string{"undefined", "1"}) {
			t.Errorf("after five polls of an unchanged run: last replaced at %s, drawn graphs %s; want never replaced, the graph still drawn", got[0], got[1])
		}
		if shots && *updateScreenshots {
			screenshot(t, ctx, "ui-parked.png")
		}
		step("resolve done", chromedp.Click(chromedp.ID("how-done")), chromedp.SetValue(chromedp.ID("resolve-result"), `{"charge":"ch_9"}`),
			chromedp.Click(chromedp.ID("do-resolve")))
		until(`document.getElementById("what") !== null && document.readyState === "complete"`)
		if got := eval(`[document.getElementById("what").textContent]`); !strings.Contains(got[0], "DONE") || !strings.Contains(got[0], `{"charge":"ch_9"}`) {
			t.Errorf("confirmation says %q; want the resolution and its result", got[0])
		}
		if r, _, _ := j.LoadRun(context.Background(), parkedID); r.Status != journal.StatusNeedsAttention {
			t.Fatalf("run %s is %s before the confirmation; want needs_attention", parkedID, r.Status)
		}
		step("confirm", chromedp.Click(chromedp.ID("confirm")))
		until(`document.getElementById("back") !== null && document.readyState === "complete"`)
		if got := eval(`Array.from(document.querySelectorAll("#message, #error")).map(e => e.id + ": " + e.textContent)`); len(got) != 1 || !strings.Contains(got[0], "message: run order-1042: step Charge resolved done") {
			t.Errorf("after confirming: %v", got)
		}
		_, steps, _ := j.LoadRun(context.Background(), parkedID)
		if r, _, _ := j.LoadRun(context.Background(), parkedID); r.Status != journal.StatusPending || len(steps) != 2 || string(steps[1].Result) != `{"charge":"ch_9"}` && string(steps[0].Result) != `{"charge":"ch_9"}` {
			t.Errorf("run %s is %s with steps %+v; want pending, Charge resolved with the result", parkedID, r.Status, steps)
		}
	})

	t.Run("forking a run from a step", func(t *testing.T) {
		d.t = t
		step("open the failed run", chromedp.Navigate(root+"run?id="+failedID), chromedp.WaitVisible(chromedp.ID("do-fork")))
		step("fork from Ship", chromedp.SetValue(chromedp.ID("fork-step"), "Ship"), chromedp.Click(chromedp.ID("do-fork")))
		until(`document.getElementById("what") !== null && document.readyState === "complete"`)
		if got := eval(`[document.getElementById("what").textContent]`); !strings.Contains(got[0], "Fork run "+failedID+" from step Ship") {
			t.Errorf("confirmation says %q; want the fork and its step", got[0])
		}
		fork := journal.ForkID(failedID, 1)
		if _, _, err := j.LoadRun(context.Background(), fork); !errors.Is(err, journal.ErrRunNotFound) {
			t.Fatalf("run %s before the confirmation: %v; want none", fork, err)
		}
		step("confirm", chromedp.Click(chromedp.ID("confirm")))
		until(`document.getElementById("back") !== null && document.readyState === "complete"`)
		if got := eval(`Array.from(document.querySelectorAll("#message, #error")).map(e => e.id + ": " + e.textContent)`); len(got) != 1 || !strings.Contains(got[0], "message: run "+failedID+" forked to "+fork) {
			t.Errorf("after confirming: %v", got)
		}
		if r, steps, err := j.LoadRun(context.Background(), fork); err != nil || r.Status != journal.StatusPending || len(steps) != 1 || steps[0].StepKey != "Reserve" {
			t.Errorf("the fork: %s, %d steps, %v; want pending with Reserve copied", r.Status, len(steps), err)
		}
	})

	t.Run("a refused action says why", func(t *testing.T) {
		d.t = t
		step("open the failed run", chromedp.Navigate(root+"run?id="+failedID), chromedp.WaitVisible(chromedp.ID("do-retry")))
		step("retry", chromedp.Click(chromedp.ID("do-retry")))
		until(`document.getElementById("confirm") !== null && document.readyState === "complete"`)
		// Someone else retries the run while the confirmation is shown.
		// (Before the click instead, the run page, which follows the run
		// live, could redraw without its retry button under the click.)
		if err := j.Retry(context.Background(), failedID); err != nil {
			t.Fatal(err)
		}
		step("confirm", chromedp.Click(chromedp.ID("confirm")))
		until(`document.getElementById("error") !== null && document.readyState === "complete"`)
		if got := eval(`[document.getElementById("error").textContent]`); !strings.Contains(got[0], "not failed") {
			t.Errorf("retrying a run no longer failed says %q; want the journal's refusal", got[0])
		}
	})

	t.Run("the page follows the run live", func(t *testing.T) {
		d.t = t
		id := "live-1"
		l := entered(t, j, id, time.Now())
		step("open the running run", chromedp.Navigate(root+"run?id="+id), chromedp.WaitVisible(chromedp.ID("status")))
		write(t, j, l, journal.StepRecord{StepKey: "Reserve", Name: "Reserve", Status: journal.StepSucceeded, Result: []byte(`{"hold":"h-live"}`), Attempt: 1, Seq: 1, StartedAt: time.Now(), FinishedAt: time.Now()})
		until(`document.querySelector('tr.step[data-key="Reserve"]') !== null`)
		until(`Array.from(document.querySelectorAll("#graph-svg svg .node.succeeded.current")).map(n => n.textContent.trim()).join() === "Reserve"`) // redrawn after the live update
		if err := j.FinishRun(context.Background(), l, journal.RunRecord{RunID: id, Status: journal.StatusSucceeded, Output: []byte(`"ok"`)}); err != nil {
			t.Fatal(err)
		}
		until(`document.getElementById("status").textContent === "succeeded"`)
	})
}

// driver runs actions in the browser for the subtest t.
type driver struct {
	t   *testing.T
	ctx context.Context
}

// step runs actions, failing the test with what on an error.
func (d *driver) step(what string, a ...chromedp.Action[chromedp.Void]) {
	d.t.Helper()
	tctx, cancel := context.WithTimeout(d.ctx, 20*time.Second)
	defer cancel()
	if err := chromedp.Do(tctx, a...); err != nil {
		d.t.Fatalf("%s: %v", what, err)
	}
}

// eval evaluates js, a list of strings, in the page.
func (d *driver) eval(js string) []string {
	d.t.Helper()
	v, err := chromedp.Run(d.ctx, chromedp.Evaluate[[]string](js))
	if err != nil {
		d.t.Fatalf("evaluate %s: %v", js, err)
	}
	return v
}

// until waits for cond (JavaScript) to hold in the page, across page
// loads, which cut a chromedp.Poll short.
func (d *driver) until(cond string) {
	d.t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	var err error
	for time.Now().Before(deadline) {
		var ok bool
		if ok, err = chromedp.Run(d.ctx, chromedp.Evaluate[bool](cond)); err == nil && ok {
			return
		}
		time.Sleep(30 * time.Millisecond)
	}
	d.t.Fatalf("waited 15s for %s (last error %v)", cond, err)
}

// ids are the run ids the page's list shows.
func (d *driver) ids() []string {
	return d.eval(`Array.from(document.querySelectorAll("td.id a")).map(a => a.textContent)`)
}

// jsString quotes s for a JavaScript expression.
func jsString(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`, "\n", `\n`).Replace(s) + "'"
}

// screenshot writes the page to docs/name.
func screenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	if err := os.WriteFile(filepath.Join("..", "..", "docs", name), png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote docs/%s (%d bytes)", name, len(png))
}

// rebindingPage is an attacker's page, as served under the attacker's
// name once that name resolves to 127.0.0.1: from the page's origin the
// UI's paths are same-origin. It reads a run's page and posts a cancel
// with the token (the worst case: the attacker has it), and leaves what
// it got in the body's data-out.
const rebindingPage = `<!doctype html><body><script>
(async () => {
  const out = [];
  try { const r = await fetch("/ops/run?id=%[1]s"); out.push("read " + r.status + " " + (await r.text()).includes("h-77")); } catch (e) { out.push("read error"); }
  try { const r = await fetch("/ops/action", {method: "POST", headers: {"Content-Type": "application/x-www-form-urlencoded"},
      body: "action=cancel&confirm=yes&id=%[1]s&csrf=%[2]s"}); out.push("cancel " + r.status); } catch (e) { out.push("cancel error"); }
  document.body.dataset.out = out.join("|");
})();
</script></body>`

// TestBrowserDNSRebinding is issue 20's attack: a page of the attacker's
// name (evil.test, resolved to 127.0.0.1 by --host-resolver-rules, as
// DNS rebinding makes it) reaches the UI on 127.0.0.1 same-origin. The
// UI refuses its every request by Host: the page cannot read a run nor
// cancel it. A UI told to allow that name (the control) is read and
// acted on: the test sees the attack when the check is missing.
func TestBrowserDNSRebinding(t *testing.T) {
	ctx := browser(t, chromedp.Flag("host-resolver-rules", "MAP evil.test 127.0.0.1"))
	for _, c := range []struct {
		name  string
		allow []string
		want  string
	}{
		{"the UI refuses the attacker's name", nil, "read 403 false|cancel 403"},
		{"control: a UI that allows the name is attacked", []string{"evil.test"}, "read 200 true|cancel 200"},
	} {
		t.Run(c.name, func(t *testing.T) {
			j := openSQLite(t)
			seed(t, j, 1)
			ui := Handler(j, Options{Write: true, AllowHosts: c.allow})
			mux := http.NewServeMux()
			mux.Handle("/ops/", http.StripPrefix("/ops", ui))
			var token string
			mux.HandleFunc("/evil.html", func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/html; charset=utf-8")
				fmt.Fprintf(w, rebindingPage, parkedID, token)
			})
			srv := httptest.NewServer(mux)
			defer srv.Close()
			_, page := get(t, srv.URL+"/ops/run?id="+parkedID)
			token = tokenRE.FindStringSubmatch(page)[1]
			evil := strings.Replace(srv.URL, "127.0.0.1", "evil.test", 1)
			d := &driver{t: t, ctx: ctx}
			d.step("open the UI by the attacker's name", chromedp.Navigate(evil+"/ops/"))
			body := d.eval(`[document.body.textContent]`)[0]
			if refused := strings.Contains(body, "not one this UI serves"); refused != (c.allow == nil) || strings.Contains(body, parkedID) && c.allow == nil {
				t.Errorf("the UI by the attacker's name shows %q", body)
			}
			d.step("visit the attacker's page", chromedp.Navigate(evil+"/evil.html"))
			d.until(`document.body.dataset.out !== undefined`)
			if got := d.eval(`[document.body.dataset.out]`)[0]; got != c.want {
				t.Errorf("the attacker's page got %q; want %q", got, c.want)
			}
			r, _, _ := j.LoadRun(context.Background(), parkedID)
			if cancelled := r.Status == journal.StatusCancelled; cancelled != (c.allow != nil) {
				t.Errorf("run %s is %s after the attack", parkedID, r.Status)
			}
		})
	}
}

// TestBrowserSignInRequired: with Auth (resumectl ui -public needs it),
// a browser without credentials lands on the login form and sees no run;
// a wrong secret is refused; the right one signs in with a cookie that
// the page's scripts cannot read (HttpOnly), and signing out ends it.
func TestBrowserSignInRequired(t *testing.T) {
	ctx := browser(t)
	j := openSQLite(t)
	seed(t, j, 3)
	srv := serve(t, j, Options{Write: true, Auth: Auth{Secret: "correct horse battery staple"}})
	root := srv.URL + "/ops/"
	d := &driver{t: t, ctx: ctx}
	d.step("open a run without credentials", chromedp.Navigate(root+"run?id="+parkedID))
	d.until(`document.getElementById("login-form") !== null`)
	if got := d.eval(`[location.pathname, String(document.body.textContent.includes("h-77") || document.body.textContent.includes("` + parkedID + `"))]`); got[0] != "/ops/login" || got[1] != "false" {
		t.Errorf("without credentials: at %s, run shown %s; want the login form at /ops/login, no run", got[0], got[1])
	}
	d.step("sign in with a wrong secret", chromedp.SetValue(chromedp.ID("login-secret"), "guess"), chromedp.Click(chromedp.ID("login")))
	d.until(`document.getElementById("error") !== null && document.readyState === "complete"`)
	if got := d.eval(`[document.getElementById("error").textContent]`)[0]; !strings.Contains(got, "wrong token or password") {
		t.Errorf("a wrong secret: %q", got)
	}
	d.step("sign in", chromedp.SetValue(chromedp.ID("login-name"), "ada"), chromedp.SetValue(chromedp.ID("login-secret"), "correct horse battery staple"),
		chromedp.Click(chromedp.ID("login")))
	d.until(`document.getElementById("runs") !== null && document.readyState === "complete"`)
	if got := d.eval(`[String(document.querySelectorAll("td.id a").length), document.cookie]`); got[0] == "0" || strings.Contains(got[1], sessionCookie) {
		t.Errorf("signed in: %s runs listed, document.cookie %q; want the runs, and the session cookie out of scripts' reach", got[0], got[1])
	}
	d.step("sign out", chromedp.Click(chromedp.ID("logout")))
	d.until(`document.getElementById("login-form") !== null && document.readyState === "complete"`)
	d.step("open the list again", chromedp.Navigate(root))
	d.until(`document.getElementById("login-form") !== null`)
}
