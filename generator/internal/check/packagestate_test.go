package check_test

import (
	"testing"

	"github.com/resumegen/resumegen/generator/internal/check"
	"github.com/resumegen/resumegen/generator/internal/pipetest"
)

// TestPackageState refuses reads of package-level variables of the module
// that a function of the module writes (assigned, through a pointer
// method, by taking the address), in the body and in a helper of another
// package; variables only initialized (or set in init) are fine, and so
// are writes, which Nondeterministic refuses.
func TestPackageState(t *testing.T) {
	pipetest.WantModule(t, check.PackageState, map[string]string{
		"p.go": `package p

import (
	"context"

	"example.com/p/conf"
)

var limits = map[string]int{"a": 1}

var hits int

var region string

func init() { region = "eu" }

//resume:workflow
func W(ctx context.Context) error {
	_ = limits["a"] + len(region)
	_ = hits // want "read of package-level variable hits in a workflow body: it is written at p.go:\\d+:\\d+"
	hits++
	_ = conf.Timeout()
	return nil
}

//resume:step
func Bump(ctx context.Context) error {
	hits++
	return nil
}
`,
		"conf/conf.go": `package conf

import (
	"encoding/json"
	"sync/atomic"
)

var current struct{ Timeout int }

var calls atomic.Int64

// Load reads the configuration.
func Load(b []byte) error { return json.Unmarshal(b, &current) }

// Timeout is the configured timeout.
func Timeout() int {
	n := calls.Load() // want "read of package-level variable conf\\.calls in conf\\.Timeout, called from workflow W along W → conf\\.Timeout → read of package-level variable conf\\.calls"
	_ = n
	return current.Timeout // want "read of package-level variable conf\\.current in conf\\.Timeout"
}

// Count counts.
func Count() { calls.Add(1) }
`,
	})
}
