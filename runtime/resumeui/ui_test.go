package resumeui

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/resumegen/resumegen/runtime/journal"
)

// serve mounts the UI under /ops/, as a service would.
func serve(t *testing.T, j journal.Journal, opts Options) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	mux.Handle("/ops/", http.StripPrefix("/ops", Handler(j, opts)))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func get(t *testing.T, u string) (int, string) {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestMarkupRendersAsText(t *testing.T) {
	j := openSQLite(t)
	seed(t, j, 3)
	srv := serve(t, j, Options{Write: true})
	for _, u := range []string{srv.URL + "/ops/", srv.URL + "/ops/run?id=" + url.QueryEscape(markupID)} {
		code, body := get(t, u)
		if code != 200 {
			t.Fatalf("GET %s = %d\n%s", u, code, body)
		}
		if strings.Contains(body, "<script>alert") || strings.Contains(body, "<img src=x") || strings.Contains(body, "<b>bold") {
			t.Errorf("GET %s: markup of a run's id or input rendered as markup:\n%s", u, body)
		}
		if !strings.Contains(body, "&lt;script&gt;alert(&#34;id&#34;)&lt;/script&gt;") {
			t.Errorf("GET %s: the escaped run id is missing", u)
		}
	}
	code, body := get(t, srv.URL+"/ops/run?id="+url.QueryEscape("<i>nope</i>"))
	if code != http.StatusNotFound || strings.Contains(body, "<i>nope") || !strings.Contains(body, "&lt;i&gt;nope") {
		t.Errorf("GET an unknown run whose id holds markup = %d; want 404 naming the id as text\n%s", code, body)
	}
	code, body = get(t, srv.URL+"/ops/?status=%3Cb%3Ebogus")
	if code != http.StatusBadRequest || strings.Contains(body, "<b>bogus") {
		t.Errorf("GET the list with a bogus status = %d; want 400 naming it as text\n%s", code, body)
	}
}

func TestReadOnlyRendersNoActionAndRefusesPosts(t *testing.T) {
	j := openSQLite(t)
	seed(t, j, 1)
	srv := serve(t, j, Options{})
	_, body := get(t, srv.URL+"/ops/run?id="+parkedID)
	if strings.Contains(body, `action="action"`) || strings.Contains(body, "csrf") {
		t.Errorf("read-only run page renders an action form:\n%s", body)
	}
	resp, err := http.PostForm(srv.URL+"/ops/action", url.Values{"action": {"cancel"}, "id": {parkedID}, "confirm": {"yes"}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("POST to a read-only UI = %d; want 403", resp.StatusCode)
	}
	if r, _, _ := j.LoadRun(context.Background(), parkedID); r.Status != journal.StatusNeedsAttention {
		t.Errorf("run %s is %s after a refused POST; want needs_attention", parkedID, r.Status)
	}
}

var tokenRE = regexp.MustCompile(`name="csrf" value="([0-9a-f]+)"`)

func TestCrossSitePostsAreRefused(t *testing.T) {
	j := openSQLite(t)
	seed(t, j, 1)
	srv := serve(t, j, Options{Write: true})
	_, body := get(t, srv.URL+"/ops/run?id="+parkedID)
	m := tokenRE.FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("write-mode run page has no CSRF token:\n%s", body)
	}
	form := url.Values{"csrf": {m[1]}, "action": {"cancel"}, "id": {parkedID}, "confirm": {"yes"}}
	post := func(form url.Values, hdr map[string]string) int {
		req, _ := http.NewRequest("POST", srv.URL+"/ops/action", strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	bad := url.Values{}
	for k, v := range form {
		bad[k] = v
	}
	bad.Set("csrf", strings.Repeat("0", 64))
	for name, c := range map[string]struct {
		form url.Values
		hdr  map[string]string
	}{
		"cross-site fetch": {form, map[string]string{"Sec-Fetch-Site": "cross-site", "Origin": "https://evil.example"}},
		"same-site fetch":  {form, map[string]string{"Sec-Fetch-Site": "same-site"}},
		"foreign origin":   {form, map[string]string{"Origin": "https://evil.example"}},
		"wrong token":      {bad, nil},
		"no token":         {url.Values{"action": {"cancel"}, "id": {parkedID}, "confirm": {"yes"}}, nil},
	} {
		if code := post(c.form, c.hdr); code != http.StatusForbidden {
			t.Errorf("%s: POST = %d; want 403", name, code)
		}
	}
	if r, _, _ := j.LoadRun(context.Background(), parkedID); r.Status != journal.StatusNeedsAttention {
		t.Fatalf("run %s is %s after refused POSTs; want needs_attention", parkedID, r.Status)
	}
	if code := post(form, map[string]string{"Sec-Fetch-Site": "same-origin", "Origin": srv.URL}); code != 200 {
		t.Errorf("same-origin POST with the token = %d; want 200", code)
	}
	if r, _, _ := j.LoadRun(context.Background(), parkedID); r.Status != journal.StatusCancelled {
		t.Errorf("run %s is %s after a confirmed cancel; want cancelled", parkedID, r.Status)
	}
}

var nextRE = regexp.MustCompile(`href="([^"]+)" id="next"`)
var rowRE = regexp.MustCompile(`<td class="id"><a href="[^"]+">([^<]+)</a>`)

// TestPagingListsEveryRunOnce follows the next-page links of the list
// filtered to one workflow and checks they list every run once, newest
// first.
func TestPagingListsEveryRunOnce(t *testing.T) {
	j := openSQLite(t)
	plain := seed(t, j, 23)
	srv := serve(t, j, Options{PageSize: 5})
	u := srv.URL + "/ops/?workflow=example.com%2Fbatch.Sync"
	var got []string
	for pages := 0; u != ""; pages++ {
		if pages > 10 {
			t.Fatal("more than 10 pages")
		}
		code, body := get(t, u)
		if code != 200 {
			t.Fatalf("GET %s = %d", u, code)
		}
		for _, m := range rowRE.FindAllStringSubmatch(body, -1) {
			got = append(got, m[1])
		}
		u = ""
		if m := nextRE.FindStringSubmatch(body); m != nil {
			u = srv.URL + "/ops/" + strings.TrimPrefix(strings.ReplaceAll(m[1], "&amp;", "&"), "./")
		}
	}
	if strings.Join(got, " ") != strings.Join(plain, " ") {
		t.Errorf("pages list\n%v\nwant\n%v", got, plain)
	}
}

// TestActionsThatApply: a run waiting for a signal offers signal, one
// stopped on a version change offers the newer stored version; each
// acts once confirmed, through the checks resumectl makes.
func TestActionsThatApply(t *testing.T) {
	ctx := context.Background()
	j := openSQLite(t)
	seed(t, j, 0)
	waiting := entered(t, j, "waits-1", base)
	if err := j.FinishRun(ctx, waiting, journal.RunRecord{RunID: "waits-1", Status: journal.StatusWaiting, WaitKind: journal.WaitSignal, WaitName: "approval", UpdatedAt: base}); err != nil {
		t.Fatal(err)
	}
	stopped := entered(t, j, "stopped-1", base)
	if err := j.FinishRun(ctx, stopped, journal.RunRecord{RunID: "stopped-1", Status: journal.StatusNeedsAttention, AttentionKind: journal.AttentionKindVersion, Error: "version v2 is not the program's v3", UpdatedAt: base}); err != nil {
		t.Fatal(err)
	}
	if err := j.SaveManifest(ctx, journal.ManifestRecord{Workflow: shopWF, Version: "v3", Manifest: "Reserve\nCharge\nShip\nNotify\n", CreatedAt: base}); err != nil {
		t.Fatal(err)
	}
	srv := serve(t, j, Options{Write: true})
	for _, c := range []struct {
		id, button string
		form       url.Values
		want       journal.Status
		version    string
	}{
		{"waits-1", `id="do-signal"`, url.Values{"action": {"signal"}, "name": {"approval"}, "payload": {`{"ok":true}`}}, journal.StatusPending, "v2"},
		{"stopped-1", `id="do-accept"`, url.Values{"action": {"accept"}, "version": {"v3"}}, journal.StatusPending, "v3"},
	} {
		_, body := get(t, srv.URL+"/ops/run?id="+c.id)
		if !strings.Contains(body, c.button) || strings.Contains(body, `id="do-retry"`) || strings.Contains(body, `id="do-resolve"`) {
			t.Errorf("run %s: page lacks %s or offers an action that does not apply", c.id, c.button)
		}
		form := c.form
		form.Set("id", c.id)
		form.Set("csrf", tokenRE.FindStringSubmatch(body)[1])
		resp, err := http.PostForm(srv.URL+"/ops/action", form)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if r, _, _ := j.LoadRun(ctx, c.id); r.Status == c.want || !strings.Contains(string(b), `name="confirm" value="yes"`) {
			t.Errorf("run %s: the first POST acted (status %s) or asked no confirmation", c.id, r.Status)
		}
		form.Set("confirm", "yes")
		resp, err = http.PostForm(srv.URL+"/ops/action", form)
		if err != nil {
			t.Fatal(err)
		}
		b, _ = io.ReadAll(resp.Body)
		resp.Body.Close()
		if r, _, _ := j.LoadRun(ctx, c.id); resp.StatusCode != 200 || r.Status != c.want || r.Version != c.version {
			t.Errorf("run %s after the confirmed %s: %d, %s %s; want 200, %s %s\n%s", c.id, c.form.Get("action"), resp.StatusCode, r.Status, r.Version, c.want, c.version, b)
		}
	}
	form := url.Values{"action": {"signal"}, "id": {"waits-1"}, "name": {"x"}, "payload": {"{not json"}, "confirm": {"yes"}}
	_, page := get(t, srv.URL+"/ops/run?id="+failedID)
	form.Set("csrf", tokenRE.FindStringSubmatch(page)[1])
	resp, err := http.PostForm(srv.URL+"/ops/action", form)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(b), "not valid JSON") {
		t.Errorf("a signal with a payload that is not JSON: %d; want 400 saying so\n%s", resp.StatusCode, b)
	}
}
