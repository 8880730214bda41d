package pgjournal

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/resumegen/resumegen/runtime/journal"
)

// A worker's liveness is a session-level advisory lock per owner name,
// held on a connection the journal keeps for it alone (taken out of the
// pool). The server releases the lock when that session ends: the process
// was killed, crashed, or is a zombie (its socket is closed), wherever it
// ran, whatever its PID namespace or host. resume_owners lists the owners
// that ever held one, so that the lease of an owner that never did (a
// worker of an older version) is waited out instead of taken for dead.
//
// The lock is (livenessLock, hashtext(owner)); a hash collision can only
// make a dead owner look alive, and its lease is then waited out.
//
// The liveness session asks the server for TCP keepalives (10s idle, 5s
// interval, 3 probes): a worker whose host vanished, whose session the
// server would otherwise keep for the OS default of two hours, is seen
// dead within about 25 seconds.
//
// If the liveness connection breaks (the server restarted, the network
// dropped), the process's locks are free until it connects again: a ping
// every second notices and takes them back, and the engine takes them back
// before its next claim; meanwhile another worker's Start, Resume or
// startup may take this process's runs for a dead one's. Its writes are
// fenced by the lease epoch all the same.

var _ journal.Liveness = (*Journal)(nil)

// livenessLock is the first key of the owners' advisory locks ("resl").
const livenessLock = 0x7265_736c

// livenessLockSQL is livenessLock, for queries.
const livenessLockSQL = "1919251308"

// livenessPing is how often the liveness connection is checked.
const livenessPing = time.Second

type liveness struct {
	mu    sync.Mutex
	conn  *pgx.Conn       // nil until the first KeepAlive
	held  map[string]bool // owners whose lock this process holds
	swept bool
	stop  chan struct{} // closes the pinger
}

func init() {
	if fmt.Sprint(livenessLock) != livenessLockSQL {
		panic("pgjournal: livenessLockSQL is not livenessLock")
	}
}

// KeepAlive takes owner's liveness lock on the journal's liveness
// connection (opened, or opened again, as needed) and lists owner in
// resume_owners. It fails when another session holds owner's lock: two
// live processes must not share one owner name.
func (j *Journal) KeepAlive(ctx context.Context, owner string) error {
	l := &j.live
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.held[owner] && l.conn != nil && !l.conn.IsClosed() {
		return nil
	}
	if err := j.liveConnLocked(ctx); err != nil {
		return fmt.Errorf("pgjournal: liveness of owner %s: %w", owner, err)
	}
	if !l.held[owner] {
		if err := j.lockOwnerLocked(ctx, owner); err != nil {
			return fmt.Errorf("pgjournal: liveness of owner %s: %w", owner, err)
		}
		l.held[owner] = true
	}
	if !l.swept {
		l.swept = true
		// Forget dead owners that hold no run any more.
		if _, err := j.pool.Exec(ctx, j.sql.forgetOwners); err != nil {
			return fmt.Errorf("pgjournal: forget dead owners: %w", err)
		}
	}
	return nil
}

// OwnerGone reports whether owner is listed in resume_owners and no session
// holds its liveness lock.
func (j *Journal) OwnerGone(ctx context.Context, owner string) (bool, error) {
	j.live.mu.Lock()
	mine := j.live.held[owner]
	j.live.mu.Unlock()
	if mine || owner == "" {
		return false, nil
	}
	var gone bool
	if err := j.pool.QueryRow(ctx, qualify(`SELECT EXISTS (SELECT 1 FROM {schema}.resume_owners o WHERE o.owner = $1)
		AND pg_try_advisory_xact_lock(`+livenessLockSQL+`, hashtext($1))`, j.schema), owner).Scan(&gone); err != nil {
		return false, fmt.Errorf("pgjournal: liveness of owner %s: %w", owner, err)
	}
	return gone, nil
}

// Release unlocks owner's advisory lock, as the end of the process would.
func (j *Journal) Release(ctx context.Context, owner string) error {
	l := &j.live
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.held[owner] {
		return nil
	}
	delete(l.held, owner)
	if l.conn == nil || l.conn.IsClosed() {
		return nil
	}
	if _, err := l.conn.Exec(ctx, `SELECT pg_advisory_unlock(`+livenessLockSQL+`, hashtext($1))`, owner); err != nil {
		return fmt.Errorf("pgjournal: release the liveness lock of owner %s: %w", owner, err)
	}
	return nil
}

// liveConnLocked opens the liveness connection if it is not open, taking
// the locks of the owners already held again.
func (j *Journal) liveConnLocked(ctx context.Context) error {
	l := &j.live
	if l.conn != nil && !l.conn.IsClosed() {
		return nil
	}
	if l.conn != nil {
		l.conn.Close(context.Background())
		l.conn = nil
	}
	c, err := j.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	l.conn = c.Hijack()
	// The server must notice a vanished host (no FIN ever comes) within
	// about half a minute, not the OS default of two hours: until then its
	// owner looks alive and its runs wait.
	if _, err := l.conn.Exec(ctx, `SET tcp_keepalives_idle = 10; SET tcp_keepalives_interval = 5; SET tcp_keepalives_count = 3`); err != nil {
		l.conn.Close(ctx)
		l.conn = nil
		return fmt.Errorf("set keepalives of the liveness connection: %w", err)
	}
	if l.held == nil {
		l.held = map[string]bool{}
	}
	for owner := range l.held {
		if err := j.lockOwnerLocked(ctx, owner); err != nil {
			delete(l.held, owner)
			return err
		}
	}
	if l.stop == nil {
		l.stop = make(chan struct{})
		go j.pingLiveness(l.stop)
	}
	return nil
}

// lockOwnerLocked takes owner's lock on the liveness connection, waiting
// out a claim that holds it for a moment (pg_try_advisory_xact_lock), then
// lists owner. The lock comes first: a listed owner whose lock is free is
// dead.
func (j *Journal) lockOwnerLocked(ctx context.Context, owner string) error {
	var got bool
	for wait := time.Millisecond; ; wait *= 2 {
		if err := j.live.conn.QueryRow(ctx, `SELECT pg_try_advisory_lock(`+livenessLockSQL+`, hashtext($1))`, owner).Scan(&got); err != nil {
			return err
		}
		if got {
			break
		}
		if wait > 100*time.Millisecond {
			return fmt.Errorf("its lock is held by another live session: two processes use the owner name %q", owner)
		}
		time.Sleep(wait)
	}
	_, err := j.pool.Exec(ctx, j.sql.keepAlive, owner)
	return err
}

// pingLiveness checks the liveness connection every livenessPing and opens
// it again, with its locks, when it broke.
func (j *Journal) pingLiveness(stop chan struct{}) {
	t := time.NewTicker(livenessPing)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		l := &j.live
		l.mu.Lock()
		if l.conn != nil {
			ctx, cancel := context.WithTimeout(context.Background(), livenessPing)
			if err := l.conn.Ping(ctx); err != nil {
				l.conn.Close(ctx)
			}
			_ = j.liveConnLocked(ctx)
			cancel()
		}
		l.mu.Unlock()
	}
}

// closeLiveness ends the liveness session: this process's owners are seen
// as dead from then on.
func (j *Journal) closeLiveness() {
	l := &j.live
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.stop != nil {
		close(l.stop)
		l.stop = nil
	}
	if l.conn != nil {
		l.conn.Close(context.Background())
		l.conn = nil
	}
	l.held = nil
}
