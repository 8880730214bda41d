// Package sqlitejournal is resumegen's embedded journal: one SQLite file, no
// server, no cgo (modernc.org/sqlite). It opens the file in WAL mode with
// synchronous=FULL, so every commit is on disk before it returns, and writes
// through one connection, so writers queue in the process instead of
// failing with SQLITE_BUSY; a busy timeout covers other processes.
//
// Each worker process holds an OS file lock (flock) on a lock file of its
// owner name in the directory beside the journal named after it with
// ".owners" appended: the kernel releases it when the process ends, and
// the runs of an ended process are taken over at once (see
// [Journal.KeepAlive] and journal.Liveness).
//
// The tables are resume_runs and resume_steps (see the resume package), with
// timestamps as fixed-width UTC text (2006-01-02T15:04:05.000000Z) so they
// read well and sort in plain SQL:
//
//	SELECT step_key, status, attempt, result FROM resume_steps
//	WHERE run_id = 'onboard-42' ORDER BY seq;
package sqlitejournal

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/resumegen/resumegen/runtime/internal/groupcommit"
	"github.com/resumegen/resumegen/runtime/internal/sqljournal"
	"github.com/resumegen/resumegen/runtime/journal"
	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// Journal is a [journal.Journal] in one SQLite file.
type Journal struct {
	db      *sql.DB // the one writer connection
	read    *sql.DB // readers; WAL lets them run beside the writer
	reads   atomic.Int64
	commits atomic.Int64

	// Statements on the hot path, prepared once on the writer connection.
	writeStepStmt, finishStmt, claimStmt, entryStmt *sql.Stmt

	live  liveness                       // the owners' lock files (see KeepAlive)
	group *groupcommit.Queue[groupWrite] // writes of concurrent runs, committed together (group.go)

	now func() time.Time // the journal's clock (see WithClock); nil: time.Now

	store *sqljournal.Store // the operations every SQL journal shares (dialect.go)
}

// Option configures a Journal at [Open].
type Option func(*Journal)

// WithClock makes now the journal's clock, in place of time.Now: what
// leases expire by and what decides whether a waiting run's wake-up time
// passed (journal.RunRecord.WakeAt). For a test harness that fast-forwards
// time (sleeps and await timeouts); a program keeps the default.
func WithClock(now func() time.Time) Option {
	return func(j *Journal) { j.now = now }
}

// clock reads the journal's clock.
func (j *Journal) clock() time.Time {
	if j.now != nil {
		return j.now()
	}
	return time.Now()
}

var (
	_ journal.Journal = (*Journal)(nil)
	_ journal.Clock   = (*Journal)(nil)
)

// Now returns the journal's clock (journal.Clock): the host's clock, which
// every process sharing the file reads (SQLite runs on the host that holds
// the file), or the one given to [WithClock]. Leases expire and waiting
// runs come due by it; engines take their durable times from it.
func (j *Journal) Now(ctx context.Context) (time.Time, error) { return j.clock(), nil }

// Open opens (creating if needed) the journal in the SQLite file at path and
// brings its schema up to date. A file it creates is mode 0600, and so are
// its -wal and -shm files. To read a journal without writing, see
// [OpenReadOnly].
func Open(ctx context.Context, path string, opts ...Option) (*Journal, error) {
	if err := checkPath(path, true); err != nil {
		return nil, err
	}
	dsn := func(extra string) string {
		q := url.Values{}
		q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", busyTimeout.Milliseconds()))
		q.Add("_pragma", "journal_mode(WAL)")
		q.Add("_pragma", "synchronous(FULL)")
		q.Add("_pragma", "foreign_keys(ON)")
		q.Set("_txlock", "immediate")
		if extra != "" {
			q.Add("_pragma", extra)
		}
		return "file:" + (&url.URL{Path: path}).EscapedPath() + "?" + q.Encode()
	}
	db, err := sql.Open("sqlite", dsn(""))
	if err != nil {
		return nil, fmt.Errorf("sqlitejournal: open %s: %w", path, err)
	}
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	db.SetConnMaxLifetime(0)
	if err := migrate(ctx, db); err != nil {
		db.Close()
		return nil, fmt.Errorf("sqlitejournal: %s: %w", path, err)
	}
	read, err := sql.Open("sqlite", dsn("query_only(ON)"))
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("sqlitejournal: open %s: %w", path, err)
	}
	read.SetMaxOpenConns(4)
	j := &Journal{db: db, read: read, live: liveness{dir: path + ".owners", held: map[string]*os.File{}}}
	j.group = groupcommit.New(maxGroup, j.commitGroup)
	j.store = newStore(j)
	for _, o := range opts {
		o(j)
	}
	if err := j.prepare(ctx); err != nil {
		j.Close()
		return nil, fmt.Errorf("sqlitejournal: prepare: %w", err)
	}
	return j, nil
}

