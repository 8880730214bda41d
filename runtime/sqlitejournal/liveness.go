package sqlitejournal

import (
	"context"
	"crypto/sha256"
	"database/sql/driver"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/resumegen/resumegen/runtime/journal"
	"modernc.org/sqlite"
)

// A worker's liveness is an OS file lock (flock) that its process holds on
// a lock file of its owner name, in the directory beside the journal named
// after it with ".owners" appended (journal.db.owners/). The kernel
// releases the lock when the process ends, however it ends: killed,
// crashed, or a zombie its parent has not reaped yet (a zombie holds no
// file). The lock is a property of the file, not of a pid, so a process in
// another PID namespace (a container sharing the journal's volume) is seen
// as alive as long as it lives. A lock file that is missing, or that no
// process ever locked, never makes an owner dead: an owner without one (a
// worker of an older version) has its lease waited out.
//
// Lock files are created 0600 under a temporary name, locked, and only then
// linked to their final name, so the final name never exists unlocked while
// its owner lives. A dead owner's file stays until no running run names
// that owner any more; the first KeepAlive of a journal opened later
// removes it.
//
// The lock is no session: no connection carries it, so nothing but the end
// of the process (or Release, or Close) frees it, and a held lock proves
// its process alive. So a run whose lease lapsed while its owner lives (it
// waited for the write lock, it is paused) is not taken from it either
// (journal.LiveOwnerGuard): its owner keeps it, and renews when it can.

var (
	_ journal.Liveness       = (*Journal)(nil)
	_ journal.LiveOwnerGuard = (*Journal)(nil)
)

// GuardsLiveOwners reports true: claims leave the lapsed lease of an owner
// whose lock file is locked alone (journal.LiveOwnerGuard).
func (j *Journal) GuardsLiveOwners() bool { return true }

func init() {
	// resume_owner_gone(dir, owner) is OwnerGone inside SQL, so that a claim
	// checks the owner's liveness in its own statement.
	sqlite.MustRegisterScalarFunction("resume_owner_gone", 2, func(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
		dir, _ := args[0].(string)
		owner, _ := args[1].(string)
		if dir == "" || owner == "" {
			return int64(0), nil
		}
		l := liveness{dir: dir}
		gone, err := l.ownerGone(owner)
		if err != nil || !gone {
			return int64(0), err
		}
		return int64(1), nil
	})
	// resume_owner_alive(dir, owner) is true when owner's lock file exists
	// and a process holds its lock: a lapsed lease of a live owner is not
	// taken (it may be executing a step, and renews when it gets the
	// journal's write lock).
	sqlite.MustRegisterScalarFunction("resume_owner_alive", 2, func(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
		dir, _ := args[0].(string)
		owner, _ := args[1].(string)
		if dir == "" || owner == "" {
			return int64(0), nil
		}
		f, err := os.OpenFile(lockPath(dir, owner), os.O_RDWR, 0)
		if os.IsNotExist(err) {
			return int64(0), nil
		}
		if err != nil {
			return int64(0), err
		}
		defer f.Close()
		free, err := tryLock(f)
		if err != nil || free {
			return int64(0), err
		}
		return int64(1), nil
	})
}

// liveness holds this process's lock files.
type liveness struct {
	dir   string
	mu    sync.Mutex
	held  map[string]*os.File // by owner
	swept bool
}

// lockPath names owner's lock file: owner names hold any character, so the
// file is named by their hash, and holds the name itself for operators.
func (l *liveness) lockPath(owner string) string { return lockPath(l.dir, owner) }

func lockPath(dir, owner string) string {
	sum := sha256.Sum256([]byte(owner))
	return filepath.Join(dir, hex.EncodeToString(sum[:16])+".lock")
}

// KeepAlive locks owner's lock file for as long as this process lives or
// the journal is open. It fails when another live process holds the same
// owner name: two processes must not share one.
func (j *Journal) KeepAlive(ctx context.Context, owner string) error {
	if err := j.live.keep(owner); err != nil {
		return fmt.Errorf("sqlitejournal: liveness lock of owner %s: %w", owner, err)
	}
	j.live.sweep(ctx, j)
	return nil
}

// OwnerGone reports whether owner's lock file exists and no process holds
// its lock: the process that held it ended.
func (j *Journal) OwnerGone(ctx context.Context, owner string) (bool, error) {
	gone, err := j.live.ownerGone(owner)
	if err != nil {
		return false, fmt.Errorf("sqlitejournal: liveness of owner %s: %w", owner, err)
	}
	return gone, nil
}

// Release unlocks owner's lock file, as the end of the process would.
func (j *Journal) Release(ctx context.Context, owner string) error {
	j.live.mu.Lock()
	defer j.live.mu.Unlock()
	if f := j.live.held[owner]; f != nil {
		f.Close()
	}
	delete(j.live.held, owner)
	return nil
}

// keep takes owner's lock, once per journal.
func (l *liveness) keep(owner string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.held[owner]; ok {
		return nil
	}
	if err := os.MkdirAll(l.dir, 0o700); err != nil {
		return err
	}
	f, err := lockOwnerFile(l.dir, l.lockPath(owner), owner)
	if err != nil {
		return err
	}
	l.held[owner] = f
	return nil
}

// ownerGone tries owner's lock without waiting. This process's own owners
// are alive.
func (l *liveness) ownerGone(owner string) (bool, error) {
	l.mu.Lock()
	_, mine := l.held[owner]
	l.mu.Unlock()
	if mine || owner == "" {
		return false, nil
	}
	f, err := os.OpenFile(l.lockPath(owner), os.O_RDWR, 0)
	if os.IsNotExist(err) {
		return false, nil // never held: waited out
	}
	if err != nil {
		return false, err
	}
	defer f.Close() // releases the lock taken below
	return tryLock(f)
}

// sweep removes, once per journal, the lock files of dead owners that no
// running run names any more.
func (l *liveness) sweep(ctx context.Context, j *Journal) {
	l.mu.Lock()
	if l.swept {
		l.mu.Unlock()
		return
	}
	l.swept = true
	l.mu.Unlock()
	entries, err := os.ReadDir(l.dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		path := filepath.Join(l.dir, e.Name())
		if filepath.Ext(path) != ".lock" {
			continue
		}
		f, err := os.OpenFile(path, os.O_RDWR, 0)
		if err != nil {
			continue
		}
		if gone, err := tryLock(f); err == nil && gone {
			owner, _ := os.ReadFile(path)
			var n int
			err := j.read.QueryRowContext(ctx, `SELECT count(*) FROM resume_runs WHERE status = 'running' AND lease_owner = ?`, string(owner)).Scan(&n)
			if err == nil && n == 0 && l.lockPath(string(owner)) == path {
				_ = os.Remove(path) // under the lock: a new holder sees its file gone and retries
			}
		}
		f.Close()
	}
}

// close releases this journal's locks: its owners are dead from then on
// (a closed journal writes nothing), and their runs are taken over at once.
// The files stay for the sweep: a missing file is never a dead owner.
func (l *liveness) close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	for owner, f := range l.held {
		if f != nil {
			f.Close()
		}
		delete(l.held, owner)
	}
	return nil
}
