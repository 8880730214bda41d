package pgjournal_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/resumegen/resumegen/internal/pgtest"
	"github.com/resumegen/resumegen/runtime/journal"
	"github.com/resumegen/resumegen/runtime/pgjournal"
	"github.com/resumegen/resumegen/runtime/resume"
)

// The connection-loss tests (issue 19 §3): a worker process A executes a
// step that outlives its lease (it holds 3 s, the lease is 2 s) while its
// connections to the server are lost, and another process B tries to take
// the run over every 50 ms the whole time. No step may execute in both at
// once, and the run must end as an uninterrupted one does.

// HoldPlan steers HoldFlow's Hold step.
type HoldPlan struct {
	Hold time.Duration
	// IgnoreCancel makes Hold sleep its time out whatever its context,
	// as a step that must finish what it started.
	IgnoreCancel bool
}

// procKey names, in a context, the process whose engine runs the step.
type procKey struct{}

// execution is one execution of a step, by the process that ran it.
type execution struct {
	proc, run, key string
	start, end     time.Time
	ended          bool
}

// executions logs the steps' executions, and when each process died.
var executions = struct {
	sync.Mutex
	xs   []*execution
	died map[string]time.Time
}{died: map[string]time.Time{}}

// begin logs the start of an execution; its end returns.
func begin(ctx context.Context) func() {
	info, _ := resume.StepFromContext(ctx)
	proc, _ := ctx.Value(procKey{}).(string)
	x := &execution{proc: proc, run: info.RunID, key: info.StepKey, start: time.Now()}
	executions.Lock()
	executions.xs = append(executions.xs, x)
	executions.Unlock()
	return func() {
		executions.Lock()
		x.end, x.ended = time.Now(), true
		executions.Unlock()
	}
}

// died records that proc ended at at (an overrun action stands for it):
// nothing of it executes after.
func died(proc string, at time.Time) {
	executions.Lock()
	defer executions.Unlock()
	if _, ok := executions.died[proc]; !ok {
		executions.died[proc] = at
	}
}

// executionsOf returns run id's executions of step key, each ended no
// later than its process's death, by start.
func executionsOf(run, key string) []execution {
	executions.Lock()
	defer executions.Unlock()
	var out []execution
	for _, x := range executions.xs {
		if x.run != run || x.key != key {
			continue
		}
		c := *x
		if d, ok := executions.died[c.proc]; ok && (!c.ended || d.Before(c.end)) && !d.Before(c.start) {
			c.end, c.ended = d, true
		}
		out = append(out, c)
	}
	sort.Slice(out, func(a, b int) bool { return out[a].start.Before(out[b].start) })
	return out
}

// Begin, Hold and End are HoldFlow's steps.
func Begin(ctx context.Context) (string, error) { defer begin(ctx)(); return "begin", nil }

func Hold(ctx context.Context, p HoldPlan) (string, error) {
	defer begin(ctx)()
	if p.IgnoreCancel {
		time.Sleep(p.Hold)
		return "held", nil
	}
	select {
	case <-time.After(p.Hold):
		return "held", nil
	case <-ctx.Done():
		return "", context.Cause(ctx)
	}
}

func End(ctx context.Context) (string, error) { defer begin(ctx)(); return "end", nil }

// HoldFlow runs Begin, Hold and End.
func HoldFlow(ctx context.Context, p HoldPlan) (string, error) {
	return holdBody(ctx, p, Begin, Hold, End)
}

func holdBody(ctx context.Context, p HoldPlan, b func(context.Context) (string, error), h func(context.Context, HoldPlan) (string, error), e func(context.Context) (string, error)) (string, error) {
	x, err := b(ctx)
	if err != nil {
		return "", err
	}
	y, err := h(ctx, p)
	if err != nil {
		return "", err
	}
	z, err := e(ctx)
	return x + "|" + y + "|" + z, err
}

const holdPkg = "github.com/resumegen/resumegen/runtime/pgjournal_test"