// prepare prepares the statements of the hot path on the writer
// connection.
func (j *Journal) prepare(ctx context.Context) error {
	for _, p := range []struct {
		stmt **sql.Stmt
		sql  string
	}{
		{&j.writeStepStmt, writeStepSQL},
		{&j.finishStmt, finishSQL},
		{&j.claimStmt, claimSQL},
		{&j.entryStmt, entrySQL},
	} {
		var err error
		if *p.stmt, err = j.db.PrepareContext(ctx, p.sql); err != nil {
			return err
		}
	}
	return nil
}

// DB returns the journal's database handle (its one writer connection), for
// the user's own tables: tx steps write through [resume.Tx] with DB as the
// fallback outside a workflow. Do not hold a transaction of DB open while a
// workflow runs in the same process: the journal waits for it.
func (j *Journal) DB() *sql.DB { return j.db }

// Close closes the database.
func (j *Journal) Close() error {
	var errs []error
	for _, st := range []*sql.Stmt{j.writeStepStmt, j.finishStmt, j.claimStmt, j.entryStmt} {
		if st != nil {
			errs = append(errs, st.Close())
		}
	}
	return errors.Join(append(errs, j.live.close(), j.read.Close(), j.db.Close())...)
}

// Counters returns the reads and commits since Open.
func (j *Journal) Counters() journal.Counters {
	return journal.Counters{Reads: j.reads.Load(), Commits: j.commits.Load()}
}

const timeFormat = "2006-01-02T15:04:05.000000Z"

func ts(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(timeFormat)
}

func nullJSON(b json.RawMessage) any {
	if b == nil {
		return nil
	}
	return string(b)
}

const runColumns = `run_id, workflow, version, status, input, output, error, attention_step, attention_kind,
	attempts, lease_owner, lease_until, epoch, created_at, updated_at, failed_step, parent_run_id, error_detail,
	attempts - progress_attempt, wait_kind, wait_name, wake_at, moves, cancel_requested_at, deadline,
	continued_from, continued_as, queue, queue_key, priority`

type scanner interface{ Scan(dest ...any) error }

// scanRun scans runColumns, then extra destinations. A column that does
// not convert to its type (SQLite stores any value in any column) leaves
// its field zero and is named in the run's Unreadable, so that one corrupt
// row stops its own run instead of every read of the journal.
func scanRun(s scanner, extra ...any) (journal.RunRecord, error) {
	var r journal.RunRecord
	var v [30]any
	dest := make([]any, 0, len(v)+len(extra))
	for i := range v {
		dest = append(dest, &v[i])
	}
	if err := s.Scan(append(dest, extra...)...); err != nil {
		return r, err
	}
	var c cells
	r.RunID, r.Workflow, r.Version = c.text("run_id", v[0]), c.text("workflow", v[1]), c.text("version", v[2])
	r.Status = journal.Status(c.text("status", v[3]))
	r.Input, r.Output = c.json("input", v[4]), c.json("output", v[5])
	r.Error, r.AttentionStep, r.AttentionKind = c.text("error", v[6]), c.text("attention_step", v[7]), c.text("attention_kind", v[8])
	r.Attempts, r.LeaseOwner = int(c.integer("attempts", v[9])), c.text("lease_owner", v[10])
	r.LeaseUntil, r.Epoch = c.time("lease_until", v[11]), c.integer("epoch", v[12])
	r.CreatedAt, r.UpdatedAt = c.time("created_at", v[13]), c.time("updated_at", v[14])
	r.FailedStep, r.Parent, r.ErrorDetail = c.text("failed_step", v[15]), c.text("parent_run_id", v[16]), c.json("error_detail", v[17])
	r.ClaimsSinceProgress = int(c.integer("claims since progress", v[18]))
	r.WaitKind, r.WaitName, r.WakeAt = c.text("wait_kind", v[19]), c.text("wait_name", v[20]), c.time("wake_at", v[21])
	r.Moves = c.moves(v[22])
	r.CancelRequested, r.Deadline = c.time("cancel_requested_at", v[23]), c.time("deadline", v[24])
	r.ContinuedFrom, r.ContinuedAs = c.text("continued_from", v[25]), c.text("continued_as", v[26])
	r.Queue, r.QueueKey, r.Priority = c.text("queue", v[27]), c.text("queue_key", v[28]), int(c.integer("priority", v[29]))
	r.Unreadable = c.problem()
	return r, nil
}

