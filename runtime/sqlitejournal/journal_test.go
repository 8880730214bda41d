package sqlitejournal_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/resumegen/resumegen/runtime/journaltest"
	"github.com/resumegen/resumegen/runtime/resume"
	"github.com/resumegen/resumegen/runtime/sqlitejournal"
)

// execer is what the effect insert needs: *sql.DB and *sql.Tx both fit.
type execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

func TestConformance(t *testing.T) {
	var db *sql.DB
	var path string // of the journal opened last
	journaltest.Run(t, journaltest.Harness{
		Open: func(t *testing.T) resume.Journal {
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
		OpenAgain: func(t *testing.T) resume.Journal {
			j, err := sqlitejournal.Open(context.Background(), path)
			if err != nil {
				t.Fatal(err)
			}
			return j
		},
	})
}