var holdSteps = []resume.StepDef{
	{Name: "Begin", Callee: holdPkg + ".Begin", Signature: "func(context.Context) (string, error)", JSON: "string"},
	{Name: "Hold", Callee: holdPkg + ".Hold", Signature: "func(context.Context, HoldPlan) (string, error)", JSON: "string"},
	{Name: "End", Callee: holdPkg + ".End", Signature: "func(context.Context) (string, error)", JSON: "string"},
}

func init() {
	resume.Register(HoldFlow, &resume.WorkflowDef{
		Package: holdPkg, Name: "HoldFlow", Version: "hold-v1", Steps: holdSteps,
		Run: func(ctx context.Context, args resume.Args) (any, error) {
			var p HoldPlan
			if err := args.Decode(&p); err != nil {
				return nil, err
			}
			return holdBody(ctx, p,
				func(ctx context.Context) (string, error) {
					return resume.Call(ctx, &holdSteps[0], func(ctx context.Context) (string, error) { return Begin(ctx) })
				},
				func(ctx context.Context, p HoldPlan) (string, error) {
					return resume.Call(ctx, &holdSteps[1], func(ctx context.Context) (string, error) { return Hold(ctx, p) })
				},
				func(ctx context.Context) (string, error) {
					return resume.Call(ctx, &holdSteps[2], func(ctx context.Context) (string, error) { return End(ctx) })
				})
		},
	})
}

// proxy forwards connections made to a UNIX socket of its own to the
// server's, until cut: then it drops every connection and refuses new ones
// (a network partition of the processes that connect through it) until
// healed.
type proxy struct {
	dir, target string
	ln          net.Listener
	mu          sync.Mutex
	cut         bool
	conns       map[net.Conn]bool
}

// startProxy forwards to the server whose socket folder is serverDir.
func startProxy(t *testing.T, serverDir string) *proxy {
	t.Helper()
	dir, err := os.MkdirTemp("/tmp", "rpx.")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	ln, err := net.Listen("unix", filepath.Join(dir, ".s.PGSQL.5432"))
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{dir: dir, target: filepath.Join(serverDir, ".s.PGSQL.5432"), ln: ln, conns: map[net.Conn]bool{}}
	t.Cleanup(func() { ln.Close(); p.partition(true) })
	go p.serve()
	return p
}

func (p *proxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		go p.forward(c)
	}
}

func (p *proxy) forward(c net.Conn) {
	p.mu.Lock()
	if p.cut {
		p.mu.Unlock()
		c.Close()
		return
	}
	p.mu.Unlock()
	s, err := net.Dial("unix", p.target)
	if err != nil {
		c.Close()
		return
	}
	p.mu.Lock()
	if p.cut {
		p.mu.Unlock()
		c.Close()
		s.Close()
		return
	}
	p.conns[c], p.conns[s] = true, true
	p.mu.Unlock()
	go func() { _, _ = io.Copy(s, c); s.Close(); c.Close() }()
	_, _ = io.Copy(c, s)
	s.Close()
	c.Close()
	p.mu.Lock()
	delete(p.conns, c)
	delete(p.conns, s)
	p.mu.Unlock()
}

// partition cuts (true) or heals (false) the proxy.
func (p *proxy) partition(cut bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = cut
	if cut {
		for c := range p.conns {
			c.Close()
		}
	}
}

// withHost returns dsn with its socket folder replaced by dir.
func withHost(t *testing.T, dsn, dir string) string {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("host", dir)
	u.RawQuery = q.Encode()
	return u.String()
}

// socketDir returns the socket folder of a postgres:// DSN (host=...).
func socketDir(t *testing.T, dsn string) string {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	return u.Query().Get("host")
}

// procPool connects as process name (its sessions carry it as their
// application_name).
func procPool(t *testing.T, dsn, name string) *pgxpool.Pool {
	t.Helper()
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	cfg.ConnConfig.RuntimeParams["application_name"] = name
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pool
}

// lossCase is one way of losing connections during A's step.
type lossCase struct {
	name string
	// dsn returns the database of the case (and prepares it), and the DSN
	// process A connects with.
	dsn func(t *testing.T) (dsn, dsnA string)
	// lose is what happens once A's Hold started; it may block.
	lose    func(t *testing.T, admin *pgxpool.Pool)
	plan    HoldPlan
	overrun bool // A's overrun action stands for its death
}

