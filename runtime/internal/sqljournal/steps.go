package sqljournal

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/resumegen/resumegen/runtime/journal"
)

// The hot path's statements: what every step, run entry and run end sends.
// A backend executes them its own way (PostgreSQL through the group
// commit's pipelined batches, SQLite through statements prepared on its
// writer connection), but their text, their arguments and what their
// answers mean are written here once. Each is in the shared spelling;
// the functions below return it rebound for a dialect, to be kept (they
// are meant to be called once, when a journal opens).

// StepColumns are the columns of resume_steps in the order a step row's
// statements list them: the first 14 arguments of [StepArgs].
const StepColumns = `run_id, step_key, name, status, result, error, attempt, attempt_base, seq, started_at, finished_at,
	error_detail, final, history`

// EntryColumns are what a run's entry reads of its step rows: what the
// engine needs and no more. A succeeded row is replayed from its key,
// result and seq, so its other columns are NULL; each column converted
// costs, and this halves the read of a long run. The rows come unordered:
// the engine needs only the highest seq.
const EntryColumns = `step_key, status, result, seq,
		CASE WHEN status <> 'succeeded' THEN error END,
		CASE WHEN status <> 'succeeded' THEN attempt END,
		CASE WHEN status <> 'succeeded' THEN attempt_base END,
		CASE WHEN status <> 'succeeded' THEN started_at END,
		CASE WHEN status <> 'succeeded' THEN finished_at END,
		CASE WHEN status <> 'succeeded' THEN error_detail END,
		CASE WHEN status <> 'succeeded' THEN final END,
		CASE WHEN status <> 'succeeded' THEN history END`

// UpsertStep is the conflict clause of a step row's insert: a row written
// again (an attempt, its outcome) replaces the one stored.
const UpsertStep = `ON CONFLICT (run_id, step_key) DO UPDATE SET
		status = excluded.status, result = excluded.result, error = excluded.error,
		attempt = excluded.attempt, attempt_base = excluded.attempt_base, seq = excluded.seq,
		started_at = excluded.started_at, finished_at = excluded.finished_at,
		error_detail = excluded.error_detail, final = excluded.final, history = excluded.history`

// EntryStepsSQL reads a run's ($1) step rows at its entry (EntryColumns).
func EntryStepsSQL(d Dialect) string {
	return d.Rebind(`SELECT ` + EntryColumns + ` FROM {schema}.resume_steps WHERE run_id = $1`)
}

// StepsSQL reads a run's ($1) whole journal, StepColumns, ordered by seq.
func StepsSQL(d Dialect) string {
	return d.Rebind(`SELECT ` + StepColumns + ` FROM {schema}.resume_steps WHERE run_id = $1 ORDER BY seq`)
}

// InsertStep is the insert of a step row's write, after the WITH clause
// of the dialect's [Dialect.StepFence]: the row ($1-$14, [StepArgs]),
// upserted, if cond (the fence's condition) holds.
func InsertStep(cond string) string {
	return `
		INSERT INTO {schema}.resume_steps (` + StepColumns + `)
		SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14
		WHERE ` + cond + `
		` + UpsertStep
}

// WriteStepSQL upserts a step row ($1-$14, [StepArgs]), fenced: it writes
// nothing unless the run's lease ($15 run, $16 owner, $17 epoch) is still
// the writer's ([Dialect.StepFence]), so an answer of no row written means
// the lease was lost ([LeaseHeld]).
func WriteStepSQL(d Dialect) string {
	with, cond := d.StepFence()
	return d.Rebind(with + InsertStep(cond))
}

// StepArgs checks s against the journal's limits and returns the
// arguments of [WriteStepSQL] for it, fenced by l, in dialect d: the
// columns of StepColumns, then the lease.
func StepArgs(d Dialect, l journal.Lease, s journal.StepRecord) ([]any, error) {
	if err := journal.CheckStep(s); err != nil {
		return nil, fmt.Errorf("run %s: write a step: %w", s.RunID, err)
	}
	history, err := journal.EncodeHistory(s.History)
	if err != nil {
		return nil, fmt.Errorf("run %s, step %s: %w", s.RunID, s.StepKey, err)
	}
	return []any{
		s.RunID, s.StepKey, s.Name, string(s.Status), JSON(s.Result), s.Error,
		s.Attempt, s.AttemptBase, s.Seq, d.RequiredTime(s.StartedAt), d.Time(s.FinishedAt),
		JSON(s.ErrorDetail), s.Final, JSON(history),
		l.RunID, l.Owner, l.Epoch,
	}, nil
}

// JSON is a json column's argument: its text, or nil (NULL) for none.
func JSON(b []byte) any {
	if b == nil {
		return nil
	}
	return string(b)
}

