package resumeui

import (
	"context"
	"database/sql"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/resumegen/resumegen/internal/termesc"
	"github.com/resumegen/resumegen/runtime/journal"
	"github.com/resumegen/resumegen/runtime/resume"
)

const secret = "correct horse battery staple"

// request sends r to h as from remote and returns the response.
func request(h http.Handler, method, target, host, remote string, form url.Values, hdr http.Header) *http.Response {
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	r := httptest.NewRequest(method, target, body)
	r.Host = host
	if remote != "" {
		r.RemoteAddr = remote
	}
	if form != nil {
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for k, v := range hdr {
		r.Header[k] = v
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w.Result()
}

func bodyOf(resp *http.Response) string {
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// TestWrongHostRefusedBeforeReading: issue 20's DNS rebinding. A request
// whose Host is a name the UI does not serve is refused, on every path
// and method, before the journal is read; loopback, localhost and the
// allowed names pass.
func TestWrongHostRefusedBeforeReading(t *testing.T) {
	j := openSQLite(t)
	seed(t, j, 1)
	h := Handler(j, Options{Write: true, AllowHosts: []string{"ops.example.com"}})
	for _, host := range []string{"evil.example:8080", "evil.example", "127.0.0.1.evil.example:80", "localhost.evil.example", "", "ops.example.com.evil:8080", "0.0.0.0:8080", "10.0.0.1:8080"} {
		for _, path := range []string{"/", "/run?id=" + parkedID, "/static/style.css", "/login"} {
			reads := j.Counters().Reads
			resp := request(h, "GET", path, host, "", nil, nil)
			body := bodyOf(resp)
			if resp.StatusCode != http.StatusForbidden || !strings.Contains(body, "not one this UI serves") || strings.Contains(body, "h-77") {
				t.Errorf("GET %s, Host %q: %d %q; want 403 naming the host", path, host, resp.StatusCode, body)
			}
			if n := j.Counters().Reads - reads; n != 0 {
				t.Errorf("GET %s, Host %q: %d journal reads before the refusal, want 0", path, host, n)
			}
		}
		resp := request(h, "POST", "/action", host, "", url.Values{"action": {"cancel"}, "id": {parkedID}, "confirm": {"yes"}}, nil)
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("POST /action, Host %q: %d; want 403", host, resp.StatusCode)
		}
	}
	for _, host := range []string{"127.0.0.1:8080", "127.0.0.1", "127.9.8.7:1", "[::1]:8080", "[::1]", "localhost:3000", "LOCALHOST", "localhost.", "ops.example.com", "OPS.example.com:443"} {
		if resp := request(h, "GET", "/", host, "", nil, nil); resp.StatusCode != 200 {
			t.Errorf("GET /, Host %q: %d; want 200", host, resp.StatusCode)
		}
	}
	if r, _, _ := j.LoadRun(context.Background(), parkedID); r.Status != journal.StatusNeedsAttention {
		t.Errorf("run %s is %s after refused requests", parkedID, r.Status)
	}
}

// clock is a settable clock for session expiry.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) { c.mu.Lock(); defer c.mu.Unlock(); c.t = c.t.Add(d) }

// TestAuthRequiresCredentials: with Auth.Secret, every page without a
// session goes to the login form and every POST is refused; a wrong
// secret is refused; the right one sets an HttpOnly, SameSite=Strict
// session cookie scoped to the mount point, Secure when asked, which
// expires; a secret in the URL signs nobody in; a Bearer token works.
func TestAuthRequiresCredentials(t *testing.T) {
	j := openSQLite(t)
	seed(t, j, 1)
	clk := &clock{t: time.Now()}
	h := http.StripPrefix("/ops", Handler(j, Options{Write: true, Now: clk.now, Auth: Auth{Secret: secret, SessionTTL: time.Hour, SecureCookie: true}}))
	const host = "127.0.0.1:8080"
	for _, target := range []string{"/ops/", "/ops/run?id=" + parkedID, "/ops/?secret=" + url.QueryEscape(secret), "/ops/run?id=" + parkedID + "&token=" + url.QueryEscape(secret)} {
		resp := request(h, "GET", target, host, "", nil, nil)
		if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "login" || strings.Contains(bodyOf(resp), parkedID) {
			t.Errorf("GET %s without a session: %d to %q; want 303 to login, no run", target, resp.StatusCode, resp.Header.Get("Location"))
		}
	}
	if resp := request(h, "POST", "/ops/action", host, "", url.Values{"action": {"cancel"}, "id": {parkedID}, "confirm": {"yes"}}, nil); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("POST /action without a session: %d; want 401", resp.StatusCode)
	}
	if resp := request(h, "GET", "/ops/login", host, "", nil, nil); resp.StatusCode != 200 || !strings.Contains(bodyOf(resp), `id="login-form"`) {
		t.Errorf("GET /login: %d; want the form", resp.StatusCode)
	}
	for _, bad := range []string{"", "wrong", secret + " ", strings.ToUpper(secret)} {
		resp := request(h, "POST", "/ops/login", host, "", url.Values{"secret": {bad}, "name": {"mallory"}}, nil)
		if resp.StatusCode != http.StatusUnauthorized || len(resp.Cookies()) != 0 {
			t.Errorf("login with %q: %d, cookies %v; want 401, none", bad, resp.StatusCode, resp.Cookies())
		}
	}
	resp := request(h, "POST", "/ops/login", host, "", url.Values{"secret": {secret}, "name": {"ada"}}, nil)
	cs := resp.Cookies()
	if resp.StatusCode != http.StatusSeeOther || len(cs) != 1 {
		t.Fatalf("login with the secret: %d, cookies %v; want 303 and a session cookie", resp.StatusCode, cs)
	}
	c := cs[0]
	if c.Name != sessionCookie || !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || !c.Secure || c.Path != "/ops/" || strings.Contains(c.Value, secret) {
		t.Errorf("session cookie %+v; want HttpOnly, SameSite=Strict, Secure, Path /ops/, not the secret", c)
	}
	withCookie := http.Header{"Cookie": {c.Name + "=" + c.Value}}
	resp = request(h, "GET", "/ops/run?id="+parkedID, host, "", nil, withCookie)
	page := bodyOf(resp)
	if resp.StatusCode != 200 || !strings.Contains(page, "h-77") {
		t.Fatalf("GET the run signed in: %d", resp.StatusCode)
	}
	token := tokenRE.FindStringSubmatch(page)[1]
	resp = request(h, "POST", "/ops/action", host, "192.0.2.7:4242", url.Values{"csrf": {token}, "action": {"cancel"}, "id": {parkedID}, "confirm": {"yes"}}, withCookie)
	if resp.StatusCode != 200 {
		t.Fatalf("cancel signed in: %d %s", resp.StatusCode, bodyOf(resp))
	}
	acts, err := journal.Find[journal.Auditor](j)
	if !err {
		t.Fatal("no auditor")
	}
	as, _ := acts.ListActions(context.Background(), parkedID)
	if len(as) != 1 || as[0].Actor != "ada (signed in)" || as[0].Origin != "192.0.2.7:4242" || as[0].Via != "ui" || as[0].Action != "cancel" {
		t.Errorf("recorded actions %+v; want ada's cancel from 192.0.2.7:4242 via the ui", as)
	}
	if page := bodyOf(request(h, "GET", "/ops/run?id="+parkedID, host, "", nil, withCookie)); !strings.Contains(page, `id="audit"`) || !strings.Contains(page, "ada (signed in)") {
		t.Errorf("the run's page does not show the action")
	}
	clk.add(time.Hour + time.Second)
	if resp := request(h, "GET", "/ops/", host, "", nil, withCookie); resp.StatusCode != http.StatusSeeOther {
		t.Errorf("GET with an expired session: %d; want 303 to login", resp.StatusCode)
	}
	bearer := http.Header{"Authorization": {"Bearer " + secret}}
	if resp := request(h, "GET", "/ops/", host, "", nil, bearer); resp.StatusCode != 200 {
		t.Errorf("GET with the bearer token: %d; want 200", resp.StatusCode)
	}
	if resp := request(h, "GET", "/ops/", host, "", nil, http.Header{"Authorization": {"Bearer nope"}}); resp.StatusCode != http.StatusSeeOther {
		t.Errorf("GET with a wrong bearer token: %d; want 303 to login", resp.StatusCode)
	}
}

// TestProxyHeaderTrustedOnlyFromProxies: the user header a reverse proxy
// sets is believed from a trusted proxy's address and refused from any
// other; a request from the proxy without it must sign in.
func TestProxyHeaderTrustedOnlyFromProxies(t *testing.T) {
	j := openSQLite(t)
	seed(t, j, 1)
	h := Handler(j, Options{Write: true, AllowHosts: []string{"ops.example.com"},
		Auth: Auth{ProxyHeader: "X-Forwarded-User", TrustedProxies: []netip.Prefix{netip.MustParsePrefix("10.1.0.0/16")}}})
	user := http.Header{"X-Forwarded-User": {"grace"}, "X-Forwarded-For": {"203.0.113.9"}}
	for _, remote := range []string{"192.0.2.1:5000", "127.0.0.1:5000", "10.2.0.1:5000"} {
		resp := request(h, "GET", "/", "ops.example.com", remote, nil, user)
		if resp.StatusCode != http.StatusForbidden || !strings.Contains(bodyOf(resp), "not a trusted proxy") {
			t.Errorf("X-Forwarded-User from %s: %d; want 403", remote, resp.StatusCode)
		}
	}
	if resp := request(h, "GET", "/", "ops.example.com", "10.1.2.3:5000", nil, nil); resp.StatusCode != http.StatusSeeOther {
		t.Errorf("the proxy without the header: %d; want 303 to login", resp.StatusCode)
	}
	if page := bodyOf(request(h, "GET", "/login", "ops.example.com", "10.1.2.3:5000", nil, nil)); strings.Contains(page, `id="login-form"`) || !strings.Contains(page, "X-Forwarded-User") {
		t.Errorf("the login page of a proxy-only UI offers a token form, or does not name the proxy's header:\n%s", page)
	}
	resp := request(h, "GET", "/run?id="+parkedID, "ops.example.com", "10.1.2.3:5000", nil, user)
	page := bodyOf(resp)
	if resp.StatusCode != 200 {
		t.Fatalf("the proxy with the header: %d", resp.StatusCode)
	}
	form := url.Values{"csrf": {tokenRE.FindStringSubmatch(page)[1]}, "action": {"cancel"}, "id": {parkedID}, "confirm": {"yes"}}
	if resp := request(h, "POST", "/action", "ops.example.com", "10.1.2.3:5000", form, user); resp.StatusCode != 200 {
		t.Fatalf("cancel through the proxy: %d", resp.StatusCode)
	}
	au, _ := journal.Find[journal.Auditor](j)
	as, _ := au.ListActions(context.Background(), parkedID)
	if len(as) != 1 || as[0].Actor != "grace (via proxy)" || as[0].Origin != "203.0.113.9 via proxy 10.1.2.3:5000" {
		t.Errorf("recorded %+v; want grace via the proxy, from the forwarded address", as)
	}
}

func TestAuthCheck(t *testing.T) {
	for _, a := range []Auth{
		{ProxyHeader: "X-Forwarded-User"},
		{TrustedProxies: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}},
		{Secret: "short"},
	} {
		if a.Check() == nil {
			t.Errorf("Auth %+v passes Check", a)
		}
		j := openSQLite(t)
		if resp := request(Handler(j, Options{Auth: a}), "GET", "/", "127.0.0.1", "", nil, nil); resp.StatusCode != http.StatusInternalServerError {
			t.Errorf("a UI with Auth %+v serves: %d", a, resp.StatusCode)
		}
	}
}

