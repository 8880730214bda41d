package resumetest

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/resumegen/resumegen/runtime/journal"
	"github.com/resumegen/resumegen/runtime/sqlitejournal"
)

// openJournal opens a SQLite journal in a temporary directory of t, closed
// when t ends, telling time by clock.
func openJournal(t testing.TB, clock *Clock) *sqlitejournal.Journal {
	t.Helper()
	j, err := sqlitejournal.Open(context.Background(), filepath.Join(t.TempDir(), "journal.db"), sqlitejournal.WithClock(clock.Now))
	if err != nil {
		t.Fatalf("resumetest: open a temporary journal: %v", err)
	}
	t.Cleanup(func() { j.Close() })
	return j
}

// errCrashed refuses the writes of an engine whose process "died". It is
// a lost lease, which the engine does not retry: a dead process retries
// nothing (the crashed body's deferred calls, run as its goroutine
// unwinds, would otherwise retry their writes until the lease ran out).
var errCrashed = fmt.Errorf("resumetest: the process executing this run crashed (simulated): the journal takes no more writes from it: %w", journal.ErrLeaseLost)

// crashJournal is the journal as one process sees it: once crash is
// called, the process is dead and every write it tries is refused, as if
// it never happened (a transaction it holds open is rolled back). It
// counts the commits of tx steps for the recorder.
type crashJournal struct {
	journal.Journal
	rec     *recorder
	crashed atomic.Bool
	// settle, when set (execKey), is the await whose settling row (its
	// event taken, or its timeout) the process dies right after: the
	// point [Settled], which a fault cannot name (an await's after point
	// is its first row, the waiting one).
	settle string
	mu     sync.Mutex
	waited map[string]bool // awaits that journaled a waiting row, by execKey
}

// Unwrap returns the journal underneath: its liveness signal is the
// process's.
func (j *crashJournal) Unwrap() journal.Journal { return j.Journal }

// crash makes the process dead: its journal writes are refused, and its
// step code executes no more.
func (j *crashJournal) crash() {
	j.crashed.Store(true)
	j.rec.dead.Store(true)
}

func (j *crashJournal) alive() error {
	if j.crashed.Load() {
		return errCrashed
	}
	return nil
}

func (j *crashJournal) CreateRun(ctx context.Context, r journal.RunRecord) (journal.RunRecord, bool, error) {
	if err := j.alive(); err != nil {
		return journal.RunRecord{}, false, err
	}
	return j.Journal.CreateRun(ctx, r)
}

func (j *crashJournal) Claim(ctx context.Context, c journal.ClaimRequest) (journal.RunRecord, []journal.StepRecord, error) {
	if err := j.alive(); err != nil {
		return journal.RunRecord{}, nil, err
	}
	return j.Journal.Claim(ctx, c)
}

func (j *crashJournal) ClaimNext(ctx context.Context, c journal.ClaimNextRequest) (journal.RunRecord, []journal.StepRecord, error) {
	if err := j.alive(); err != nil {
		return journal.RunRecord{}, nil, err
	}
	return j.Journal.ClaimNext(ctx, c)
}

func (j *crashJournal) RenewLease(ctx context.Context, l journal.Lease, d time.Duration) error {
	if err := j.alive(); err != nil {
		return err
	}
	return j.Journal.RenewLease(ctx, l, d)
}

func (j *crashJournal) WriteStep(ctx context.Context, l journal.Lease, s journal.StepRecord) error {
	if err := j.alive(); err != nil {
		return err
	}
	return j.Journal.WriteStep(ctx, l, s)
}

func (j *crashJournal) BeginStep(ctx context.Context, l journal.Lease) (journal.StepTx, error) {
	if err := j.alive(); err != nil {
		return nil, err
	}
	tx, err := j.Journal.BeginStep(ctx, l)
	if err != nil {
		return nil, err
	}
	return &crashTx{StepTx: tx, j: j}, nil
}