// The hot path's statements, shared with every SQL journal (sqljournal).
var (
	entrySQL     = sqljournal.EntryStepsSQL(dialect{})
	writeStepSQL = sqljournal.WriteStepSQL(dialect{})
	finishSQL    = sqljournal.FinishSQL(dialect{})
)

// scanStep scans sqljournal.StepColumns. Like scanRun, it reads a row
// whose columns do not convert as far as it can, and names them in its
// Unreadable.
func scanStep(s scanner) (journal.StepRecord, error) {
	var st journal.StepRecord
	var v [14]any
	dest := make([]any, len(v))
	for i := range v {
		dest[i] = &v[i]
	}
	if err := s.Scan(dest...); err != nil {
		return st, err
	}
	var c cells
	st.RunID, st.StepKey, st.Name = c.text("run_id", v[0]), c.text("step_key", v[1]), c.text("name", v[2])
	st.Status, st.Result, st.Error = journal.StepStatus(c.text("status", v[3])), c.json("result", v[4]), c.text("error", v[5])
	st.Attempt, st.AttemptBase, st.Seq = int(c.integer("attempt", v[6])), int(c.integer("attempt_base", v[7])), c.integer("seq", v[8])
	st.StartedAt, st.FinishedAt = c.time("started_at", v[9]), c.time("finished_at", v[10])
	st.ErrorDetail, st.Final, st.History = c.json("error_detail", v[11]), c.integer("final", v[12]) != 0, c.history(v[13])
	st.Unreadable = c.problem()
	return st, nil
}

// cells converts the columns of one row, scanned as the values SQLite
// stores (int64, float64, string, []byte or nil), to their fields, and
// keeps the first column that does not convert.
type cells struct{ bad string }

func (c *cells) fail(col string, v any, want string) {
	if c.bad == "" {
		c.bad = fmt.Sprintf("%s %s is not %s", col, shown(v), want)
	}
}

// problem is why the row cannot be read as stored, or "".
func (c *cells) problem() string { return c.bad }

// shown renders a stored value for a person: quoted text, or the number.
func shown(v any) string {
	switch x := v.(type) {
	case string:
		return quoteCut(x)
	case []byte:
		return quoteCut(string(x))
	case nil:
		return "NULL"
	}
	return fmt.Sprint(v)
}

func quoteCut(s string) string {
	if len(s) > 60 {
		return strconv.Quote(s[:60]) + "..."
	}
	return strconv.Quote(s)
}

// text reads a TEXT column; NULL reads as "".
func (c *cells) text(col string, v any) string {
	switch x := v.(type) {
	case string:
		return x
	case []byte:
		return string(x)
	case nil:
		return ""
	case int64:
		return strconv.FormatInt(x, 10)
	}
	c.fail(col, v, "text")
	return ""
}

// integer reads an INTEGER column; NULL reads as 0 (a column the entry
// read leaves out).
func (c *cells) integer(col string, v any) int64 {
	switch x := v.(type) {
	case int64:
		return x
	case nil:
		return 0
	case float64:
		if x == float64(int64(x)) {
			return int64(x)
		}
	}
	c.fail(col, v, "an integer")
	return 0
}

// time reads a timestamp in timeFormat; "" and NULL read as the zero time.
func (c *cells) time(col string, v any) time.Time {
	s := c.text(col, v)
	if s == "" {
		return time.Time{}
	}
	t, err := time.Parse(timeFormat, s)
	if err != nil {
		c.fail(col, v, "a timestamp ("+timeFormat+")")
	}
	return t
}

// json reads a JSON column as stored, NULL as nil. Whether it decodes is
// for what reads it to say: the engine parks a run whose step result does
// not decode into what the step returns.
func (c *cells) json(col string, v any) json.RawMessage {
	if v == nil {
		return nil
	}
	return json.RawMessage(c.text(col, v))
}

// history reads the history column: a JSON list of attempts, or NULL.
func (c *cells) history(v any) []journal.AttemptRecord {
	out, err := journal.DecodeHistory([]byte(c.text("history", v)))
	if err != nil && c.bad == "" {
		c.bad = err.Error()
	}
	return out
}

// moves reads the moves column: a JSON list of moves, or NULL.
func (c *cells) moves(v any) []journal.Move {
	out, err := journal.DecodeMoves([]byte(c.text("moves", v)))
	if err != nil && c.bad == "" {
		c.bad = err.Error()
	}
	return out
}

