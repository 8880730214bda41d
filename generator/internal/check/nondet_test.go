package check_test

import (
	"testing"

	"github.com/resumegen/resumegen/generator/internal/check"
	"github.com/resumegen/resumegen/generator/internal/pipetest"
)

// Every function the check lists is refused outside a step, in the body
// and in a helper, with the message of its kind and, for the timers of
// package time, the durable wait that replaces each.
func TestNondeterministicCalls(t *testing.T) {
	pipetest.Want(t, check.Nondeterministic, `package p

import (
	"context"
	crand "crypto/rand"
	"io/ioutil"
	"math/rand"
	randv2 "math/rand/v2"
	"os"
	"time"
)

//resume:workflow
func W(ctx context.Context, t0 time.Time) error {
	_ = time.Now()                        // want "^time.Now in a workflow body gives another value when the run resumes: make it a step so its result is journaled: end its line with //resume:step name=NAME, or move it into a //resume:step function$"
	_ = time.Since(t0) + time.Until(t0)   // want "^time.Since in a workflow body gives another value" "^time.Until in a workflow body gives another value"
	time.Sleep(time.Second)               // want "^time.Sleep in a workflow body waits in real time again each time the run resumes, and holds a worker while it waits: use resume.Sleep\\(ctx, d\\), which journals the wake-up time once and suspends the run until then$"
	_ = time.Tick(time.Second)            // want "^time.Tick in a workflow body waits in real time .*: to act every d, loop over a call of resume.Sleep\\(ctx, d\\)"
	_ = time.NewTicker(time.Second)       // want "^time.NewTicker in a workflow body waits in real time .*: to act every d, loop over"
	_ = time.AfterFunc(time.Second, nil)  // want "^time.AfterFunc in a workflow body waits .*: call resume.Sleep\\(ctx, d\\), which journals the wake-up time once and suspends the run until then, then the function$"
	_ = time.After(time.Second)           // want "^time.After in a workflow body waits .*: to wait for d use resume.Sleep\\(ctx, d\\), .*; to wait for an event with a timeout, resume.Await\\[T\\]\\(ctx, NAME, timeout\\)$"
	_ = time.NewTimer(time.Second)        // want "^time.NewTimer in a workflow body waits .*; to wait for an event with a timeout"
	_ = rand.Intn(3) + randv2.IntN(3)     // want "^rand.Intn in a workflow body gives another value" "^rand.IntN in a workflow body gives another value"
	_, _ = crand.Read(nil)                // want "^rand.Read in a workflow body gives another value"
	_ = os.Getenv("HOME")                 // want "^os.Getenv in a workflow body reads the process's environment, which may differ when the run resumes on another host or after a deploy: make it a step"
	_, _ = os.LookupEnv("HOME")           // want "^os.LookupEnv in a workflow body reads the process's environment"
	_, _ = os.Environ(), os.Getpid()      // want "^os.Environ in a workflow body reads the process's environment" "^os.Getpid in a workflow body reads the process's environment"
	_, _ = os.Hostname()                  // want "^os.Hostname in a workflow body reads the process's environment"
	_, _ = os.ReadFile("f")               // want "^os.ReadFile in a workflow body reads files, which may differ when the run resumes on another host or after a deploy: make it a step"
	_, _ = os.Open("f")                   // want "^os.Open in a workflow body reads files"
	_, _ = os.OpenFile("f", os.O_RDONLY, 0) // want "^os.OpenFile in a workflow body reads files"
	_, _ = os.ReadDir("d")                // want "^os.ReadDir in a workflow body reads files"
	_, _ = ioutil.ReadFile("f")           // want "^ioutil.ReadFile in a workflow body reads files"
	_, _ = ioutil.ReadDir("d")            // want "^ioutil.ReadDir in a workflow body reads files"
	_, _ = ioutil.ReadAll(nil)            // want "^ioutil.ReadAll in a workflow body reads files"
	return stamp(ctx)
}

func stamp(ctx context.Context) error {
	_ = time.Now() // want "^time.Now in stamp, called from workflow W along W → stamp → time.Now, gives another value when the run resumes: make it a step so its result is journaled: end its line with //resume:step name=NAME, move it into a //resume:step function, or mark the call that leads here from the body //resume:step$"
	return S(ctx, 0)
}

//resume:step
func S(ctx context.Context, n int64) error { return nil }
`)
}

// What gives the same outcome on every execution is not refused: seeded
// generators and their methods, the deterministic functions of package
// time, a call marked //resume:step (its outcome is journaled), code inside
// a step's own body, and code no workflow reaches.
func TestNondeterministicAccepts(t *testing.T) {
	pipetest.Want(t, check.Nondeterministic, `package p

import (
	"context"
	"math/rand"
	randv2 "math/rand/v2"
	"os"
	"time"
)

//resume:workflow
func W(ctx context.Context) error {
	r := rand.New(rand.NewSource(42))
	_ = r.Intn(3) + int(rand.NewZipf(r, 2, 1, 10).Uint64())
	r2 := randv2.New(randv2.NewPCG(1, 2))
	_ = r2.IntN(3) + randv2.New(randv2.NewChaCha8([32]byte{})).IntN(3)
	_ = randv2.NewZipf(r2, 2, 1, 10)
	t := time.Unix(0, 0).Add(3 * time.Second)
	_ = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC).Sub(t)
	_, _ = time.ParseDuration("1s")
	now := time.Now() //resume:step name=now
	_, _ = os.ReadFile("f") //resume:step name=read
	_ = now
	return S(ctx, 1)
}

//resume:step
func S(ctx context.Context, n int64) error {
	_ = time.Now()
	_ = os.Getenv("HOME")
	return nil
}

func unreached() {
	_ = time.Now()
	time.Sleep(time.Second)
}
`)
}

