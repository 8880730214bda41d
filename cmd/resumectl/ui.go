package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"os"
	"strings"
	"time"

	"github.com/resumegen/resumegen/runtime/resumeui"
)

// listFlag is a flag that may be given more than once.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(s string) error { *l = append(*l, s); return nil }

func uiFlags(fs *flag.FlagSet) {
	fs.String("addr", "127.0.0.1:8080", "the `host:port` to serve on; a loopback address unless -public")
	fs.Bool("write", false, "allow actions on runs (resolve, retry, cancel, accept a version, signal); read-only otherwise")
	fs.Bool("public", false, "allow an -addr that is not a loopback address; it needs -token-file (or $RESUME_UI_TOKEN) or -proxy-header")
	fs.Var(new(listFlag), "allow-host", "a host `name` (or address) the UI answers to beside loopback and localhost (repeatable); the -addr address is one")
	fs.String("token-file", "", "the `file` holding the token or password that signs in (default: $RESUME_UI_TOKEN); with it every page asks for a sign-in")
	fs.Duration("session-ttl", 12*time.Hour, "how long a sign-in lasts")
	fs.Bool("secure-cookie", false, "mark the session cookie Secure: the UI sits behind a proxy that serves it over TLS")
	fs.String("proxy-header", "", "a `header` (X-Forwarded-User) naming the user a reverse proxy authenticated; believed only from -trusted-proxy")
	fs.Var(new(listFlag), "trusted-proxy", "an address or `CIDR` of a proxy whose -proxy-header is believed (repeatable)")
}

// uiOptions reads ui's flags into the UI's options.
func uiOptions(c *cli, o *options, addr string) (resumeui.Options, error) {
	opts := resumeui.Options{Write: flagValue(o.fs, "write") == "true", Now: c.now}
	opts.AllowHosts = append(opts.AllowHosts, *o.fs.Lookup("allow-host").Value.(*listFlag)...)
	if host, _, err := net.SplitHostPort(addr); err == nil {
		if ip, err := netip.ParseAddr(host); err == nil && !ip.IsUnspecified() {
			opts.AllowHosts = append(opts.AllowHosts, host) // the address it is reached by
		}
	}
	a := &opts.Auth
	a.SessionTTL, _ = time.ParseDuration(flagValue(o.fs, "session-ttl"))
	a.SecureCookie = flagValue(o.fs, "secure-cookie") == "true"
	a.ProxyHeader = flagValue(o.fs, "proxy-header")
	for _, p := range *o.fs.Lookup("trusted-proxy").Value.(*listFlag) {
		prefix, err := netip.ParsePrefix(p)
		if err != nil {
			ip, ierr := netip.ParseAddr(p)
			if ierr != nil {
				return opts, usagef("-trusted-proxy %q: want an address or a CIDR", p)
			}
			prefix = netip.PrefixFrom(ip, ip.BitLen())
		}
		a.TrustedProxies = append(a.TrustedProxies, prefix)
	}
	switch path := flagValue(o.fs, "token-file"); {
	case path != "":
		b, err := os.ReadFile(path)
		if err != nil {
			return opts, usagef("-token-file: %v", err)
		}
		a.Secret = strings.TrimSpace(string(b))
	default:
		a.Secret = os.Getenv("RESUME_UI_TOKEN")
	}
	if err := a.Check(); err != nil {
		return opts, usagef("%s", strings.TrimPrefix(err.Error(), "resumeui: "))
	}
	if flagValue(o.fs, "public") == "true" && a.Secret == "" && a.ProxyHeader == "" {
		return opts, usagef("-public needs authentication: -token-file FILE (or $RESUME_UI_TOKEN), or -proxy-header with -trusted-proxy behind a proxy that signs people in")
	}
	return opts, nil
}

// runsUI serves the web UI (package runtime/resumeui) until interrupted.
func runsUI(c *cli, o *options, args []string) error {
	if err := wantArgs(args); err != nil {
		return err
	}
	addr := flagValue(o.fs, "addr")
	if err := checkLoopback(addr, flagValue(o.fs, "public") == "true"); err != nil {
		return err
	}
	opts, err := uiOptions(c, o, addr)
	if err != nil {
		return err
	}
	open := c.openReadOnly
	if opts.Write {
		open = c.open
	}
	j, err := open(o)
	if err != nil {
		return err
	}
	defer j.Close()
	if opts.Write {
		if err := c.canWriteValue(o, "what the UI's signals and resolutions carry"); err != nil {
			return err
		}
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("ui: %w", err)
	}
	mode := "read-only"
	if opts.Write {
		mode = "actions allowed (-write)"
	}
	auth := "no sign-in: for this machine's user only"
	switch {
	case opts.Auth.ProxyHeader != "" && opts.Auth.Secret != "":
		auth = "sign-in with the token, or the user " + opts.Auth.ProxyHeader + " names from a trusted proxy"
	case opts.Auth.ProxyHeader != "":
		auth = "the user " + opts.Auth.ProxyHeader + " names, from a trusted proxy"
	case opts.Auth.Secret != "":
		auth = "sign-in with the token"
	}
	fmt.Fprintf(c.stdout, "resumectl ui: serving on http://%s/ (%s; %s); interrupt to stop\n", ln.Addr(), mode, auth)
	srv := &http.Server{Handler: resumeui.Handler(j, opts), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-c.ctx.Done()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
	}()
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("ui: %w", err)
	}
	return nil
}

// checkLoopback refuses an address other processes on the network can
// reach, unless public.
func checkLoopback(addr string, public bool) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return usagef("-addr %q: %v", addr, err)
	}
	if public || host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return usagef("-addr %s is not a loopback address: anyone who reaches it would see every run; add -public (with -token-file) to mean it", addr)
}
