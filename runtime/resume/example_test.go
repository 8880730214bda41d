package resume_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	_ "modernc.org/sqlite" // a database/sql driver for the example

	"github.com/resumegen/resumegen/runtime/resume"
)

// execer is what WriteScores needs of a database handle: *sql.DB and
// *sql.Tx both have it.
type execer interface {
	ExecContext(context.Context, string, ...any) (sql.Result, error)
}

// WriteScores is a tx step: marked //resume:step tx, it writes in the
// transaction that also commits its journal row; called outside a run, it
// writes through db.
func WriteScores(ctx context.Context, db *sql.DB, scores []int) error {
	q := resume.Tx[execer](ctx, db)
	for _, s := range scores {
		if _, err := q.ExecContext(ctx, `INSERT INTO scores (points) VALUES (?)`, s); err != nil {
			return err
		}
	}
	return nil
}

// A tx step takes the database handle as a parameter (parameters are not
// journaled) and reaches the step's transaction through resume.Tx, so the
// same function works outside a workflow.
func ExampleTx() {
	ctx := context.Background()
	db, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		panic(err)
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, `CREATE TABLE scores (points INTEGER)`); err != nil {
		panic(err)
	}
	if err := WriteScores(ctx, db, []int{3, 5}); err != nil {
		panic(err)
	}
	var total int
	if err := db.QueryRowContext(ctx, `SELECT sum(points) FROM scores`).Scan(&total); err != nil {
		panic(err)
	}
	fmt.Println(total)
	// Output: 8
}

// A step marks an error no retry can fix with resume.Permanent: its
// retry budget is not spent on it, and errors.Is still sees through.
func ExamplePermanent() {
	errDeclined := errors.New("card declined")
	err := resume.Permanent(fmt.Errorf("charge: %w", errDeclined))
	fmt.Println(resume.IsPermanent(err), errors.Is(err, errDeclined))
	// Output: true true
}
