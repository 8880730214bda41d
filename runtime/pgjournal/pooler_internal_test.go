package pgjournal

import (
	"strings"
	"testing"
)

// TestCutPooler: the resume_pooler parameter is read from, and removed
// from, both forms of DSN; other parameters are kept.
func TestCutPooler(t *testing.T) {
	for _, c := range []struct {
		dsn, rest string
		want      Pooler
		found     bool
		err       string
	}{
		{"postgres://u@h/db?sslmode=disable&resume_pooler=transaction", "postgres://u@h/db?sslmode=disable", PoolerTransaction, true, ""},
		{"postgresql://u@h/db?resume_pooler=none", "postgresql://u@h/db", PoolerNone, true, ""},
		{"postgres://u@h/db?sslmode=disable", "postgres://u@h/db?sslmode=disable", PoolerDetect, false, ""},
		{"host=h resume_pooler=transaction dbname=db", "host=h dbname=db", PoolerTransaction, true, ""},
		{"host=h dbname=db resume_pooler='detect'", "host=h dbname=db", PoolerDetect, true, ""},
		{"host=h dbname=db", "host=h dbname=db", PoolerDetect, false, ""},
		{"host=h resume_pooler=maybe", "", PoolerDetect, false, `resume_pooler="maybe"`},
	} {
		rest, p, found, err := cutPooler(c.dsn)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("cutPooler(%q) error %v, want %q", c.dsn, err, c.err)
			}
			continue
		}
		if err != nil || rest != c.rest || p != c.want || found != c.found {
			t.Errorf("cutPooler(%q) = %q, %v, %v, %v; want %q, %v, %v", c.dsn, rest, p, found, err, c.rest, c.want, c.found)
		}
	}
}
