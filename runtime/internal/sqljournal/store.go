package sqljournal

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/resumegen/resumegen/runtime/journal"
)

// Config is what a backend gives a [Store].
type Config struct {
	// Dialect is the backend's SQL spelling.
	Dialect Dialect
	// Read runs the reads made outside a transaction (a pool, or
	// SQLite's read-only connections).
	Read Executor
	// Reads and Commits are the backend's counters (journal.Counters):
	// a Store adds the reads it makes; InTx counts its commits.
	Reads, Commits *atomic.Int64
	// ScanRun scans the backend's run columns (RunColumns), then extra
	// destinations.
	ScanRun func(row Row, extra ...any) (journal.RunRecord, error)
	// ScanStep scans the backend's step columns (StepColumns).
	ScanStep func(row Row) (journal.StepRecord, error)
	// ScanSchedule scans the backend's schedule columns
	// (ScheduleColumns).
	ScanSchedule func(row Row) (journal.ScheduleRecord, error)
	// Clock is the journal's clock as the host reads it: where a dialect
	// stamps rows with the host's time (SQLite: the journal's clock, see
	// its WithClock), the time it stamps.
	Clock func() time.Time
	// InTx runs fn in a read-write transaction, holding what the backend
	// must hold to change a run, and commits it (counting the commit) if
	// fn succeeds.
	InTx func(ctx context.Context, fn func(tx Executor) error) error
	// Write runs fn, whose one statement is a transaction of its own,
	// holding what the backend must hold to change a run (as InTx: on
	// PostgreSQL that statement alone, in autocommit; on SQLite a
	// transaction that holds the write lock), and counts its commit if
	// fn succeeds.
	Write func(ctx context.Context, fn func(tx Executor) error) error
	// PositionalParams lets a statement of many arguments (a fork's copy
	// of step rows) use "?" placeholders bound in order instead of the
	// dialect's numbered ones: SQLite's driver binds each numbered
	// placeholder by searching the arguments for it, in time quadratic in
	// their number.
	PositionalParams bool
}

// Store is the shared half of a SQL journal: the operations whose logic
// every SQL backend shares, on the backend's [Config].
type Store struct {
	cfg Config
	sql statements
	sch scheduleStatements
}

// statements are the Store's statements, rebound once.
type statements struct {
	listRuns, countRuns, manifest, loadManifest, listManifests string
	recordAction, listActions, sealingKeys                     string
	selectRun, selectStepStatus, resolveDone, resolveRedo      string
	makePending, wakeParents, retrySteps, retryRun             string
	acceptVersion, selectRelabel, relabel                      string
	keptSignal, listSignals, consumeSignal, parentOf           string
	unwindable, cancelRequested                                string
	readRun, readSteps, writeStep                              string
	lockRun, childrenBusy, signalKept, childSettled            string
	deleteWorkers, lockAncestors, saveManifest, insertSignal   string
	nextSignal                                                 string
}

// RunColumns are the columns of resume_runs a backend's ScanRun scans, in
// its order.
const RunColumns = `run_id, workflow, version, status, input, output, error, attention_step, attention_kind,
	attempts, lease_owner, lease_until, epoch, created_at, updated_at, failed_step, parent_run_id, error_detail,
	attempts - progress_attempt, wait_kind, wait_name, wake_at, moves, cancel_requested_at, deadline,
	continued_from, continued_as, queue, queue_key, priority`

// ManifestColumns are the columns of resume_manifests, as scanManifest
// reads them.
const ManifestColumns = `workflow, version, manifest, created_at, definition, seq`

