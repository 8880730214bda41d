package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/resumegen/resumegen/runtime/resumeui"
)

func uiFlags(fs *flag.FlagSet) {
	fs.String("addr", "127.0.0.1:8080", "the `host:port` to serve on; a loopback address unless -public")
	fs.Bool("write", false, "allow actions on runs (resolve, retry, cancel, accept a version, signal); read-only otherwise")
	fs.Bool("public", false, "allow an -addr that is not a loopback address: anyone who reaches it sees every run, and, with -write, acts on them")
}

// runsUI serves the web UI (package runtime/resumeui) until interrupted.
func runsUI(c *cli, o *options, args []string) error {
	if err := wantArgs(args); err != nil {
		return err
	}
	addr, write := flagValue(o.fs, "addr"), flagValue(o.fs, "write") == "true"
	if err := checkLoopback(addr, flagValue(o.fs, "public") == "true"); err != nil {
		return err
	}
	open := c.openReadOnly
	if write {
		open = c.open
	}
	j, err := open(o)
	if err != nil {
		return err
	}
	defer j.Close()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("ui: %w", err)
	}
	mode := "read-only"
	if write {
		mode = "actions allowed (-write)"
	}
	fmt.Fprintf(c.stdout, "resumectl ui: serving on http://%s/ (%s); interrupt to stop\n", ln.Addr(), mode)
	srv := &http.Server{Handler: resumeui.Handler(j, resumeui.Options{Write: write, Now: c.now}), ReadHeaderTimeout: 10 * time.Second}
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
	return usagef("-addr %s is not a loopback address: anyone who reaches it would see every run; add -public to mean it", addr)
}
