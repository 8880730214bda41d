//go:build !unix

package journaltest

import (
	"testing"
	"time"
)

// cpuTime is not measured here: BenchIdleWaiting reports CPU only on
// Unix (getrusage).
func cpuTime(tb testing.TB) time.Duration {
	tb.Skip("process CPU time (getrusage) is measured on Unix only")
	return 0
}
