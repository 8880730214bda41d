package pgjournal

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/resumegen/resumegen/runtime/journal"
)

// Liveness without session state. A session of the server proves nothing
// about a worker's process: a connection ends when the server restarts,
// the network drops, idle_session_timeout strikes or a transaction pooler
// hands the server connection to another client, while the process goes
// on executing its step. So no lock or LISTEN of a session says whether
// an owner lives, and a run is taken from an owner that did not say it
// stopped only once its lease expired by the server's clock; the engine
// stops a run before a lease it cannot renew expires (resume's
// keepLease), so the two never execute a step at once.
//
// The one death signal that cannot be wrong is the owner's own word:
// resume_owners lists each owner with stopped_at, which its process sets
// when it stops for good (Release, or Close of its journal, once its
// engines returned). A run of an owner whose row says it stopped is taken
// over at once, before its lease expires; an owner that never said so (it
// was killed, its host vanished, it is a worker of an older version) has
// its lease waited out.

var _ journal.Liveness = (*Journal)(nil)

// liveness is what this process said of its owners.
type liveness struct {
	mu    sync.Mutex
	held  map[string]bool // owners this process listed as running
	swept bool
}

// KeepAlive lists owner in resume_owners as running (stopped_at NULL),
// once per journal, after forgetting, once, the owners that hold no
// running run any more. It holds no session: a connection the server
// ends changes nothing.
func (j *Journal) KeepAlive(ctx context.Context, owner string) error {
	l := &j.live
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.held[owner] {
		return nil
	}
	if !l.swept {
		// Forget the owners that hold no running run: their word is no
		// longer needed (an owner not listed is never taken for stopped).
		if _, err := j.pool.Exec(ctx, j.sql.forgetOwners); err != nil {
			return fmt.Errorf("pgjournal: forget owners that hold no run: %w", err)
		}
		l.swept = true
	}
	if _, err := j.pool.Exec(ctx, j.sql.keepAlive, owner); err != nil {
		return fmt.Errorf("pgjournal: list owner %s as running: %w", owner, err)
	}
	if l.held == nil {
		l.held = map[string]bool{}
	}
	l.held[owner] = true
	return nil
}

// OwnerGone reports whether owner's process said it stopped (its row's
// stopped_at is set) and did not list it as running since.
func (j *Journal) OwnerGone(ctx context.Context, owner string) (bool, error) {
	j.live.mu.Lock()
	mine := j.live.held[owner]
	j.live.mu.Unlock()
	if mine || owner == "" {
		return false, nil
	}
	var gone bool
	if err := j.pool.QueryRow(ctx, qualify(`SELECT EXISTS (SELECT 1 FROM {schema}.resume_owners
		WHERE owner = $1 AND stopped_at IS NOT NULL)`, j.schema), owner).Scan(&gone); err != nil {
		return false, fmt.Errorf("pgjournal: liveness of owner %s: %w", owner, err)
	}
	return gone, nil
}

// Release says that owner stopped for good: its runs are taken over at
// once. Call it only once nothing of owner executes any more.
func (j *Journal) Release(ctx context.Context, owner string) error {
	l := &j.live
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := j.stopOwner(ctx, owner); err != nil {
		return err
	}
	delete(l.held, owner)
	return nil
}

// stopOwner sets owner's stopped_at.
func (j *Journal) stopOwner(ctx context.Context, owner string) error {
	if _, err := j.pool.Exec(ctx, j.sql.stopOwner, owner); err != nil {
		return fmt.Errorf("pgjournal: say that owner %s stopped: %w", owner, err)
	}
	return nil
}

// closeLiveness says that this process's owners stopped, as Close ends
// the journal: their runs are taken over at once. An owner whose word
// cannot be written has its lease waited out.
func (j *Journal) closeLiveness() {
	l := &j.live
	l.mu.Lock()
	defer l.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for owner := range l.held {
		_ = j.stopOwner(ctx, owner)
	}
	l.held = nil
}
