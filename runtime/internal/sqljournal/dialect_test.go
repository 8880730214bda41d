package sqljournal

import (
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/resumegen/resumegen/runtime/journal"
)

func TestRebindNumbered(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`SELECT a FROM {schema}.resume_runs WHERE run_id = $1 AND b = $12`, `SELECT a FROM resume_runs WHERE run_id = ?1 AND b = ?12`},
		{`SELECT '$1 {schema}.x' FROM {schema}.t WHERE c = $2`, `SELECT '$1 {schema}.x' FROM t WHERE c = ?2`},
		{`SELECT $ FROM t`, `SELECT $ FROM t`},
		{`SELECT 'it''s', $3`, `SELECT 'it''s', ?3`},
	} {
		if got := RebindNumbered(c.in, "?"); got != c.want {
			t.Errorf("RebindNumbered(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestRebindInOrder(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`SELECT a FROM {schema}.t WHERE b = $1 AND c = $2 AND d = '$3'`, `SELECT a FROM t WHERE b = ? AND c = ? AND d = '$3'`},
		{`UPDATE t SET a = $1 WHERE b = $10 AND c = $11`, `UPDATE t SET a = ?1 WHERE b = ?10 AND c = ?11`},
		{`SELECT $1, $2, $1`, `SELECT ?1, ?2, ?1`},
		{`SELECT $2, $1`, `SELECT ?2, ?1`},
		{`SELECT 1`, `SELECT 1`},
		{`SELECT ?2, $1`, `SELECT ?2, ?1`},
		{`SELECT '?', $1`, `SELECT '?', ?`},
	} {
		if got := RebindInOrder(c.in, "?"); got != c.want {
			t.Errorf("RebindInOrder(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	// The step row's write binds its 17 arguments in order.
	if got := WriteStepSQL(inOrderDialect{}); strings.Contains(got, "?1") {
		t.Errorf("WriteStepSQL numbers its placeholders:\n%s", got)
	}
}

// inOrderDialect is SQLite's spelling of a step row's write.
type inOrderDialect struct{ Dialect }

func (inOrderDialect) Rebind(sql string) string { return RebindInOrder(sql, "?") }
func (inOrderDialect) StepFence() (string, string) {
	return "", `EXISTS (SELECT 1 FROM {schema}.resume_runs WHERE run_id = $15 AND lease_owner = $16 AND epoch = $17)`
}

// testDialect spells placeholders as PostgreSQL does and lists as IN
// lists, to show which parts of RunWhere each method writes.
type testDialect struct{ Dialect }

func (testDialect) Param(n int) string   { return DollarParam(n) }
func (testDialect) Time(t time.Time) any { return t.UTC().Format(time.RFC3339) }
func (testDialect) AnyOf(col string, first int, vals []string) (string, []any) {
	ph := make([]string, len(vals))
	args := make([]any, len(vals))
	for i, v := range vals {
		ph[i], args[i] = "$"+strconv.Itoa(first+i), v
	}
	return col + " IN (" + strings.Join(ph, ", ") + ")", args
}
func (testDialect) Contains(col, p string) string { return "instr(" + col + ", " + p + ") > 0" }

func TestRunWhere(t *testing.T) {
	at := time.Date(2026, 12, 2, 6, 0, 0, 0, time.UTC)
	f := journal.RunFilter{
		Statuses: []journal.Status{journal.StatusPending, journal.StatusFailed}, Workflow: "w", Parent: "p",
		IDContains: "42", CreatedAfter: at, CreatedBefore: at.Add(time.Hour), Newest: true,
		After: &journal.RunCursor{CreatedAt: at.Add(time.Minute), RunID: "r9"},
	}
	where, args := RunWhere(testDialect{}, f, true)
	want := ` WHERE status IN ($1, $2) AND workflow = $3 AND parent_run_id = $4 AND instr(run_id, $5) > 0` +
		` AND created_at >= $6 AND created_at < $7 AND (created_at, run_id) < ($8, $9)`
	if where != want {
		t.Errorf("where =\n%s\nwant\n%s", where, want)
	}
	wantArgs := []any{"pending", "failed", "w", "p", "42", "2026-12-02T06:00:00Z", "2026-12-02T07:00:00Z", "2026-12-02T06:01:00Z", "r9"}
	if !reflect.DeepEqual(args, wantArgs) {
		t.Errorf("args = %v, want %v", args, wantArgs)
	}
	where, args = RunWhere(testDialect{}, f, false)
	if strings.Contains(where, "run_id) <") || len(args) != 7 {
		t.Errorf("without cursor: %s %v", where, args)
	}
	if where, args := RunWhere(testDialect{}, journal.RunFilter{}, true); where != "" || args != nil {
		t.Errorf("empty filter: %q %v", where, args)
	}
}