// TestConnectionLoss runs the connection-loss cases. Before (issue 19),
// the liveness session's end let B take the run while A still executed
// its step: 3 of 3 trials overlapped.
func TestConnectionLoss(t *testing.T) {
	var prx *proxy
	var cl *cluster
	terminate := func(t *testing.T, admin *pgxpool.Pool) {
		for range 3 {
			if _, err := admin.Exec(context.Background(), `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'proc-a'`); err != nil {
				t.Errorf("terminate A's sessions: %v", err)
			}
			time.Sleep(700 * time.Millisecond)
		}
	}
	partition := func(t *testing.T, _ *pgxpool.Pool) {
		prx.partition(true)
		time.Sleep(4 * time.Second) // two leases
		prx.partition(false)
	}
	viaProxy := func(t *testing.T) (string, string) {
		dsn := pgtest.FreshDatabase(t)
		prx = startProxy(t, socketDir(t, dsn))
		return dsn, withHost(t, dsn, prx.dir)
	}
	held := HoldPlan{Hold: 3 * time.Second}
	for _, c := range []lossCase{
		{name: "pg_terminate_backend of A's sessions", plan: held, lose: terminate,
			dsn: func(t *testing.T) (string, string) { d := pgtest.FreshDatabase(t); return d, d }},
		{name: "server restart", plan: held,
			dsn:  func(t *testing.T) (string, string) { cl = startCluster(t); return cl.dsn, cl.dsn },
			lose: func(t *testing.T, _ *pgxpool.Pool) { cl.ctl(t, "stop", "-m", "fast"); cl.ctl(t, "start") }},
		{name: "idle_session_timeout", plan: held,
			dsn: func(t *testing.T) (string, string) {
				d := pgtest.FreshDatabase(t)
				u, _ := url.Parse(d)
				if _, err := testPool(t).Exec(context.Background(), fmt.Sprintf(`ALTER DATABASE %q SET idle_session_timeout = '300ms'`, strings.TrimPrefix(u.Path, "/"))); err != nil {
					t.Fatal(err)
				}
				return d, d
			},
			lose: func(t *testing.T, _ *pgxpool.Pool) { time.Sleep(3 * time.Second) }},
		{name: "partition of A longer than its lease", plan: held, dsn: viaProxy, lose: partition},
		{name: "partition of A longer than its lease, step ignores cancellation", plan: HoldPlan{Hold: 3 * time.Second, IgnoreCancel: true},
			dsn: viaProxy, lose: partition, overrun: true},
	} {
		t.Run(c.name, func(t *testing.T) { connectionLoss(t, c) })
	}
}