// querier is what both *sql.DB and *sql.Tx offer.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

func (j *Journal) run(ctx context.Context, q querier, runID string) (journal.RunRecord, error) {
	j.reads.Add(1)
	r, err := scanRun(q.QueryRowContext(ctx, `SELECT `+runColumns+` FROM resume_runs WHERE run_id = ?`, runID))
	if errors.Is(err, sql.ErrNoRows) {
		return r, fmt.Errorf("run %s: %w", runID, journal.ErrRunNotFound)
	}
	return r, err
}

// CreateRun inserts r unless its run id exists, and returns the stored run.
// A held run's lease is counted once the insert holds the write lock.
func (j *Journal) CreateRun(ctx context.Context, r journal.RunRecord) (journal.RunRecord, bool, error) {
	if err := journal.CheckRun(r); err != nil {
		return r, false, fmt.Errorf("create run: %w", err)
	}
	r = r.Created()
	lease := r.LeaseUntil.Sub(r.CreatedAt)
	var stored journal.RunRecord
	var created bool
	err := j.group.Do(ctx, func(ctx context.Context, tx *sql.Tx) error {
		return j.withTx(ctx, tx, func(tx *sql.Tx) error {
			var err error
			stored, created, err = j.createRun(ctx, tx, r, lease)
			return err
		})
	})
	if err != nil {
		return r, false, err
	}
	return stored, created, nil
}

// createRun inserts r in tx unless its run id exists, and returns the
// stored run and whether it was created.
func (j *Journal) createRun(ctx context.Context, tx *sql.Tx, r journal.RunRecord, lease time.Duration) (journal.RunRecord, bool, error) {
	now := j.clock()
	if r.LeaseOwner != "" {
		r.LeaseUntil = now.Add(lease)
	}
	if !r.Deadline.IsZero() {
		r.Deadline = now.Add(r.Deadline.Sub(r.CreatedAt))
	}
	if r.Parent != "" {
		if err := inheritStop(ctx, tx, &r); err != nil {
			return r, false, err
		}
	}
	res, err := tx.ExecContext(ctx, `INSERT INTO resume_runs
		(run_id, workflow, version, status, input, lease_owner, lease_until, epoch, attempts, created_at, updated_at, parent_run_id,
			wait_kind, wake_at, deadline, cancel_requested_at, queue, queue_key, priority)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (run_id) DO NOTHING`,
		r.RunID, r.Workflow, r.Version, r.Status, string(r.Input), r.LeaseOwner, ts(r.LeaseUntil), r.Epoch, r.Attempts, ts(r.CreatedAt), ts(r.UpdatedAt), r.Parent,
		r.WaitKind, ts(r.WakeAt), ts(r.Deadline), ts(r.CancelRequested), r.Queue, r.QueueKey, r.Priority)
	if err != nil {
		return r, false, writeLock(err)
	}
	if n, _ := res.RowsAffected(); n == 1 {
		return r, true, nil
	}
	stored, err := j.run(ctx, tx, r.RunID)
	return stored, false, err
}

// inheritStop gives child run r its parent's deadline, when that is
// earlier than its own, and its parent's cancellation.
func inheritStop(ctx context.Context, tx *sql.Tx, r *journal.RunRecord) error {
	var deadline, cancelAt string
	err := tx.QueryRowContext(ctx, `SELECT deadline, cancel_requested_at FROM resume_runs WHERE run_id = ?`, r.Parent).Scan(&deadline, &cancelAt)
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("run %s: read its parent %s: %w", r.RunID, r.Parent, err)
	}
	if d, err := time.Parse(timeFormat, deadline); err == nil && (r.Deadline.IsZero() || d.Before(r.Deadline)) {
		r.Deadline = d
	}
	if at, err := time.Parse(timeFormat, cancelAt); err == nil {
		r.CancelRequested = at
	}
	return nil
}

// claimSQL takes a run: pending or waiting (of no queue: a queue's runs
// start through its claim only, within its limits), its lease expired
// while its owner is not known to be alive (resume_owner_alive, see
// liveness.go), held by the abandoned lease given, or (when asked) held
// by an owner whose liveness lock is free (resume_owner_gone).
const claimSQL = `UPDATE resume_runs SET
		status = 'running', attempts = attempts + 1, epoch = epoch + 1,
		lease_owner = ?1, lease_until = ?2, updated_at = ?3, error = '', attention_step = '', attention_kind = '',
		` + claimWaitSet + `
	WHERE run_id = ?4 AND ((queue = '' AND (status = 'pending' OR status = 'waiting')) OR (status = 'running' AND
		((lease_until < ?3 AND (lease_owner = ?1 OR NOT resume_owner_alive(?8, lease_owner))) OR (lease_owner = ?5 AND epoch = ?6)
		OR (?7 AND lease_owner <> ?1 AND resume_owner_gone(?8, lease_owner)))))
	RETURNING ` + runColumns