// New returns the Store of a backend.
func New(cfg Config) *Store {
	d := cfg.Dialect
	forUpdate := ""
	if f := d.ForUpdate(); f != "" {
		forUpdate = " " + f
	}
	s := statements{
		// Each run with the key of its last journaled step, in one query.
		listRuns: `SELECT ` + RunColumns + `, COALESCE((SELECT s.step_key FROM {schema}.resume_steps s
			WHERE s.run_id = resume_runs.run_id ORDER BY s.seq DESC LIMIT 1), '') FROM {schema}.resume_runs`,
		countRuns:     `SELECT status, COUNT(*) FROM {schema}.resume_runs`,
		manifest:      `SELECT manifest FROM {schema}.resume_manifests WHERE workflow = $1 AND version = $2`,
		loadManifest:  `SELECT ` + ManifestColumns + ` FROM {schema}.resume_manifests WHERE workflow = $1 AND version = $2`,
		listManifests: `SELECT ` + ManifestColumns + ` FROM {schema}.resume_manifests WHERE workflow = $1 ORDER BY seq DESC, version`,
		listActions: `SELECT seq, action, detail, actor, origin, via, at FROM {schema}.resume_actions
			WHERE run_id = $1 ORDER BY seq`,
		sealingKeys:      `SELECT key_id, first_sealed_at FROM {schema}.resume_keys ORDER BY first_sealed_at, key_id`,
		selectRun:        `SELECT ` + RunColumns + ` FROM {schema}.resume_runs WHERE run_id = $1` + forUpdate,
		selectStepStatus: `SELECT status FROM {schema}.resume_steps WHERE run_id = $1 AND step_key = $2` + forUpdate,
		resolveDone: `UPDATE {schema}.resume_steps SET status = 'succeeded', result = $1, error = '', finished_at = $2
			WHERE run_id = $3 AND step_key = $4`,
		resolveRedo: `UPDATE {schema}.resume_steps SET status = 'failed', error = $4,
			attempt_base = attempt, finished_at = $1 WHERE run_id = $2 AND step_key = $3`,
		makePending: `UPDATE {schema}.resume_runs SET status = 'pending', error = '', attention_step = '', attention_kind = '',
			updated_at = $1 WHERE run_id = $2`,
		// The runs that wait, parked, for child run $2 to be settled by a
		// person: its parent, the parent's parent when it waits for the
		// parent, and so on. Each then resumes its child where it stopped.
		wakeParents: `WITH RECURSIVE up(id) AS (
				SELECT parent_run_id FROM {schema}.resume_runs WHERE run_id = $2 AND parent_run_id <> ''
				UNION SELECT r.parent_run_id FROM {schema}.resume_runs r JOIN up ON r.run_id = up.id WHERE r.parent_run_id <> '')
			UPDATE {schema}.resume_runs SET status = 'pending', error = '', attention_step = '', attention_kind = '', updated_at = $1
			WHERE run_id IN (SELECT id FROM up) AND status = 'needs_attention' AND attention_kind = 'child'`,
		retrySteps: `UPDATE {schema}.resume_steps SET attempt_base = attempt, final = false
			WHERE run_id = $1 AND step_key = $2 AND status = 'failed'`,
		retryRun: `UPDATE {schema}.resume_runs SET status = 'pending', error = '', failed_step = '', updated_at = $1 WHERE run_id = $2`,
		acceptVersion: `UPDATE {schema}.resume_runs SET version = $1, status = 'pending', error = '',
			attention_step = '', attention_kind = '', updated_at = $2, moves = {moves} WHERE run_id = $4`,
		selectRelabel: `SELECT s.step_key, s.name, s.status, s.final,
				EXISTS (SELECT 1 FROM {schema}.resume_runs c WHERE c.run_id = s.run_id || '/' || s.step_key)
			FROM {schema}.resume_steps s WHERE s.run_id = $1`,
		relabel: `UPDATE {schema}.resume_steps SET step_key = $1, name = $2 WHERE run_id = $3 AND step_key = $4`,
		keptSignal: `SELECT seq, payload, sent_at FROM {schema}.resume_signals
			WHERE run_id = $1 AND name = $2 AND consumed_key = '' ORDER BY seq LIMIT 1`,
		listSignals: `SELECT run_id, name, seq, payload, sent_at, consumed_key FROM {schema}.resume_signals
			WHERE run_id = $1 ORDER BY seq`,
		consumeSignal: `UPDATE {schema}.resume_signals SET consumed_key = $1
			WHERE run_id = $2 AND seq = $3 AND consumed_key = ''`,
		parentOf: `SELECT parent_run_id FROM {schema}.resume_runs WHERE run_id = $1`,
		// A run has something to unwind when it journaled a step or
		// started a child run.
		unwindable: `SELECT EXISTS (SELECT 1 FROM {schema}.resume_steps WHERE run_id = $1)
			OR EXISTS (SELECT 1 FROM {schema}.resume_runs WHERE parent_run_id = $1)`,
		cancelRequested: `SELECT cancel_requested_at FROM {schema}.resume_runs WHERE run_id = $1`,
		readRun:         `SELECT ` + RunColumns + ` FROM {schema}.resume_runs WHERE run_id = $1`,
		childrenBusy: `SELECT EXISTS (SELECT 1 FROM {schema}.resume_runs
			WHERE parent_run_id = $1 AND status IN ('pending', 'running', 'waiting'))`,
		signalKept: `SELECT EXISTS (SELECT 1 FROM {schema}.resume_signals
			WHERE run_id = $1 AND name = $2 AND consumed_key = '')`,
		childSettled:  `SELECT EXISTS (SELECT 1 FROM {schema}.resume_runs WHERE run_id = $1 AND status <> 'waiting')`,
		deleteWorkers: `DELETE FROM {schema}.resume_workers WHERE owner = $1`,
		insertSignal:  `INSERT INTO {schema}.resume_signals (run_id, name, seq, payload, sent_at) VALUES ($1, $2, $3, $4, $5)`,
		// A definition is added to a version stored without one (by a
		// release that recorded none), never replaced.
		saveManifest: `INSERT INTO {schema}.resume_manifests (workflow, version, manifest, created_at, definition, seq)
			VALUES ($1, $2, $3, $4, $5, (SELECT COALESCE(max(seq), 0) + 1 FROM {schema}.resume_manifests))
			ON CONFLICT (workflow, version) DO UPDATE SET definition = excluded.definition
			WHERE resume_manifests.definition IS NULL AND excluded.definition IS NOT NULL`,
	}
	// A signal's number, the next of run $1's, and the journal's clock
	// (Now's text does not depend on the time it is given): read before
	// a plain insert where statements are in process, or read by the
	// insert itself (see Store.keepSignal).
	a := NewArgs(d)
	if d.InProcess() {
		s.nextSignal = `SELECT COALESCE(MAX(seq), 0) + 1, ` + d.Now(a, time.Time{}) +
			` FROM {schema}.resume_signals WHERE run_id = ` + a.Add("")
	} else {
		run, name, payload := a.Add(""), a.Add(""), a.Add("")
		s.nextSignal = `INSERT INTO {schema}.resume_signals (run_id, name, seq, payload, sent_at)
			SELECT ` + run + `, ` + name + `, COALESCE(MAX(seq), 0) + 1, ` + payload + `, ` + d.Now(a, time.Time{}) + `
			FROM {schema}.resume_signals WHERE run_id = ` + run + ` RETURNING seq, sent_at`
	}
	if forUpdate != "" {
		s.lockRun = `SELECT 1 FROM {schema}.resume_runs WHERE run_id = $1` + forUpdate
		// The ancestors of run $1, locked in run id order (see
		// Store.Signal).
		s.lockAncestors = `WITH RECURSIVE up(id) AS (
				SELECT parent_run_id FROM {schema}.resume_runs WHERE run_id = $1 AND parent_run_id <> ''
				UNION SELECT r.parent_run_id FROM {schema}.resume_runs r JOIN up ON r.run_id = up.id WHERE r.parent_run_id <> '')
			SELECT 1 FROM {schema}.resume_runs WHERE run_id IN (SELECT id FROM up) ORDER BY run_id` + forUpdate
	}
	for _, q := range []*string{
		&s.listRuns, &s.countRuns, &s.manifest, &s.loadManifest, &s.listManifests,
		&s.listActions, &s.sealingKeys, &s.selectRun, &s.selectStepStatus, &s.resolveDone, &s.resolveRedo,
		&s.makePending, &s.wakeParents, &s.retrySteps, &s.retryRun, &s.acceptVersion,
		&s.selectRelabel, &s.relabel, &s.keptSignal, &s.listSignals, &s.consumeSignal, &s.parentOf,
		&s.unwindable, &s.cancelRequested, &s.readRun,
		&s.lockRun, &s.childrenBusy, &s.signalKept, &s.childSettled, &s.deleteWorkers,
		&s.lockAncestors, &s.saveManifest, &s.insertSignal, &s.nextSignal,
	} {
		*q = d.Rebind(*q)
	}
	s.readSteps, s.writeStep = StepsSQL(d), WriteStepSQL(d)
	return &Store{cfg: cfg, sql: s, sch: newScheduleStatements(d)}
}