// FinishSQL records the end of a run's entry ($1 its status) and releases
// its lease, fenced: it changes nothing unless the lease ($12 run, $13
// owner, $14 epoch) is still the writer's. A run asked to stop that
// suspends ($1 waiting) is stored pending instead, so that its unwinding
// does not wait, and without what it waited for. The arguments are
// [FinishArgs].
func FinishSQL(d Dialect) string {
	noStop := d.Unset("cancel_requested_at")
	return d.Rebind(`UPDATE {schema}.resume_runs SET
		status = CASE WHEN $1 = 'waiting' AND NOT (` + noStop + `) THEN 'pending' ELSE $1 END,
		output = $2, error = $3, attention_step = $4, attention_kind = $5,
		lease_owner = '', lease_until = ` + d.NoTime() + `, updated_at = $6,
		failed_step = $7, error_detail = $8, progress_attempt = attempts,
		wait_kind = CASE WHEN ` + noStop + ` THEN $9 ELSE '' END,
		wait_name = CASE WHEN ` + noStop + ` THEN $10 ELSE '' END,
		wake_at = CASE WHEN ` + noStop + ` THEN ` + d.TimeParam("$11") + ` ELSE ` + d.NoTime() + ` END
		WHERE run_id = $12 AND lease_owner = $13 AND epoch = $14`)
}

// FinishArgs are the arguments of [FinishSQL] for r, fenced by l, in
// dialect d.
func FinishArgs(d Dialect, l journal.Lease, r journal.RunRecord) []any {
	return []any{string(r.Status), JSON(r.Output), r.Error, r.AttentionStep, r.AttentionKind, d.RequiredTime(r.UpdatedAt),
		r.FailedStep, JSON(r.ErrorDetail), r.WaitKind, r.WaitName, d.Time(r.WakeAt), l.RunID, l.Owner, l.Epoch}
}

// LeaseHeld is nil when a write fenced by lease l changed n rows, and
// journal.ErrLeaseLost, naming the run and epoch, when it changed none.
func LeaseHeld(n int64, l journal.Lease) error {
	if n == 0 {
		return fmt.Errorf("run %s, epoch %d: %w", l.RunID, l.Epoch, journal.ErrLeaseLost)
	}
	return nil
}

// RenewLease extends the lease l to d from now, by the journal's clock,
// if it is still held, in one statement that is its own transaction
// (Config.Write). The clock is read once the backend holds what it must to
// write (SQLite: its write lock), so that a wait for it does not eat the
// lease.
func (s *Store) RenewLease(ctx context.Context, l journal.Lease, d time.Duration) error {
	dl := s.cfg.Dialect
	err := s.cfg.Write(ctx, func(tx Executor) error {
		a := NewArgs(dl)
		q := `UPDATE {schema}.resume_runs SET lease_until = ` + dl.Later(a, s.cfg.Clock(), d) + `
			WHERE run_id = ` + a.Add(l.RunID) + ` AND lease_owner = ` + a.Add(l.Owner) + ` AND epoch = ` + a.Add(l.Epoch) + `
			AND status = 'running'`
		n, err := tx.Exec(ctx, dl.Rebind(q), a.Values()...)
		if err != nil {
			return dl.WriteErr(err)
		}
		return LeaseHeld(n, l)
	})
	if err != nil && !errors.Is(err, journal.ErrLeaseLost) {
		return fmt.Errorf("run %s: renew lease: %w", l.RunID, err)
	}
	return err
}

// LoadRun reads a run and its whole journal, ordered by seq, outside a
// transaction (Config.Read): two reads.
func (s *Store) LoadRun(ctx context.Context, runID string) (journal.RunRecord, []journal.StepRecord, error) {
	s.cfg.Reads.Add(1)
	r, err := s.cfg.ScanRun(s.cfg.Read.QueryRow(ctx, s.sql.readRun, runID))
	if s.cfg.Dialect.NoRows(err) {
		return r, nil, fmt.Errorf("run %s: %w", runID, journal.ErrRunNotFound)
	}
	if err != nil {
		return r, nil, fmt.Errorf("run %s: read: %w", runID, err)
	}
	s.cfg.Reads.Add(1)
	rows, err := s.cfg.Read.Query(ctx, s.sql.readSteps, runID)
	if err != nil {
		return r, nil, fmt.Errorf("run %s: read journal: %w", runID, err)
	}
	steps, err := Collect(rows, "run "+runID+": read journal", s.cfg.ScanStep)
	return r, steps, err
}

// FirstClaimed is ClaimNext's answer from a ClaimBatch of one: the run it
// claimed and its journal, or ClaimBatch's error (ErrNoRunReady when
// none could be claimed), or the run's own error.
func FirstClaimed(runs []journal.ClaimedRun, err error) (journal.RunRecord, []journal.StepRecord, error) {
	if err != nil {
		return journal.RunRecord{}, nil, err
	}
	if len(runs) == 0 {
		return journal.RunRecord{}, nil, journal.ErrNoRunReady
	}
	return runs[0].Run, runs[0].Steps, runs[0].Err
}