func (j *Journal) entrySteps(ctx context.Context, tx *sql.Tx, runID string) ([]journal.StepRecord, error) {
	j.reads.Add(1)
	rows, err := tx.StmtContext(ctx, j.entryStmt).QueryContext(ctx, runID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []journal.StepRecord
	var v [12]any
	dest := make([]any, len(v))
	for i := range v {
		dest[i] = &v[i]
	}
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return nil, err
		}
		// A row whose columns do not convert is returned with what could
		// be read and why not: the engine parks its run.
		var c cells
		s := journal.StepRecord{RunID: runID, StepKey: c.text("step_key", v[0]), Status: journal.StepStatus(c.text("status", v[1])),
			Result: c.json("result", v[2]), Seq: c.integer("seq", v[3]), Error: c.text("error", v[4]),
			Attempt: int(c.integer("attempt", v[5])), AttemptBase: int(c.integer("attempt_base", v[6])),
			StartedAt: c.time("started_at", v[7]), FinishedAt: c.time("finished_at", v[8]), ErrorDetail: c.json("error_detail", v[9]),
			Final: c.integer("final", v[10]) != 0, History: c.history(v[11])}
		s.Unreadable = c.problem()
		out = append(out, s)
	}
	return out, rows.Err()
}

// Claim takes the run if it is pending, its lease expired, c.Abandoned
// holds it, or (with c.TakeOverDead) its owner's lock file is no longer
// locked, and reads its journal in the same transaction. The lease is
// counted from the moment the transaction holds the write lock. A refused
// claim reads the run's row only.
func (j *Journal) Claim(ctx context.Context, c journal.ClaimRequest) (journal.RunRecord, []journal.StepRecord, error) {
	runID := c.RunID
	var deadOwner string
	var deadEpoch int64 = -1
	if c.Abandoned != nil {
		deadOwner, deadEpoch = c.Abandoned.Owner, c.Abandoned.Epoch
	}
	tx, err := j.db.BeginTx(ctx, nil)
	if err != nil {
		return journal.RunRecord{}, nil, writeLock(err)
	}
	defer tx.Rollback()
	// Read the clock once the write lock is held: a wait for it must not
	// eat the lease. The owner's liveness is checked under the same lock:
	// it cannot renew or write in between.
	t := j.clock()
	r, err := scanRun(tx.StmtContext(ctx, j.claimStmt).QueryRowContext(ctx,
		c.Owner, ts(t.Add(c.Lease)), ts(t), runID, deadOwner, deadEpoch, c.TakeOverDead, j.live.dir))
	claimed := err == nil
	if errors.Is(err, sql.ErrNoRows) {
		r, err = j.run(ctx, tx, runID)
	}
	if err != nil {
		return r, nil, err
	}
	if !claimed {
		return r, nil, fmt.Errorf("run %s is %s: %w", runID, r.Status, journal.ErrRunBusy)
	}
	steps, err := j.entrySteps(ctx, tx, runID)
	if err != nil {
		return r, nil, err
	}
	if err := tx.Commit(); err != nil {
		return r, nil, err
	}
	j.commits.Add(1)
	return r, steps, nil
}

