package resumeui

import (
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"time"
)

// Auth says who may use the UI. The zero Auth asks nobody to sign in: fit
// only for a UI that answers on loopback to its own machine's user.
type Auth struct {
	// Secret, if set, is the token or password that signs a person in on
	// the UI's login form (which sets a session cookie) or a script in
	// (Authorization: Bearer SECRET). It is compared in constant time and
	// never put in a URL or a log.
	Secret string
	// SessionTTL is how long a sign-in lasts (default 12h).
	SessionTTL time.Duration
	// SecureCookie marks the session cookie Secure even on a request that
	// did not come over TLS: the UI sits behind a proxy that terminates
	// TLS. Over TLS it is always Secure.
	SecureCookie bool
	// ProxyHeader, if set, is a request header ("X-Forwarded-User") naming
	// the user a reverse proxy in front of the UI authenticated. It is
	// trusted only on requests from an address in TrustedProxies; on a
	// request from anywhere else it is refused, never believed.
	ProxyHeader string
	// TrustedProxies are the addresses of the proxies whose ProxyHeader
	// the UI believes.
	TrustedProxies []netip.Prefix
}

// required reports whether every request must be authenticated.
func (a Auth) required() bool { return a.Secret != "" || a.ProxyHeader != "" }

// Check reports what makes a unusable.
func (a Auth) Check() error {
	if a.ProxyHeader != "" && len(a.TrustedProxies) == 0 {
		return errors.New("resumeui: Auth.ProxyHeader needs Auth.TrustedProxies: the addresses of the proxies that set it")
	}
	if a.ProxyHeader == "" && len(a.TrustedProxies) > 0 {
		return errors.New("resumeui: Auth.TrustedProxies without Auth.ProxyHeader: name the header that carries the user")
	}
	if a.Secret != "" && len(a.Secret) < 16 {
		return errors.New("resumeui: Auth.Secret is shorter than 16 bytes: too easy to guess")
	}
	return nil
}

// sessionCookie is the name of the UI's session cookie.
const sessionCookie = "resumeui_session"

// session is one sign-in.
type session struct {
	user    string
	expires time.Time
}

// sessions are the UI's sign-ins, in memory: a restart signs everyone
// out.
type sessions struct {
	mu sync.Mutex
	m  map[string]session
}

func (s *sessions) add(user string, ttl time.Duration, now time.Time) string {
	id := newToken()
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, v := range s.m {
		if !now.Before(v.expires) {
			delete(s.m, k)
		}
	}
	s.m[id] = session{user: user, expires: now.Add(ttl)}
	return id
}

func (s *sessions) user(id string, now time.Time) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.m[id]
	if !ok || !now.Before(v.expires) {
		delete(s.m, id)
		return "", false
	}
	return v.user, true
}

func (s *sessions) drop(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, id)
}

// secretOK compares a given secret with the UI's in constant time (their
// hashes, so that the length does not show either).
func (u *ui) secretOK(given string) bool {
	if u.opts.Auth.Secret == "" {
		return false
	}
	a, b := sha256.Sum256([]byte(given)), sha256.Sum256([]byte(u.opts.Auth.Secret))
	return subtle.ConstantTimeCompare(a[:], b[:]) == 1
}

// hostOK reports whether the request's Host is one the UI serves: a
// loopback address, localhost, or one of Options.AllowHosts, any port. A
// page of another name that reaches the UI (DNS rebinding: the attacker's
// name resolving to 127.0.0.1) is refused before anything is read.
func (u *ui) hostOK(host string) bool {
	name := host
	if h, _, err := net.SplitHostPort(host); err == nil {
		name = h
	}
	name = strings.ToLower(strings.TrimSuffix(strings.TrimSuffix(strings.TrimPrefix(name, "["), "]"), "."))
	if name == "" {
		return false
	}
	if name == "localhost" {
		return true
	}
	if ip, err := netip.ParseAddr(name); err == nil && ip.Unmap().IsLoopback() {
		return true
	}
	for _, h := range u.opts.AllowHosts {
		if strings.EqualFold(strings.TrimSuffix(h, "."), name) {
			return true
		}
	}
	return false
}

// remoteAddr is the request's peer address.
func remoteAddr(r *http.Request) (netip.Addr, bool) {
	ap, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil {
		return netip.Addr{}, false
	}
	return ap.Addr().Unmap(), true
}

