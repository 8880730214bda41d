package check_test

import (
	"strings"
	"testing"

	"github.com/resumegen/resumegen/generator/internal/check"
	"github.com/resumegen/resumegen/generator/internal/pipetest"
)

// TestNondeterministicAcrossPackages refuses non-determinism reached from
// a workflow body through helpers of other packages of the module, at the
// helper's line, with the whole path from the workflow; not inside a step
// (a call-site //resume:step on the call in the body, or in the helper),
// and not where a //resume:allow stands at a call on the way (listed as
// an exception). The standard library is judged by the table: a call of
// the network, of another program, of a database is refused; strings is
// not. Each message names the whole path and the fix; a write to the
// helper package's variable and time.Now used as a value there are
// refused the same way.
func TestNondeterministicAcrossPackages(t *testing.T) {
	pipetest.WantModule(t, check.Nondeterministic, map[string]string{
		"p.go": `package p

import (
	"context"
	"strings"

	"example.com/p/util"
)

//resume:workflow
func Onboard(ctx context.Context, names []string) error {
	_ = util.Pick(names)
	_ = util.Pick(names) //resume:step name=Pick
	_ = util.Stamp()     //resume:allow nondeterministic reason="only logged"
	_ = util.Stamp()
	_ = util.Hosts(ctx)
	util.Count()
	_ = util.Clock()
	_ = strings.ToUpper(names[0])
	return Done(ctx)
}

//resume:step
func Done(ctx context.Context) error { return nil }
`,
		"util/util.go": `package util

import (
	"context"
	"database/sql"
	"math/rand"
	"net/http"
	"os/exec"
	"time"

	"example.com/p/util/deep"
)

// Pick picks a name at random.
func Pick(names []string) string {
	return names[rand.Intn(len(names))] // want "^rand\\.Intn in util\\.Pick, called from workflow Onboard along Onboard → util\\.Pick → rand\\.Intn, gives another value when the run resumes: make it a step so its result is journaled: end its line with //resume:step name=NAME, move it into a //resume:step function, or mark the call that leads here from the body //resume:step$"
}

// Stamp is the time.
func Stamp() time.Time { return deep.Now() }

var hits int

// Count counts the calls.
func Count() { hits++ } // want "^write to package-level variable util\\.hits in util\\.Count, called from workflow Onboard along Onboard → util\\.Count → write to package-level variable util\\.hits: the body runs again from the start when the run resumes, so the write happens again while the steps before it do not; keep the state in a local variable, or move the write into a //resume:step function$"

// Clock is the clock.
func Clock() func() time.Time { return time.Now } // want "^time\\.Now is used as a value in util\\.Clock, called from workflow Onboard along Onboard → util\\.Clock: a call through it gives another value when the run resumes: call it in a step so its result is journaled \\(pass it to a //resume:step function, or move the call into one\\)$"

// Hosts asks the network, a program and a database.
func Hosts(ctx context.Context) error {
	_, _ = http.Get("http://example.com/")             // want "^http\\.Get in util\\.Hosts, called from workflow Onboard along Onboard → util\\.Hosts → http\\.Get, talks to the network, whose answer may differ when the run resumes \\(and which it does again\\): make it a step so its result is journaled: .*, or mark the call that leads here from the body //resume:step$"
	_ = exec.Command("hostname").Run()                  // want "exec\\.Cmd\\.Run in util\\.Hosts, .* runs another program"
	var db *sql.DB
	_, _ = db.QueryContext(ctx, "select 1")              // want "sql\\.DB\\.QueryContext in util\\.Hosts, .* queries a database"
	_, _ = (&http.Client{}).Get("http://example.com/") // want "http\\.Client\\.Get in util\\.Hosts, .* talks to the network"
	return nil
}
`,
		"util/deep/deep.go": `package deep

import "time"

// Now is the time, two packages down.
func Now() time.Time { return time.Now() } // want "^time\\.Now in deep\\.Now, called from workflow Onboard along Onboard → util\\.Stamp → deep\\.Now → time\\.Now, gives another value when the run resumes: make it a step so its result is journaled: end its line with //resume:step name=NAME, move it into a //resume:step function, or mark the call that leads here from the body //resume:step$"
`,
	})
}

// TestNondeterministicAllowedAtTheCall checks that the //resume:allow at
// the call in the body of a helper whose non-determinism lies two
// packages down is listed as a reviewed exception, with what it allows.
func TestNondeterministicAllowedAtTheCall(t *testing.T) {
	m := pipetest.Module(t, map[string]string{
		"p.go": `package p

import (
	"context"

	"example.com/p/util"
)

//resume:workflow
func W(ctx context.Context) error {
	_ = util.Stamp() //resume:allow nondeterministic reason="only logged"
	return nil
}
`,
		"util/util.go": `package util

import "time"

// Stamp is the time.
func Stamp() time.Time { return time.Now() }
`,
	})
	errs, _, found := pipetest.RunChecks(t, []*check.Check{check.Nondeterministic}, m)
	if len(errs) > 0 {
		t.Fatalf("refused: %v", errs)
	}
	var got []string
	for _, x := range found.Exceptions[m.Workflows[0]] {
		got = append(got, x.Check+": "+x.What+": "+x.Reason)
	}
	if want := "nondeterministic: time.Now: only logged"; len(got) != 1 || got[0] != want {
		t.Errorf("exceptions = %q, want [%q]", got, want)
	}
}

// TestSharedNames refuses a shared copy whose generated name collides
// with a declaration of the helper's package.
func TestSharedNames(t *testing.T) {
	m := pipetest.Module(t, map[string]string{
		"p.go": `package p

import (
	"context"

	"example.com/p/util"
)

//resume:workflow
func W(ctx context.Context) error { return util.NotifyAll(ctx) }
`,
		"util/util.go": `package util

import "context"

// Resume_NotifyAll is the user's own.
func Resume_NotifyAll() {}

// NotifyAll calls a step.
func NotifyAll(ctx context.Context) error { return Send(ctx) }

//resume:step
func Send(ctx context.Context) error { return nil }
`,
	})
	util := m.Module.Package(m.Load.Module.Package("example.com/p/util").Types)
	errs, _, _ := pipetest.RunChecks(t, []*check.Check{check.GeneratedNames}, util)
	if len(errs) != 1 || !strings.Contains(errs[0].Message, "the generated identifier Resume_NotifyAll of its shared copy collides with the declaration at util/util.go:6:6") {
		t.Errorf("refusals = %v", errs)
	}
}