// TestHostileStringsRenderInert renders runs whose id, workflow, version,
// steps, errors and results hold each of termesc.Samples: no markup of
// theirs becomes markup, and no control, bidi or colour character reaches
// the page raw.
func TestHostileStringsRenderInert(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "journal.db")
	j := openAt(t, path)
	seed(t, j, 0)
	var ids []string
	forged := map[string]string{} // id the journal stores → the hostile one
	for i, s := range termesc.Samples {
		id := "h" + string(rune('a'+i)) + "-" + s
		if safe := strings.ToValidUTF8(strings.ReplaceAll(id, "\x00", "NUL"), "?"); safe != id {
			// The journal refuses such an id where input enters; a row
			// forged by SQL can hold it: written after, below.
			forged[safe] = id
			id = safe
		}
		l := entered(t, j, id, base)
		res, _ := json.Marshal(s)
		key := strings.ToValidUTF8(strings.ReplaceAll(s, "\x00", "NUL"), "?") // a key is checked as an id
		write(t, j, l, journal.StepRecord{StepKey: "Reserve" + key, Name: "Reserve", Status: journal.StepSucceeded, Result: res, Attempt: 1, Seq: 1, StartedAt: base, FinishedAt: base,
			History: []journal.AttemptRecord{{Attempt: 1, StartedAt: base, Error: "attempt " + s}}})
		write(t, j, l, journal.StepRecord{StepKey: "Ship", Name: "Ship", Status: journal.StepFailed, Final: true, Error: "ship " + s, Attempt: 1, Seq: 2, StartedAt: base, FinishedAt: base})
		if err := j.FinishRun(ctx, l, journal.RunRecord{RunID: id, Status: journal.StatusFailed, FailedStep: "Ship", Error: "failed " + s, UpdatedAt: base}); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	for safe, hostile := range forged {
		for _, table := range []string{"resume_runs", "resume_steps"} {
			if _, err := db.Exec("UPDATE "+table+" SET run_id = ? WHERE run_id = ?", hostile, safe); err != nil {
				t.Fatal(err)
			}
		}
		for i := range ids {
			if ids[i] == safe {
				ids[i] = hostile
			}
		}
	}
	db.Close()
	srv := serve(t, j, Options{Write: true})
	pages := []string{srv.URL + "/ops/"}
	for _, id := range ids {
		pages = append(pages, srv.URL+"/ops/run?id="+url.QueryEscape(id))
	}
	for _, u := range pages {
		code, body := get(t, u)
		if code != 200 {
			t.Fatalf("GET %s: %d", u, code)
		}
		if strings.Contains(body, "<script>alert") || strings.Contains(body, "<img src=x") {
			t.Errorf("GET %s: a value's markup rendered as markup", u)
		}
		// The text a person reads: outside tags (attributes keep a run's
		// id as it is, for the forms that act on it).
		text := tagRE.ReplaceAllString(body, "")
		for _, r := range text {
			if termesc.Hostile(r) && r != '\n' && r != '\t' {
				t.Errorf("GET %s: %U reached the page raw", u, r)
				break
			}
		}
	}
}