// claimNextSQL is the statement of ClaimBatch for up to lim runs, and its
// arguments, at the journal's time t.
//
// The lim oldest claimable runs are the oldest of three sets of up to lim:
// the oldest pending runs, the oldest running ones whose lease lapsed, and
// the waiting ones whose wake-up time passed, earliest due first. Each is
// found on its own, in an index that yields it first (pending and running:
// resume_runs_by_status_created, in the order wanted; waiting:
// resume_runs_by_wake, the due ones only, in wake-up order), so that the
// claim's cost does not grow with the runs pending or waiting
// (TestWaitingClaimUsesIndex, TestClaimBatchPlan): one condition OR-ing
// the three read every pending run and sorted them, and due runs taken
// oldest first were all read and sorted at each claim of a storm.
func (j *Journal) claimNextSQL(c journal.ClaimNextRequest, t time.Time, lim int) (string, []any) {
	l := strconv.Itoa(lim)
	now := ts(t)
	mine, versionsOK, vargs := claimVersions(c, t)
	ofWorkflows := `
				AND (parent_run_id = '' OR detached = 1)
				AND workflow IN (?` + strings.Repeat(", ?", len(c.Workflows)-1) + `)` + versionsOK
	var workflows []any
	for _, w := range c.Workflows {
		workflows = append(workflows, w)
	}
	// A lapsed lease of a live owner is not taken, but for the claimer's
	// own of a run it does not execute now: it lost track of that run.
	notHeld := "1"
	var holding []any
	if len(c.Holding) > 0 {
		notHeld = "run_id NOT IN (?" + strings.Repeat(", ?", len(c.Holding)-1) + ")"
		for _, id := range c.Holding {
			holding = append(holding, id)
		}
	}
	oldest := func(cond, order string) string {
		return `SELECT * FROM (SELECT run_id, created_at FROM resume_runs
				WHERE ` + cond + ofWorkflows + `
				ORDER BY ` + order + ` LIMIT ` + l + `)`
	}
	// Pending and due runs, a workflow at a time, from the indexes that
	// hold exactly those (resume_runs_claim_pending, _claim_due), in the
	// order wanted: read from an index of every run of the status, a claim
	// walked past the runs it may not take that are older than its own (a
	// queue's backlog, other programs' workflows). SQLite cannot merge the
	// ranges of an IN list in order, nor join laterally: a subquery
	// correlated with each of the claimer's workflows (json_each) reads
	// that workflow's oldest. (One branch of a compound SELECT a workflow
	// cost 30 µs a workflow at each claim.)
	// Each workflow once: a workflow listed twice would read its runs
	// twice, and the pick would take fewer runs.
	list, _ := json.Marshal(slices.Compact(slices.Sorted(slices.Values(c.Workflows)))) // strings: cannot fail
	each := `
				AND (parent_run_id = '' OR detached = 1) AND workflow = f.value` + versionsOK
	ofEach := func(cond, order string) string {
		return `SELECT r.run_id, r.created_at FROM json_each(?) AS f, resume_runs AS r
				WHERE r.run_id IN (SELECT run_id FROM resume_runs
					WHERE ` + cond + each + `
					ORDER BY ` + order + ` LIMIT ` + l + `)`
	}
	args := append(vargs, c.Owner, ts(t.Add(c.Lease)), now)
	args = append(args, string(list))
	args = append(append(append(args, now, c.Owner), holding...), c.Owner, j.live.dir)
	args = append(args, workflows...)
	args = append(args, string(list), now)
	return mine + `UPDATE resume_runs SET
			status = 'running', attempts = attempts + 1, epoch = epoch + 1,
			lease_owner = ?, lease_until = ?, updated_at = ?, error = '', attention_step = '', attention_kind = '',
			wait_kind = '', wait_name = '', wake_at = CASE WHEN status = 'waiting' THEN wake_at ELSE '' END
		WHERE run_id IN (
			SELECT run_id FROM (
				` + ofEach(`status = 'pending' AND queue = ''`, `created_at, run_id`) + `
				UNION ALL
				` + oldest(`status = 'running' AND lease_until < ? AND
					((lease_owner = ? AND `+notHeld+`) OR (lease_owner <> ? AND NOT resume_owner_alive(?, lease_owner)))`, `created_at, run_id`) + `
				UNION ALL
				` + ofEach(waitDue+` AND queue = ''`, `wake_at`) + `)
			ORDER BY created_at, run_id LIMIT ` + l + `)
		RETURNING ` + runColumns, args
}

// claimVersions is ClaimNext's rule for c.Versions (see
// journal.ClaimNextRequest): a WITH clause listing the versions the worker
// may claim, the condition on a candidate run, and the WITH clause's
// arguments; all empty when c.Versions is nil (any version). t is the
// journal's clock. The list is computed once per claim from c and the
// advertisements, not per candidate run, so that runs skipped at the head
// of the queue cost no more than a lookup each.
func claimVersions(c journal.ClaimNextRequest, t time.Time) (with, cond string, args []any) {
	if len(c.Versions) == 0 {
		return "", "", nil
	}
	with = `WITH mine (workflow, version) AS (` + versionRows(len(c.Versions)) + `),
		older (workflow, version) AS (` + versionRows(len(c.Older)) + `),
		cutoff (at) AS (VALUES (?)),` + claimableVersions
	for _, vs := range [][]journal.WorkflowVersion{c.Versions, c.Older} {
		for _, v := range vs {
			args = append(args, v.Workflow, v.Version)
		}
	}
	args = append(args, ts(t.Add(-c.AdvertisedWithin)))
	return with, `
				AND (workflow, version) IN (SELECT workflow, version FROM claimable)`, args
}