// A function the check refuses, used as a value, is refused where it is
// used: a call through the value escapes the check (now := time.Now;
// now()). crypto/rand.Reader, os.Args and os.Stdin are refused likewise. Passed straight to a
// step, either runs inside the journaled call and is accepted.
func TestNondeterministicValues(t *testing.T) {
	pipetest.Want(t, check.Nondeterministic, `package p

import (
	"context"
	crand "crypto/rand"
	"io"
	"math/rand"
	"os"
	"time"
)

//resume:workflow
func W(ctx context.Context) error {
	now := time.Now // want "^time.Now is used as a value in a workflow body: a call through it gives another value when the run resumes: call it in a step so its result is journaled \\(pass it to a //resume:step function, or move the call into one\\)$"
	_ = now()
	sleep := time.Sleep // want "^time.Sleep is used as a value in a workflow body: a call through it waits in real time again each time the run resumes, and holds a worker while it waits: use resume.Sleep\\(ctx, d\\)"
	sleep(time.Second)
	pick := rand.Intn // want "^rand.Intn is used as a value in a workflow body"
	_ = pick(2)
	env := os.Getenv // want "^os.Getenv is used as a value in a workflow body: a call through it reads the process's environment"
	_ = env("HOME")
	_, _ = io.ReadFull(crand.Reader, make([]byte, 8)) // want "^rand.Reader in a workflow body gives other bytes when the run resumes: read it in a step"
	_ = clock(time.Now) // want "^time.Now is used as a value in a workflow body: a call through it"
	_ = Stamp(ctx, time.Now)
	_ = Fill(ctx, crand.Reader, 8)
	_ = os.Args[1] // want "^os.Args in a workflow body reads the process's command line, which may differ when the run resumes in another process or after a deploy: read it where the program starts, and pass what the run needs as the workflow's input$"
	_, _ = io.ReadAll(os.Stdin) // want "^os.Stdin in a workflow body reads the process's input, which differs when the run resumes: read it in a step so what it gives is journaled, or before the run starts, as its input$"
	_ = Fill(ctx, os.Stdin, 8)
	return nil
}

func clock(now func() time.Time) error { return nil }

//resume:step
func Stamp(ctx context.Context, now func() time.Time) error { return nil }

//resume:step
func Fill(ctx context.Context, r io.Reader, n int) error { return nil }
`)
}

// A write to a package-level variable, or into what one holds, is refused
// with every operator and builtin that writes, also through another
// package's variable; reads, locals that shadow one and writes into a
// local are not.
func TestNondeterministicWrites(t *testing.T) {
	pipetest.Want(t, check.Nondeterministic, `package p

import (
	"context"
	"os"
)

var (
	G  int
	M  = map[string]int{}
	P  = &struct{ F int }{}
	A  [3]int
	Sl = []int{1, 2, 3}
	St struct{ In struct{ N int } }
)

//resume:workflow
func W(ctx context.Context, in []int) error {
	G = 1 // want "^write to package-level variable G in a workflow body: the body runs again from the start when the run resumes, so the write happens again while the steps before it do not; keep the state in a local variable, or move the write into a //resume:step function$"
	G += 2         // want "^write to package-level variable G in"
	G++            // want "^write to package-level variable G in"
	G--            // want "^write to package-level variable G in"
	(G) = 3        // want "^write to package-level variable G in"
	M["k"] = 1     // want "^write to package-level variable M in"
	P.F = 2        // want "^write to package-level variable P in"
	*P = struct{ F int }{}  // want "^write to package-level variable P in"
	A[0] = 1       // want "^write to package-level variable A in"
	Sl[1:][0] = 4  // want "^write to package-level variable Sl in"
	St.In.N = 5    // want "^write to package-level variable St in"
	for G = range in { // want "^write to package-level variable G in"
	}
	delete(M, "k") // want "^write to package-level variable M in"
	clear(M)       // want "^write to package-level variable M in"
	copy(Sl, in)   // want "^write to package-level variable Sl in"
	os.Args = nil  // want "^write to package-level variable os.Args in a workflow body"
	n, G := 1, 2   // a new local G from here on
	G = n
	G++
	_ = G
	return set(ctx)
}

func set(ctx context.Context) error {
	for _, G = range Sl { // want "^write to package-level variable G in set, called from workflow W along W → set → write to package-level variable G: the body runs again"
	}
	local := map[string]int{"k": G}
	delete(local, "k")
	buf := make([]int, 3)
	copy(buf, Sl)
	var s struct{ N int }
	s.N = G
	_, _ = M["k"], P.F
	return S(ctx)
}

//resume:step
func S(ctx context.Context) error {
	G++
	return nil
}
`)
}
