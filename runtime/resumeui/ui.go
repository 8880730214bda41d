// Package resumeui serves a web UI over a resumegen journal: the runs,
// filtered, searched and paged, each run's journal as a timeline with its
// step graph, and, when allowed, the operator's actions (resolve, retry,
// cancel, accept a version, signal) with the checks resumectl makes.
//
// [Handler] is an [http.Handler] a service mounts under a path of its own
// (http.StripPrefix("/ops", resumeui.Handler(j, opts)) under "/ops/");
// resumectl ui serves it alone. Pages are rendered on the server with
// html/template, which escapes every value; the little JavaScript that
// keeps a run's page live and draws its step graph (with a vendored
// Mermaid, assets/static/mermaid-11.17.2) is embedded and optional.
//
// The UI answers only to the host names it serves: loopback addresses and
// localhost, any port, and [Options.AllowHosts]. A request naming another
// host (a page of an attacker's name that resolves to 127.0.0.1: DNS
// rebinding) is refused (403) before anything is read from the journal.
// A request that is not GET or HEAD must come from the UI's own origin
// (net/http's CrossOriginProtection, on Sec-Fetch-Site and Origin), and
// an action needs [Options.Write], a POST carrying the page's CSRF token
// (which still guards browsers that send neither header) and a
// confirmation. [Options.Auth] makes every page ask for a sign-in (a
// token or password, then a session cookie: HttpOnly, SameSite=Strict,
// Secure over TLS), or believe the user a trusted reverse proxy names.
// Every action is recorded in the journal with who did it and from where
// (runops, resume_actions), and shown on the run's page.
package resumeui

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"embed"
	"encoding/hex"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"strings"
	"time"

	"github.com/resumegen/resumegen/runtime/journal"
)

// Options tunes [Handler].
type Options struct {
	// Write enables the actions that change runs. Without it the UI only
	// reads: it renders no action and refuses every POST.
	Write bool
	// PageSize is how many runs a page of the list shows (default 50).
	PageSize int
	// PreviewBytes cuts step results and inputs shown on a run's page
	// (default 300 bytes).
	PreviewBytes int
	// Poll is how often a run's page asks for its changes (default 1s).
	Poll time.Duration
	// Now is the clock (default time.Now).
	Now func() time.Time
	// AllowHosts lists the host names (or addresses) the UI answers to
	// beside loopback addresses and localhost, any port: the names it is
	// reached by through a network or a proxy.
	AllowHosts []string
	// Auth says who may use the UI; the zero value asks nobody.
	Auth Auth
}

//go:embed assets
var assets embed.FS

var pages = template.Must(template.New("").Funcs(funcs).ParseFS(assets, "assets/*.html"))

// ui is the handler: the journal, its options and the CSRF token its
// forms carry.
type ui struct {
	j        journal.Journal
	opts     Options
	token    string
	mux      *http.ServeMux
	cop      *http.CrossOriginProtection
	sessions sessions
	bad      error // what makes opts unusable: every request is refused
}

// Handler returns the UI over j. Its links are relative, so that it works
// under any path prefix stripped before it.
func Handler(j journal.Journal, opts Options) http.Handler {
	if opts.PageSize <= 0 {
		opts.PageSize = 50
	}
	if opts.PreviewBytes <= 0 {
		opts.PreviewBytes = 300
	}
	if opts.Poll <= 0 {
		opts.Poll = time.Second
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	u := &ui{j: j, opts: opts, token: newToken(), mux: http.NewServeMux(), cop: http.NewCrossOriginProtection(),
		sessions: sessions{m: map[string]session{}}, bad: opts.Auth.Check()}
	static, _ := fs.Sub(assets, "assets/static")
	u.mux.Handle("GET /static/", http.StripPrefix("/static/", http.FileServerFS(static)))
	u.mux.HandleFunc("GET /{$}", u.list)
	u.mux.HandleFunc("GET /run", u.run)
	u.mux.HandleFunc("POST /action", u.action)
	u.mux.HandleFunc("GET /login", u.login)
	u.mux.HandleFunc("POST /login", u.login)
	u.mux.HandleFunc("POST /logout", u.logout)
	return u
}

func newToken() string {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		panic("resumeui: no randomness for the CSRF token: " + err.Error())
	}
	return hex.EncodeToString(b)
}

// ServeHTTP sets the headers every response carries, refuses a request
// for another host, a cross-origin write and, when Options.Auth asks for
// it, a request without credentials, and routes.
func (u *ui) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "same-origin")
	if strings.HasPrefix(r.URL.Path, "/static/mermaid-") {
		// The vendored bundle's path names its version: it never changes
		// under that path, so a browser keeps its 3.5 MB.
		h.Set("Cache-Control", "public, max-age=31536000, immutable")
	} else {
		h.Set("Cache-Control", "no-store")
	}
	switch {
	case u.bad != nil:
		http.Error(w, u.bad.Error(), http.StatusInternalServerError)
		return
	case !u.hostOK(r.Host):
		http.Error(w, fmt.Sprintf("resumeui: host %q is not one this UI serves (loopback addresses, localhost, and the names it is told to allow: resumectl ui -allow-host NAME)", r.Host), http.StatusForbidden)
		return
	}
	if err := u.cop.Check(r); err != nil {
		fail(w, http.StatusForbidden, "cross-site request refused: "+err.Error())
		return
	}
	if strings.HasPrefix(r.URL.Path, "/static/") || r.URL.Path == "/login" {
		u.mux.ServeHTTP(w, r)
		return
	}
	user, ok, refused := u.authenticate(r)
	switch {
	case refused != "":
		fail(w, http.StatusForbidden, refused)
		return
	case !ok && r.Method == http.MethodGet:
		if strings.Count(r.URL.Path, "/") > 1 {
			seeOther(w, strings.Repeat("../", strings.Count(r.URL.Path, "/")-1)+"login")
			return
		}
		seeOther(w, "login")
		return
	case !ok:
		fail(w, http.StatusUnauthorized, "sign in first")
		return
	}
	u.mux.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), userKey{}, user)))
}

// tokenOK reports whether the form carries the UI's CSRF token.
func (u *ui) tokenOK(r *http.Request) bool {
	return subtle.ConstantTimeCompare([]byte(r.PostFormValue("csrf")), []byte(u.token)) == 1
}

// status sets an HTML response's status code.
func status(w http.ResponseWriter, code int) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(code)
}

// render writes template name with data, or a 500 naming what failed.
func render(w http.ResponseWriter, name string, data any) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	if err := pages.ExecuteTemplate(w, name, data); err != nil {
		http.Error(w, "render "+name+": "+err.Error(), http.StatusInternalServerError)
	}
}

// fail renders an error page with status code.
func fail(w http.ResponseWriter, code int, msg string) {
	status(w, code)
	render(w, "error.html", map[string]any{"Title": http.StatusText(code), "Message": msg})
}