// versionRows is the body of a WITH clause of n (workflow, version) rows
// bound as arguments: VALUES for n > 0, an empty select for none.
func versionRows(n int) string {
	if n == 0 {
		return `SELECT '', '' WHERE 0`
	}
	return `VALUES (?, ?)` + strings.Repeat(", (?, ?)", n-1)
}

// claimableVersions lists the versions a worker may claim runs of: its
// own (mine), and those its versions descend from by the code's lineage
// (older) that no worker advertised since the cutoff. The manifests' seq,
// the order in which the journal first saw versions, plays no part: a
// newer program may have met the journal first.
const claimableVersions = `
		claimable (workflow, version) AS (
			SELECT workflow, version FROM mine
			UNION
			SELECT older.workflow, older.version FROM older
			WHERE NOT EXISTS (SELECT 1 FROM resume_workers w
					WHERE w.workflow = older.workflow AND w.version = older.version AND w.seen_at >= (SELECT at FROM cutoff)))
		`

// RenewLease extends the lease to d from the moment the write lock is
// held, if it is still held.
func (j *Journal) RenewLease(ctx context.Context, l journal.Lease, d time.Duration) error {
	return j.store.RenewLease(ctx, l, d)
}

func leaseHeld(res sql.Result, l journal.Lease) error {
	n, err := res.RowsAffected()
	if err != nil {
		return err
	}
	return sqljournal.LeaseHeld(n, l)
}

func writeStep(ctx context.Context, stmt *sql.Stmt, l journal.Lease, s journal.StepRecord) error {
	args, err := stepArgs(l, s)
	if err != nil {
		return err
	}
	res, err := stmt.ExecContext(ctx, args...)
	if err != nil {
		return err
	}
	return leaseHeld(res, l)
}

// stepArgs checks s and returns writeStepSQL's arguments for it, fenced by
// l (sqljournal.StepArgs).
func stepArgs(l journal.Lease, s journal.StepRecord) ([]any, error) {
	return sqljournal.StepArgs(dialect{}, l, s)
}

// WriteStep upserts the step's row, fenced, and returns once it is
// durable. Rows that concurrent runs write meanwhile commit together, in
// one transaction and one fsync (see [groupCommit]).
func (j *Journal) WriteStep(ctx context.Context, l journal.Lease, s journal.StepRecord) error {
	args, err := stepArgs(l, s)
	if err != nil {
		return err
	}
	return j.group.Do(ctx, func(ctx context.Context, tx *sql.Tx) error {
		stmt := j.writeStepStmt
		if tx != nil {
			stmt = tx.StmtContext(ctx, stmt)
		}
		res, err := stmt.ExecContext(ctx, args...)
		if err != nil {
			return fmt.Errorf("run %s, step %s: %w", l.RunID, s.StepKey, writeLock(err))
		}
		return leaseHeld(res, l)
	})
}

// BeginStep opens a transaction for a tx step: the step's writes and its
// journal row commit together.
func (j *Journal) BeginStep(ctx context.Context, l journal.Lease) (journal.StepTx, error) {
	tx, err := j.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, writeLock(err)
	}
	return &stepTx{j: j, tx: tx, lease: l}, nil
}

type stepTx struct {
	j     *Journal
	tx    *sql.Tx
	lease journal.Lease
	done  bool
}

// Handle returns the *sql.Tx.
func (t *stepTx) Handle() any { return t.tx }

func (t *stepTx) Commit(ctx context.Context, s journal.StepRecord) error {
	if err := writeStep(ctx, t.tx.StmtContext(ctx, t.j.writeStepStmt), t.lease, s); err != nil {
		return err
	}
	t.done = true
	if err := t.tx.Commit(); err != nil {
		return err
	}
	t.j.commits.Add(1)
	return nil
}

func (t *stepTx) Rollback() error {
	if t.done {
		return nil
	}
	t.done = true
	return t.tx.Rollback()
}