// Dialect returns the backend's dialect.
func (s *Store) Dialect() Dialect { return s.cfg.Dialect }

// ListRuns lists runs matching f, oldest first (newest first with
// f.Newest), each with the key of its last journaled step.
func (s *Store) ListRuns(ctx context.Context, f journal.RunFilter) ([]journal.RunRecord, error) {
	where, args := RunWhere(s.cfg.Dialect, f, true)
	order := " ORDER BY created_at, run_id"
	if f.Newest {
		order = " ORDER BY created_at DESC, run_id DESC"
	}
	q := s.sql.listRuns + where + order
	if f.Limit > 0 {
		q += fmt.Sprintf(" LIMIT %d", f.Limit)
	}
	s.cfg.Reads.Add(1)
	rows, err := s.cfg.Read.Query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("list runs: %w", err)
	}
	return Collect(rows, "list runs", func(row Row) (journal.RunRecord, error) {
		var last string
		r, err := s.cfg.ScanRun(row, &last)
		r.LastStep = last
		return r, err
	})
}

// CountRuns counts the runs matching f per status, ignoring f.Statuses,
// f.After and f.Limit.
func (s *Store) CountRuns(ctx context.Context, f journal.RunFilter) (map[journal.Status]int, error) {
	f.Statuses, f.After = nil, nil
	where, args := RunWhere(s.cfg.Dialect, f, false)
	s.cfg.Reads.Add(1)
	rows, err := s.cfg.Read.Query(ctx, s.sql.countRuns+where+` GROUP BY status`, args...)
	if err != nil {
		return nil, fmt.Errorf("count runs: %w", err)
	}
	defer rows.Close()
	out := map[journal.Status]int{}
	for rows.Next() {
		var st string
		var n int
		if err := rows.Scan(&st, &n); err != nil {
			return nil, fmt.Errorf("count runs: %w", err)
		}
		out[journal.Status(st)] = n
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("count runs: %w", err)
	}
	return out, nil
}

