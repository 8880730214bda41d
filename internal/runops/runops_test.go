package runops

import (
	"errors"
	"testing"
)

func TestCheckResolve(t *testing.T) {
	for _, c := range []struct {
		done, redo bool
		result     string
		ok         bool
	}{
		{true, false, "", true}, {true, false, `{"a":1}`, true}, {false, true, "", true},
		{true, true, "", false}, {false, false, "", false}, {false, true, "1", false}, {true, false, "{a:1}", false},
	} {
		err := CheckResolve(c.done, c.redo, c.result)
		if (err == nil) != c.ok || err != nil && !errors.Is(err, ErrUsage) {
			t.Errorf("CheckResolve(%v, %v, %q) = %v; want ok %v (a usage error otherwise)", c.done, c.redo, c.result, err, c.ok)
		}
	}
}
