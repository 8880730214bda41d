package sqlitejournal_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/resumegen/resumegen/runtime/journal"
	"github.com/resumegen/resumegen/runtime/journaltest"
	"github.com/resumegen/resumegen/runtime/resume"
	"github.com/resumegen/resumegen/runtime/sqlitejournal"
)

// execer is what the effect insert needs: *sql.DB and *sql.Tx both fit.
type execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

func TestConformance(t *testing.T) {
	journaltest.Run(t, harness())
}

// harness is the conformance suite's harness over a journal in a fresh
// file.
func harness() journaltest.Harness {
	var db *sql.DB
	var path string // of the journal opened last
	return journaltest.Harness{
		Open: func(t *testing.T) journal.Journal {
			path = filepath.Join(t.TempDir(), "journal.db")
			j, err := sqlitejournal.Open(context.Background(), path)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := j.DB().Exec(`CREATE TABLE effects (run_id TEXT NOT NULL)`); err != nil {
				t.Fatal(err)
			}
			db = j.DB()
			return j
		},
		InsertEffect: func(ctx context.Context, runID string) error {
			_, err := resume.Tx[execer](ctx, db).ExecContext(ctx, `INSERT INTO effects (run_id) VALUES (?)`, runID)
			return err
		},
		CountEffects: func(ctx context.Context, runID string) (n int, err error) {
			err = db.QueryRowContext(ctx, `SELECT count(*) FROM effects WHERE run_id = ?`, runID).Scan(&n)
			return n, err
		},
		OpenAgain: func(t *testing.T) journal.Journal {
			j, err := sqlitejournal.Open(context.Background(), path)
			if err != nil {
				t.Fatal(err)
			}
			return j
		},
		Exec: func(ctx context.Context, query string) error {
			_, err := db.ExecContext(ctx, query)
			return err
		},
	}
}

// TestCorruptColumns damages rows in ways only SQLite stores (a value of
// the wrong type in a typed column): each stops its own run, which parks
// naming the row and the column, and the queue behind it goes on.
func TestCorruptColumns(t *testing.T) {
	journaltest.RunCorruptAttacks(t, harness(), []journaltest.CorruptAttack{
		{Name: "a seq that is not an integer", SQL: `UPDATE resume_steps SET seq = 'abc' WHERE run_id = {run} AND step_key = 'Notify'`,
			Step: "Notify", Why: `seq "abc" is not an integer`,
			Repair: `UPDATE resume_steps SET seq = 2 WHERE run_id = {run} AND step_key = 'Notify'`},
		{Name: "an attempt that is a fraction", SQL: `UPDATE resume_steps SET status = 'failed', attempt = 1.5 WHERE run_id = {run} AND step_key = 'Loop'`,
			Step: "Loop", Why: "attempt 1.5 is not an integer"},
		{Name: "a start time that is not a timestamp", SQL: `UPDATE resume_steps SET status = 'failed', started_at = 'yesterday' WHERE run_id = {run} AND step_key = 'Fetch'`,
			Step: "Fetch", Why: `started_at "yesterday" is not a timestamp`},
		{Name: "a result stored as a blob that is not JSON", SQL: `UPDATE resume_steps SET result = x'00ff' WHERE run_id = {run} AND step_key = 'Fetch'`,
			Step: "Fetch", Why: "does not decode"},
		{Name: "a run row whose creation time is not a timestamp", SQL: `UPDATE resume_runs SET created_at = 'soon' WHERE run_id = {run}`,
			Step: "", Why: `created_at "soon" is not a timestamp`},
	})
}