// fromTrustedProxy reports whether r comes from one of the trusted
// proxies.
func (u *ui) fromTrustedProxy(r *http.Request) bool {
	ip, ok := remoteAddr(r)
	if !ok {
		return false
	}
	for _, p := range u.opts.Auth.TrustedProxies {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}

// authenticate says who sent r: the user a trusted proxy names, the
// signed-in session's user, or a script with the secret. ok is false when
// the UI requires authentication and r has none; refused is set when r
// carries a proxy's header from an address that is no trusted proxy.
func (u *ui) authenticate(r *http.Request) (user string, ok bool, refused string) {
	a := u.opts.Auth
	if a.ProxyHeader != "" && r.Header.Get(a.ProxyHeader) != "" {
		if !u.fromTrustedProxy(r) {
			return "", false, fmt.Sprintf("the %s header came from %s, which is not a trusted proxy: refused", a.ProxyHeader, r.RemoteAddr)
		}
		return r.Header.Get(a.ProxyHeader) + " (via proxy)", true, ""
	}
	if c, err := r.Cookie(sessionCookie); err == nil {
		if user, ok := u.sessions.user(c.Value, u.opts.Now()); ok {
			return user, true, ""
		}
	}
	if tok, found := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); found && u.secretOK(tok) {
		return "token holder (bearer)", true, ""
	}
	return "", !a.required(), ""
}

// cookiePath is the path the UI is mounted under, from the request as
// the client sent it and the path left after a prefix was stripped.
func cookiePath(r *http.Request) string {
	orig, _, _ := strings.Cut(r.RequestURI, "?")
	if prefix, ok := strings.CutSuffix(orig, r.URL.Path); ok && r.URL.Path != "" {
		return prefix + "/"
	}
	return "/"
}

// loginPage is the login form's template data.
type loginPage struct {
	Err   string
	Form  bool   // a token signs in here
	Proxy string // the proxy header, when one may sign in instead
}

// login shows the login form (GET) or signs in (POST): the secret, and a
// name for the record of actions.
func (u *ui) login(w http.ResponseWriter, r *http.Request) {
	page := loginPage{Form: u.opts.Auth.Secret != "", Proxy: u.opts.Auth.ProxyHeader}
	if !u.opts.Auth.required() {
		seeOther(w, "./") // nobody needs to sign in
		return
	}
	if r.Method != http.MethodPost {
		render(w, "login.html", page)
		return
	}
	if !u.secretOK(r.PostFormValue("secret")) {
		time.Sleep(250 * time.Millisecond) // a guess costs time
		status(w, http.StatusUnauthorized)
		page.Err = "wrong token or password"
		render(w, "login.html", page)
		return
	}
	name := strings.TrimSpace(r.PostFormValue("name"))
	if name == "" {
		name = "token holder"
	}
	name = strings.ToValidUTF8(name, "?")
	if len(name) > 80 {
		name = name[:80]
	}
	ttl := u.opts.Auth.SessionTTL
	if ttl <= 0 {
		ttl = 12 * time.Hour
	}
	id := u.sessions.add(name+" (signed in)", ttl, u.opts.Now())
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: id, Path: cookiePath(r), MaxAge: int(ttl / time.Second),
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil || u.opts.Auth.SecureCookie})
	seeOther(w, "./")
}

// seeOther redirects to rel, a URL relative to the request's own: the UI
// is mounted under a prefix it does not know (http.Redirect would make rel
// absolute on the stripped path).
func seeOther(w http.ResponseWriter, rel string) {
	w.Header().Set("Location", rel)
	w.WriteHeader(http.StatusSeeOther)
}

// logout ends the request's session.
func (u *ui) logout(w http.ResponseWriter, r *http.Request) {
	if !u.tokenOK(r) {
		fail(w, http.StatusForbidden, "the form's CSRF token is missing or stale: reload the page")
		return
	}
	if c, err := r.Cookie(sessionCookie); err == nil {
		u.sessions.drop(c.Value)
	}
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: "", Path: cookiePath(r), MaxAge: -1,
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil || u.opts.Auth.SecureCookie})
	seeOther(w, "login")
}

// sessionBar is who is signed in, for the pages' sign-out form.
type sessionBar struct {
	User, Token string
}

// sessionBar is r's, empty when r has no session.
func (u *ui) sessionBar(r *http.Request) sessionBar {
	c, err := r.Cookie(sessionCookie)
	if err != nil {
		return sessionBar{}
	}
	user, ok := u.sessions.user(c.Value, u.opts.Now())
	if !ok {
		return sessionBar{}
	}
	return sessionBar{User: user, Token: u.token}
}