// RunWhere is the WHERE clause selecting f's runs in dialect d (with the
// keyset condition of f.After when cursor is set), and its arguments.
func RunWhere(d Dialect, f journal.RunFilter, cursor bool) (string, []any) {
	var where []string
	a := NewArgs(d)
	if len(f.Statuses) > 0 {
		statuses := make([]string, len(f.Statuses))
		for i, s := range f.Statuses {
			statuses[i] = string(s)
		}
		cond, args := d.AnyOf("status", a.Len()+1, statuses)
		a.vals = append(a.vals, args...)
		where = append(where, cond)
	}
	for _, c := range [][2]string{{"workflow", f.Workflow}, {"version", f.Version}, {"parent_run_id", f.Parent}} {
		col, v := c[0], c[1]
		if v != "" {
			where = append(where, col+" = "+a.Add(v))
		}
	}
	if f.IDContains != "" {
		where = append(where, d.Contains("run_id", a.Add(f.IDContains)))
	}
	if !f.CreatedAfter.IsZero() {
		where = append(where, "created_at >= "+a.Add(d.Time(f.CreatedAfter)))
	}
	if !f.CreatedBefore.IsZero() {
		where = append(where, "created_at < "+a.Add(d.Time(f.CreatedBefore)))
	}
	if cursor && f.After != nil {
		op := ">"
		if f.Newest {
			op = "<"
		}
		at, id := a.Add(d.Time(f.After.CreatedAt)), a.Add(f.After.RunID)
		where = append(where, "(created_at, run_id) "+op+" ("+at+", "+id+")")
	}
	if len(where) == 0 {
		return "", nil
	}
	return " WHERE " + strings.Join(where, " AND "), a.Values()
}