// FinishRun records the run's status and releases its lease, fenced. A
// run suspending for a signal kept already, or for a child that no longer
// waits, is stored pending instead (see journal.Journal.Signal).
func (j *Journal) FinishRun(ctx context.Context, l journal.Lease, r journal.RunRecord) error {
	if err := journal.CheckValue("output", r.Output); err != nil {
		return fmt.Errorf("run %s: finish: %w", l.RunID, err)
	}
	waiting := r.Status == journal.StatusWaiting && (r.WaitKind == journal.WaitSignal || r.WaitKind == journal.WaitChild || r.WaitKind == journal.WaitChildren)
	return j.group.Do(ctx, func(ctx context.Context, tx *sql.Tx) error {
		if !waiting {
			stmt := j.finishStmt
			if tx != nil {
				stmt = tx.StmtContext(ctx, stmt)
			}
			return j.finish(ctx, stmt, l, r)
		}
		return j.withTx(ctx, tx, func(tx *sql.Tx) error {
			r := r
			over, err := j.store.WaitOver(ctx, executor{tx}, r)
			if err != nil {
				return err
			}
			if over {
				r.Status, r.WaitKind, r.WaitName, r.WakeAt = journal.StatusPending, "", "", time.Time{}
			}
			return j.finish(ctx, tx.StmtContext(ctx, j.finishStmt), l, r)
		})
	})
}

func (j *Journal) finish(ctx context.Context, stmt *sql.Stmt, l journal.Lease, r journal.RunRecord) error {
	res, err := stmt.ExecContext(ctx, sqljournal.FinishArgs(dialect{}, l, r)...)
	if err != nil {
		return writeLock(err)
	}
	return leaseHeld(res, l)
}

// LoadRun reads a run and its full journal, ordered by seq.
func (j *Journal) LoadRun(ctx context.Context, runID string) (journal.RunRecord, []journal.StepRecord, error) {
	return j.store.LoadRun(ctx, runID)
}

// ListRuns lists runs matching f, oldest first (newest first with
// f.Newest).
func (j *Journal) ListRuns(ctx context.Context, f journal.RunFilter) ([]journal.RunRecord, error) {
	return j.store.ListRuns(ctx, f)
}

// CountRuns counts the runs matching f per status, ignoring f.Statuses,
// f.After and f.Limit.
func (j *Journal) CountRuns(ctx context.Context, f journal.RunFilter) (map[journal.Status]int, error) {
	return j.store.CountRuns(ctx, f)
}

// Resolve applies a person's resolution to an in_flight step of a run in
// needs_attention, atomically.
func (j *Journal) Resolve(ctx context.Context, runID, stepKey string, res journal.Resolution) error {
	return j.store.Resolve(ctx, runID, stepKey, res)
}

// Retry makes a failed run pending and reopens the step whose failure ended
// it, with a fresh budget; other failed rows stay final.
func (j *Journal) Retry(ctx context.Context, runID string) error {
	return j.store.Retry(ctx, runID)
}

// Manifest returns a stored manifest, or "" when the version is unknown.
func (j *Journal) Manifest(ctx context.Context, workflow, version string) (string, error) {
	return j.store.Manifest(ctx, workflow, version)
}

// LoadManifest returns a stored manifest row; found is false when the
// version is unknown.
func (j *Journal) LoadManifest(ctx context.Context, workflow, version string) (journal.ManifestRecord, bool, error) {
	return j.store.LoadManifest(ctx, workflow, version)
}

// ListManifests returns a workflow's stored manifests, newest (highest
// seq) first.
func (j *Journal) ListManifests(ctx context.Context, workflow string) ([]journal.ManifestRecord, error) {
	return j.store.ListManifests(ctx, workflow)
}

// AcceptVersion moves a run stopped on a version change to version,
// pending, atomically; any other run is refused and left unchanged.
func (j *Journal) AcceptVersion(ctx context.Context, runID, version string) error {
	return j.store.AcceptVersion(ctx, runID, version)
}

// SaveManifest stores a version's manifest the first time it is seen,
// with the next seq; a stored row without a definition gets m's.
func (j *Journal) SaveManifest(ctx context.Context, m journal.ManifestRecord) error {
	return j.store.SaveManifest(ctx, m)
}

// withTx calls fn in tx, a group commit's transaction, or, when tx is nil,
// in a transaction of its own that it commits (and does not count: the
// group commit does).
func (j *Journal) withTx(ctx context.Context, tx *sql.Tx, fn func(*sql.Tx) error) error {
	if tx != nil {
		return fn(tx)
	}
	tx, err := j.db.BeginTx(ctx, nil)
	if err != nil {
		return writeLock(err)
	}
	defer tx.Rollback()
	if err := fn(tx); err != nil {
		return err
	}
	return writeLock(tx.Commit())
}

func (j *Journal) inTx(ctx context.Context, fn func(*sql.Tx) error) error {
	tx, err := j.db.BeginTx(ctx, nil)
	if err != nil {
		return writeLock(err)
	}
	defer tx.Rollback()
	if err := fn(tx); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	j.commits.Add(1)
	return nil
}
