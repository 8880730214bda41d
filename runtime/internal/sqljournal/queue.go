package sqljournal

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/resumegen/resumegen/runtime/journal"
)

// QueueCandidate is a run a queue's claim may take: its id, its queue
// key, and whether taking it starts it (a pending run: the queue's rate
// counts it) or continues it (a waiting run whose wake-up time passed).
type QueueCandidate struct {
	RunID string
	Key   string
	Start bool
}

// QueueCandidates lists, for a queue's claim in transaction tx, up to n
// runs of queue q of the claimer's workflows and versions, in the order
// to take them: due waiting runs first (work started finishes first),
// then, when pending, pending runs by priority, highest first, then
// oldest first; none whose key is in full, none in taken. The backend
// writes it (its version rule and row locks are its own).
type QueueCandidates func(ctx context.Context, tx Executor, q string, full, taken []string, pending bool, n int) ([]QueueCandidate, error)

// QueueState is what a queue's limits leave a claim, as read under the
// queue's lock: the limits, the runs executing (by key) and the starts
// within the rate's period.
type QueueState struct {
	Limits       journal.QueueLimits
	Running      int
	RunningByKey map[string]int
	Started      int
}

// slots is how many runs a claim of up to limit may take, and starts how
// many of them may be starts.
func (s QueueState) slots(limit int) (slots, starts int) {
	slots, starts = limit, limit
	if c := s.Limits.Concurrency; c > 0 {
		slots = min(slots, c-s.Running)
	}
	if r := s.Limits.Rate; r > 0 {
		starts = min(slots, r-s.Started)
	}
	return max(slots, 0), max(min(starts, slots), 0)
}

// keyFull reports whether key has as many runs executing as the queue's
// per-key limit allows.
func (s QueueState) keyFull(key string) bool {
	return s.Limits.PerKey > 0 && s.RunningByKey[key] >= s.Limits.PerKey
}

// Pick chooses the runs a claim of up to limit takes from queue state s,
// asking next for candidates: it takes them in next's order, skipping a
// run whose key is full and a pending one once the period's starts are
// used up, and asks again, without the keys that filled, until it has
// what the limits allow or no candidate is left. Each round either ends
// the claim or adds a full key (or ends the starts), so a key with
// thousands of runs waiting costs one round, not one per run.
func Pick(ctx context.Context, tx Executor, q string, s QueueState, limit int, next QueueCandidates) ([]QueueCandidate, error) {
	slots, starts := s.slots(limit)
	if s.RunningByKey == nil {
		s.RunningByKey = map[string]int{}
	}
	var full, taken []string
	for k := range s.RunningByKey {
		if s.keyFull(k) {
			full = append(full, k)
		}
	}
	slices.Sort(full) // a stable statement for a stable state
	var picked []QueueCandidate
	for len(picked) < slots {
		n := slots - len(picked)
		cands, err := next(ctx, tx, q, full, taken, starts > 0, n)
		if err != nil {
			return nil, err
		}
		progress := false
		for _, c := range cands {
			if len(picked) == slots {
				break
			}
			switch {
			case s.keyFull(c.Key):
				if !slices.Contains(full, c.Key) {
					full, progress = append(full, c.Key), true
				}
				continue
			case c.Start && starts == 0:
				continue
			}
			picked, taken, progress = append(picked, c), append(taken, c.RunID), true
			s.RunningByKey[c.Key]++
			if c.Start {
				starts--
			}
			if s.keyFull(c.Key) {
				full = append(full, c.Key)
			}
		}
		if len(cands) < n || !progress {
			break
		}
	}
	return picked, nil
}