// ManifestsLock is the key of [Dialect.Serialize] for manifest saves: a
// save reads the highest seq once it holds it, so two versions never
// share one. Its value is PostgreSQL's first advisory lock key since
// manifests were numbered ("resm"), which processes of every release
// take.
const ManifestsLock int64 = 0x7265_736d

// SaveManifest stores a workflow version's manifest, numbered after the
// others, stamped with the host's clock, or adds its definition to a
// version stored without one; a version stored already keeps its
// manifest and number.
func (s *Store) SaveManifest(ctx context.Context, m journal.ManifestRecord) error {
	d := s.cfg.Dialect
	err := s.cfg.InTx(ctx, func(tx Executor) error {
		if lock, args := d.Serialize(ManifestsLock); lock != "" {
			if _, err := tx.Exec(ctx, lock, args...); err != nil {
				return err
			}
		}
		_, err := tx.Exec(ctx, s.sql.saveManifest, m.Workflow, m.Version, m.Manifest, d.RequiredTime(time.Now()), JSON(m.Definition))
		return d.WriteErr(err)
	})
	if err != nil {
		return fmt.Errorf("workflow %s, version %s: save manifest: %w", m.Workflow, m.Version, err)
	}
	return nil
}

// Manifest returns a stored manifest, or "" when the version is unknown.
func (s *Store) Manifest(ctx context.Context, workflow, version string) (string, error) {
	var m string
	s.cfg.Reads.Add(1)
	err := s.cfg.Read.QueryRow(ctx, s.sql.manifest, workflow, version).Scan(&m)
	if s.cfg.Dialect.NoRows(err) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("workflow %s, version %s: read manifest: %w", workflow, version, err)
	}
	return m, nil
}

// scanManifest scans ManifestColumns. A created_at that does not read as
// a time is left zero: the manifest itself is what its readers need.
func (s *Store) scanManifest(row Row) (journal.ManifestRecord, error) {
	var m journal.ManifestRecord
	var created any
	var def []byte
	if err := row.Scan(&m.Workflow, &m.Version, &m.Manifest, &created, &def, &m.Seq); err != nil {
		return m, err
	}
	m.CreatedAt, _ = s.cfg.Dialect.ScanTime(created)
	if def != nil {
		m.Definition = json.RawMessage(def)
	}
	return m, nil
}

// LoadManifest returns a stored manifest row; found is false when the
// version is unknown.
func (s *Store) LoadManifest(ctx context.Context, workflow, version string) (journal.ManifestRecord, bool, error) {
	s.cfg.Reads.Add(1)
	m, err := s.scanManifest(s.cfg.Read.QueryRow(ctx, s.sql.loadManifest, workflow, version))
	if s.cfg.Dialect.NoRows(err) {
		return m, false, nil
	}
	if err != nil {
		return m, false, fmt.Errorf("workflow %s, version %s: load manifest: %w", workflow, version, err)
	}
	return m, true, nil
}

// ListManifests returns a workflow's stored manifests, newest (highest
// seq) first.
func (s *Store) ListManifests(ctx context.Context, workflow string) ([]journal.ManifestRecord, error) {
	s.cfg.Reads.Add(1)
	rows, err := s.cfg.Read.Query(ctx, s.sql.listManifests, workflow)
	if err != nil {
		return nil, fmt.Errorf("workflow %s: list manifests: %w", workflow, err)
	}
	return Collect(rows, "workflow "+workflow+": list manifests", s.scanManifest)
}