var tagRE = regexp.MustCompile(`<[^>]*>`)

// TestSignalFormPrefilled: the signal form of a run awaiting an event is
// prefilled with a JSON skeleton of what the await takes, from the
// version's manifest, not null (which a struct payload refuses).
func TestSignalFormPrefilled(t *testing.T) {
	ctx := context.Background()
	j := openSQLite(t)
	seed(t, j, 0)
	if err := j.SaveManifest(ctx, journal.ManifestRecord{Workflow: "example.com/shop.Approve", Version: "a1", CreatedAt: base,
		Manifest: "approval: journals Decision\napproval: result Decision: approved bool\napproval: result Decision: by string\n"}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := j.CreateRun(ctx, journal.RunRecord{RunID: "a-1", Workflow: "example.com/shop.Approve", Version: "a1", Input: []byte("[]"),
		CreatedAt: base, UpdatedAt: base, LeaseOwner: "w", LeaseUntil: base.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if err := j.FinishRun(ctx, journal.Lease{RunID: "a-1", Owner: "w", Epoch: 1}, journal.RunRecord{RunID: "a-1", Status: journal.StatusWaiting, WaitKind: journal.WaitSignal, WaitName: "approval"}); err != nil {
		t.Fatal(err)
	}
	srv := serve(t, j, Options{Write: true})
	_, body := get(t, srv.URL+"/ops/run?id=a-1")
	if !strings.Contains(body, `value="{&#34;approved&#34;:false,&#34;by&#34;:&#34;&#34;}" id="signal-payload"`) || !strings.Contains(body, "a Decision") {
		t.Errorf("the signal form is not prefilled with the Decision skeleton:\n%s", body)
	}
}

// TestTamperedSignalSaidOnThePage: on a sealed journal, a signal whose
// payload is plaintext (tampered) is said on the run's page, which still
// shows the run, rather than failing the page.
func TestTamperedSignalSaidOnThePage(t *testing.T) {
	ctx := context.Background()
	raw := openSQLite(t)
	seed(t, raw, 0)
	ring, err := resume.NewKeyring(resume.Key{ID: "k1", Secret: []byte("0123456789abcdef")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Signal(ctx, journal.SignalRecord{RunID: parkedID, Name: "approval", Payload: []byte(`{"forged":true}`)}); err != nil {
		t.Fatal(err)
	}
	srv := serve(t, resume.SealJournal(raw, ring), Options{})
	code, body := get(t, srv.URL+"/ops/run?id="+parkedID)
	if code != 200 || !strings.Contains(body, "tampered") || !strings.Contains(body, `id="run-id"`) || strings.Contains(body, "forged&#34;:true") {
		t.Errorf("the page of a run with a tampered signal: %d\n%s", code, body)
	}
}