func connectionLoss(t *testing.T, c lossCase) {
	ctx := context.Background()
	const lease = 2 * time.Second
	dsn, dsnA := c.dsn(t)
	admin := procPool(t, dsn, "admin")
	ja, err := pgjournal.Open(ctx, procPool(t, dsnA, "proc-a"))
	if err != nil {
		t.Fatal(err)
	}
	defer ja.Close()
	jb, err := pgjournal.Open(ctx, procPool(t, dsn, "proc-b"))
	if err != nil {
		t.Fatal(err)
	}
	defer jb.Close()
	var logA, logB bytes.Buffer
	var mu sync.Mutex
	logger := func(w *bytes.Buffer) *slog.Logger {
		return slog.New(slog.NewTextHandler(lockedWriter{&mu, w}, nil))
	}
	optsA := []resume.Option{resume.WithOwner("a"), resume.WithLease(lease), resume.WithLogger(logger(&logA))}
	if c.overrun {
		optsA = append(optsA, resume.WithOverrunAction(func(o resume.Overrun) {
			died("a", time.Now()) // the default action ends the process here
		}))
	}
	ea := resume.NewEngine(ja, optsA...)
	eb := resume.NewEngine(jb, resume.WithOwner("b"), resume.WithLease(lease), resume.WithLogger(logger(&logB)))
	id := fmt.Sprintf("loss-%d", time.Now().UnixNano())
	defer func() {
		if t.Failed() {
			mu.Lock()
			t.Logf("A's log:\n%s\nB's log:\n%s", logA.String(), logB.String())
			mu.Unlock()
		}
	}()

	aDone := make(chan error, 1)
	go func() {
		_, err := ea.Start(context.WithValue(ctx, procKey{}, "a"), id, HoldFlow, c.plan)
		aDone <- err
	}()
	for end := time.Now().Add(10 * time.Second); len(executionsOf(id, "Hold")) == 0; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatal("A never started Hold")
		}
	}
	var expiry time.Time // the lease's expiry as A last renewed it, by the server's clock
	leaseOf := func() {
		if r, _, err := jb.LoadRun(ctx, id); err == nil && r.LeaseOwner == "a" {
			expiry = r.LeaseUntil
		}
	}
	leaseOf()

	// B tries to take the run over every 50 ms while the connections are
	// lost, and after, until the run is finished, whatever its own
	// connections answer meanwhile (the server restarting).
	bDone := make(chan struct{})
	var bRes resume.Result
	var bErr error
	go func() {
		defer close(bDone)
		bctx := context.WithValue(ctx, procKey{}, "b")
		for end := time.Now().Add(60 * time.Second); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
			leaseOf()
			bRes, bErr = eb.Resume(bctx, id)
			if bErr == nil || errors.Is(bErr, resume.ErrNeedsAttention) || errors.Is(bErr, resume.ErrRunFailed) {
				return
			}
		}
	}()
	c.lose(t, admin)
	<-bDone
	var aErr error
	select {
	case aErr = <-aDone:
	case <-time.After(30 * time.Second):
		t.Fatal("A's Start did not return within 30s")
	}

	r, steps, err := jb.LoadRun(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != journal.StatusSucceeded || string(r.Output) != `"begin|held|end"` {
		t.Fatalf("run %s: %s %s (%s); want succeeded with \"begin|held|end\", as uninterrupted (A: %v; B: %+v, %v)", id, r.Status, r.Output, r.Error, aErr, bRes, bErr)
	}
	for _, s := range steps {
		if s.Status != journal.StepSucceeded {
			t.Errorf("step %s is %s", s.StepKey, s.Status)
		}
	}
	for _, key := range []string{"Begin", "End"} {
		if n := len(executionsOf(id, key)); n != 1 {
			t.Errorf("%s executed %d times, want once", key, n)
		}
	}
	holds := executionsOf(id, "Hold")
	overlaps := 0
	for i := 1; i < len(holds); i++ {
		if prev := holds[i-1]; !prev.ended || holds[i].start.Before(prev.end) {
			overlaps++
			t.Errorf("Hold by %s started at %s, while Hold by %s (started %s) still executed (ended %v)",
				holds[i].proc, holds[i].start.Format("15:04:05.000"), prev.proc, prev.start.Format("15:04:05.000"), prev.ended)
		}
	}
	if c.overrun {
		executions.Lock()
		overran := executions.died["a"]
		executions.Unlock()
		if overran.IsZero() {
			t.Errorf("A's step ignored its cancellation, and the overrun action never ran")
		} else if !expiry.IsZero() && !overran.Before(expiry) {
			t.Errorf("the overrun action ran at %s, not before the lease's expiry at %s", overran.Format("15:04:05.000"), expiry.Format("15:04:05.000"))
		}
	}
	var by []string
	for _, x := range holds {
		by = append(by, fmt.Sprintf("%s %s..%s", x.proc, x.start.Format("05.000"), x.end.Format("05.000")))
	}
	finisher := "nobody"
	if ends := executionsOf(id, "End"); len(ends) > 0 {
		finisher = ends[0].proc
	}
	t.Logf("%s: Hold executions [%s]; lease until %s (last seen); finished by %s; overlaps %d; A: %v",
		c.name, strings.Join(by, ", "), expiry.Format("05.000"), finisher, overlaps, aErr)
}

// lockedWriter serializes writes to w.
type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
