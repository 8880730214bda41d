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
// Mermaid, assets/static/mermaid-11.17.2) is embedded and optional. Actions need
// [Options.Write], a POST carrying the page's CSRF token, and a request
// that is not cross-site (Origin and Sec-Fetch-Site are checked).
package resumeui

import (
	"crypto/rand"
	"crypto/subtle"
	"embed"
	"encoding/hex"
	"html/template"
	"io/fs"
	"net/http"
	"net/url"
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
}

//go:embed assets
var assets embed.FS

var pages = template.Must(template.New("").Funcs(funcs).ParseFS(assets, "assets/*.html"))

// ui is the handler: the journal, its options and the CSRF token its
// forms carry.
type ui struct {
	j     journal.Journal
	opts  Options
	token string
	mux   *http.ServeMux
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
	u := &ui{j: j, opts: opts, token: newToken(), mux: http.NewServeMux()}
	static, _ := fs.Sub(assets, "assets/static")
	u.mux.Handle("GET /static/", http.StripPrefix("/static/", http.FileServerFS(static)))
	u.mux.HandleFunc("GET /{$}", u.list)
	u.mux.HandleFunc("GET /run", u.run)
	u.mux.HandleFunc("POST /action", u.action)
	return u
}

func newToken() string {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		panic("resumeui: no randomness for the CSRF token: " + err.Error())
	}
	return hex.EncodeToString(b)
}

// ServeHTTP sets the headers every response carries and routes.
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
	u.mux.ServeHTTP(w, r)
}

// sameOrigin reports whether a POST comes from the UI's own pages: a
// browser says so in Sec-Fetch-Site, and an Origin, when sent, names the
// host the request was sent to. A request with neither (a script, curl)
// passes here, and still needs the CSRF token.
func sameOrigin(r *http.Request) bool {
	switch r.Header.Get("Sec-Fetch-Site") {
	case "", "same-origin", "none":
	default:
		return false
	}
	o := r.Header.Get("Origin")
	if o == "" {
		return true
	}
	ou, err := url.Parse(o)
	return err == nil && ou.Host == r.Host
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