func (j *crashJournal) FinishRun(ctx context.Context, l journal.Lease, r journal.RunRecord) error {
	if err := j.alive(); err != nil {
		return err
	}
	return j.Journal.FinishRun(ctx, l, r)
}

// ContinueRun is refused once the process is dead, as FinishRun is:
// without it, the journal underneath (found past Unwrap) would take the
// write.
func (j *crashJournal) ContinueRun(ctx context.Context, l journal.Lease, r, next journal.RunRecord) (journal.RunRecord, error) {
	if err := j.alive(); err != nil {
		return journal.RunRecord{}, err
	}
	cj, ok := journal.Find[journal.Continuer](j.Journal)
	if !ok {
		return journal.RunRecord{}, fmt.Errorf("run %s: continue as %s: the journal does not implement journal.Continuer", l.RunID, next.RunID)
	}
	return cj.ContinueRun(ctx, l, r, next)
}

func (j *crashJournal) Resolve(ctx context.Context, runID, stepKey string, r journal.Resolution) error {
	if err := j.alive(); err != nil {
		return err
	}
	return j.Journal.Resolve(ctx, runID, stepKey, r)
}

func (j *crashJournal) Retry(ctx context.Context, runID string) error {
	if err := j.alive(); err != nil {
		return err
	}
	return j.Journal.Retry(ctx, runID)
}

func (j *crashJournal) Cancel(ctx context.Context, runID string, opts journal.CancelOptions) error {
	if err := j.alive(); err != nil {
		return err
	}
	return j.Journal.Cancel(ctx, runID, opts)
}

func (j *crashJournal) SaveManifest(ctx context.Context, m journal.ManifestRecord) error {
	if err := j.alive(); err != nil {
		return err
	}
	return j.Journal.SaveManifest(ctx, m)
}

func (j *crashJournal) Advertise(ctx context.Context, owner string, versions []journal.WorkflowVersion) error {
	if err := j.alive(); err != nil {
		return err
	}
	return j.Journal.Advertise(ctx, owner, versions)
}

func (j *crashJournal) MoveRun(ctx context.Context, l journal.Lease, m journal.Move) error {
	if err := j.alive(); err != nil {
		return err
	}
	return j.Journal.MoveRun(ctx, l, m)
}

func (j *crashJournal) Signal(ctx context.Context, s journal.SignalRecord) (journal.SignalRecord, error) {
	if err := j.alive(); err != nil {
		return s, err
	}
	return j.Journal.Signal(ctx, s)
}

func (j *crashJournal) TakeSignal(ctx context.Context, l journal.Lease, seq int64, s journal.StepRecord) error {
	if err := j.alive(); err != nil {
		return err
	}
	if err := j.Journal.TakeSignal(ctx, l, seq, s); err != nil {
		return err
	}
	k := execKey(s.RunID, s.StepKey)
	switch {
	case s.Status == journal.StepWaiting:
		j.mu.Lock()
		if j.waited == nil {
			j.waited = map[string]bool{}
		}
		j.waited[k] = true
		j.mu.Unlock()
	case k == j.settle:
		j.crash()
		panic(crashSignal{})
	}
	return nil
}

// awaitsWaited returns the awaits that journaled a waiting row, by
// execKey.
func (j *crashJournal) awaitsWaited() map[string]bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	out := map[string]bool{}
	for k := range j.waited {
		out[k] = true
	}
	return out
}

func (j *crashJournal) AcceptVersion(ctx context.Context, runID, version string) error {
	if err := j.alive(); err != nil {
		return err
	}
	return j.Journal.AcceptVersion(ctx, runID, version)
}

// crashTx is a tx step's transaction: its commit is refused once the
// process crashed (its rollback, what a dead process's connection comes
// to, always goes through).
type crashTx struct {
	journal.StepTx
	j *crashJournal
}

func (t *crashTx) Commit(ctx context.Context, s journal.StepRecord) error {
	if err := t.j.alive(); err != nil {
		return err
	}
	if err := t.StepTx.Commit(ctx, s); err != nil {
		return err
	}
	t.j.rec.committed(s.RunID, s.StepKey)
	return nil
}