// QueueState reads queue q's limits, locking its row until tx ends (the
// dialect's ForUpdate; SQLite's transaction holds the write lock), so
// that claims of one queue decide one at a time, then counts its runs
// executing, by key, and its starts within the rate's period. A queue no
// engine configured has no limits.
func (s *Store) QueueState(ctx context.Context, tx Executor, q string, now time.Time) (QueueState, error) {
	d := s.cfg.Dialect
	st := QueueState{Limits: journal.QueueLimits{Name: q}, RunningByKey: map[string]int{}}
	var perMS int64
	err := tx.QueryRow(ctx, d.Rebind(`SELECT concurrency, per_key, rate, per_ms FROM {schema}.resume_queues WHERE name = $1 `+d.ForUpdate()), q).
		Scan(&st.Limits.Concurrency, &st.Limits.PerKey, &st.Limits.Rate, &perMS)
	switch {
	case d.NoRows(err):
		return st, nil
	case err != nil:
		return st, fmt.Errorf("queue %s: read its limits: %w", q, d.WriteErr(err))
	}
	st.Limits.Per = time.Duration(perMS) * time.Millisecond
	if !st.Limits.Limited() {
		return st, nil
	}
	rows, err := tx.Query(ctx, d.Rebind(`SELECT queue_key, count(*) FROM {schema}.resume_runs
		WHERE queue = $1 AND queue <> '' AND status = 'running' GROUP BY queue_key`), q)
	if err != nil {
		return st, fmt.Errorf("queue %s: count its runs executing: %w", q, err)
	}
	for rows.Next() {
		var key string
		var n int
		if err := rows.Scan(&key, &n); err != nil {
			rows.Close()
			return st, fmt.Errorf("queue %s: count its runs executing: %w", q, err)
		}
		st.RunningByKey[key], st.Running = n, st.Running+n
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return st, fmt.Errorf("queue %s: count its runs executing: %w", q, err)
	}
	if st.Limits.Rate > 0 {
		a := NewArgs(d)
		qp := a.Add(q)
		since := d.Ago(a, now, st.Limits.Per)
		if err := tx.QueryRow(ctx, d.Rebind(`SELECT count(*) FROM {schema}.resume_runs
			WHERE queue = `+qp+` AND queue <> '' AND started_at > `+since), a.Values()...).Scan(&st.Started); err != nil {
			return st, fmt.Errorf("queue %s: count its starts: %w", q, err)
		}
	}
	return st, nil
}

// ConfigureQueues stores the limits qs as owner's, in one transaction
// (journal.Queuer), and returns the stored limits that differed.
func (s *Store) ConfigureQueues(ctx context.Context, owner string, qs []journal.QueueLimits, now time.Time) ([]journal.QueueStats, error) {
	for _, q := range qs {
		if err := q.Check(); err != nil {
			return nil, fmt.Errorf("configure queues: %w", err)
		}
	}
	d := s.cfg.Dialect
	var replaced []journal.QueueStats
	err := s.cfg.InTx(ctx, func(tx Executor) error {
		replaced = replaced[:0]
		for _, q := range qs {
			var old journal.QueueStats
			var perMS int64
			var at any
			err := tx.QueryRow(ctx, d.Rebind(`SELECT concurrency, per_key, rate, per_ms, configured_by, configured_at
				FROM {schema}.resume_queues WHERE name = $1 `+d.ForUpdate()), q.Name).
				Scan(&old.Limits.Concurrency, &old.Limits.PerKey, &old.Limits.Rate, &perMS, &old.ConfiguredBy, &at)
			switch {
			case d.NoRows(err):
			case err != nil:
				return fmt.Errorf("queue %s: %w", q.Name, d.WriteErr(err))
			default:
				old.Limits.Name, old.Limits.Per = q.Name, time.Duration(perMS)*time.Millisecond
				old.ConfiguredAt, _ = d.ScanTime(at)
				if old.Limits != q {
					replaced = append(replaced, old)
				}
			}
			a := NewArgs(d)
			vals := a.Add(q.Name) + ", " + a.Add(q.Concurrency) + ", " + a.Add(q.PerKey) + ", " + a.Add(q.Rate) + ", " +
				a.Add(q.Per.Milliseconds()) + ", " + a.Add(owner) + ", " + d.Now(a, now)
			if _, err := tx.Exec(ctx, d.Rebind(`INSERT INTO {schema}.resume_queues
				(name, concurrency, per_key, rate, per_ms, configured_by, configured_at) VALUES (`+vals+`)
				ON CONFLICT (name) DO UPDATE SET concurrency = excluded.concurrency, per_key = excluded.per_key,
					rate = excluded.rate, per_ms = excluded.per_ms, configured_by = excluded.configured_by,
					configured_at = excluded.configured_at`), a.Values()...); err != nil {
				return fmt.Errorf("queue %s: %w", q.Name, d.WriteErr(err))
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("configure queues: %w", err)
	}
	return replaced, nil
}

// ListQueues lists every queue with stored limits or unfinished runs, by
// name (journal.Queuer).
func (s *Store) ListQueues(ctx context.Context, now time.Time) ([]journal.QueueStats, error) {
	d := s.cfg.Dialect
	byName := map[string]*journal.QueueStats{}
	get := func(name string) *journal.QueueStats {
		if q := byName[name]; q != nil {
			return q
		}
		q := &journal.QueueStats{Limits: journal.QueueLimits{Name: name}}
		byName[name] = q
		return q
	}
	rows, err := s.cfg.Read.Query(ctx, d.Rebind(`SELECT name, concurrency, per_key, rate, per_ms, configured_by, configured_at
		FROM {schema}.resume_queues`))
	if err != nil {
		return nil, fmt.Errorf("list queues: %w", err)
	}
	for rows.Next() {
		var name string
		var l journal.QueueLimits
		var perMS int64
		var by string
		var at any
		if err := rows.Scan(&name, &l.Concurrency, &l.PerKey, &l.Rate, &perMS, &by, &at); err != nil {
			rows.Close()
			return nil, fmt.Errorf("list queues: %w", err)
		}
		q := get(name)
		l.Name, l.Per = name, time.Duration(perMS)*time.Millisecond
		q.Limits, q.ConfiguredBy = l, by
		q.ConfiguredAt, _ = d.ScanTime(at)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list queues: %w", err)
	}
	rows, err = s.cfg.Read.Query(ctx, d.Rebind(`SELECT queue,
			SUM(CASE WHEN status = 'pending' THEN 1 ELSE 0 END),
			SUM(CASE WHEN status = 'running' THEN 1 ELSE 0 END),
			SUM(CASE WHEN status = 'waiting' THEN 1 ELSE 0 END),
			COUNT(DISTINCT CASE WHEN status IN ('pending', 'running') THEN queue_key END),
			MIN(CASE WHEN status = 'pending' THEN created_at END)
		FROM {schema}.resume_runs WHERE queue <> '' AND status IN ('pending', 'running', 'waiting')
		GROUP BY queue`))
	if err != nil {
		return nil, fmt.Errorf("list queues: %w", err)
	}
	for rows.Next() {
		var name string
		var pending, running, waiting, keys int
		var oldest any
		if err := rows.Scan(&name, &pending, &running, &waiting, &keys, &oldest); err != nil {
			rows.Close()
			return nil, fmt.Errorf("list queues: %w", err)
		}
		q := get(name)
		q.Pending, q.Running, q.Waiting, q.Keys = pending, running, waiting, keys
		q.OldestPending, _ = d.ScanTime(oldest)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list queues: %w", err)
	}
	out := make([]journal.QueueStats, 0, len(byName))
	for _, q := range byName {
		if q.Limits.Rate > 0 {
			a := NewArgs(d)
			qp := a.Add(q.Limits.Name)
			since := d.Ago(a, now, q.Limits.Per)
			if err := s.cfg.Read.QueryRow(ctx, d.Rebind(`SELECT count(*) FROM {schema}.resume_runs
				WHERE queue = `+qp+` AND queue <> '' AND started_at > `+since), a.Values()...).Scan(&q.StartedInPeriod); err != nil {
				return nil, fmt.Errorf("list queues: queue %s: count its starts: %w", q.Limits.Name, err)
			}
		}
		out = append(out, *q)
	}
	slices.SortFunc(out, func(a, b journal.QueueStats) int {
		switch {
		case a.Limits.Name < b.Limits.Name:
			return -1
		case a.Limits.Name > b.Limits.Name:
			return 1
		}
		return 0
	})
	return out, nil
}

// QueueReady reports whether queue q has a run a claim could take now:
// one pending, or one waiting whose wake-up time passed. A claim asks it
// first, through tx or the pool, so that a worker whose queues are empty
// pays one index probe a queue, not the queue's lock and counts.
func (s *Store) QueueReady(ctx context.Context, tx Executor, q string, now time.Time) (bool, error) {
	d := s.cfg.Dialect
	a := NewArgs(d)
	qp := a.Add(q)
	at := d.Now(a, now)
	var ready bool
	err := tx.QueryRow(ctx, d.Rebind(`SELECT EXISTS (SELECT 1 FROM {schema}.resume_runs
			WHERE queue = `+qp+` AND queue <> '' AND status = 'pending')
		OR EXISTS (SELECT 1 FROM {schema}.resume_runs
			WHERE queue = `+qp+` AND queue <> '' AND status = 'waiting' AND NOT (`+d.Unset("wake_at")+`) AND wake_at <= `+at+`)`),
		a.Values()...).Scan(&ready)
	if err != nil {
		return false, fmt.Errorf("queue %s: look for runs: %w", q, err)
	}
	return ready, nil
}
