package pgjournal

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// workChannel is the NOTIFY channel of a schema's journal, as the trigger
// of migration 4 computes it: a fixed-length name whatever the schema's.
func workChannel(schema string) string {
	sum := md5.Sum([]byte(schema))
	return "resume_work_" + hex.EncodeToString(sum[:])[:16]
}

// listener holds one connection, outside the pool, that LISTENs on the
// journal's work channel for every worker of the process, and closes its
// current wake channel at each notification.
type listener struct {
	mu        sync.Mutex
	started   bool
	ready     chan struct{} // closed once the first LISTEN succeeded or failed
	listening bool
	err       error         // why it is not listening
	wake      chan struct{} // closed and replaced at each notification
	finished  chan struct{} // the same, for the done channel (NotifyFinish)
	stop      context.CancelFunc
	done      chan struct{}
}

// NotifyWork returns a channel closed when a run of the journal's schema
// becomes pending after the call, in any process (journal.WorkNotifier).
// The first call opens the listening connection, with the pool's
// connection settings, and waits until it listens; a lost connection is
// reopened, with a wake-up to everyone so that nothing sent meanwhile is
// missed. Close stops it.
func (j *Journal) NotifyWork(ctx context.Context) (<-chan struct{}, error) {
	return j.notified(ctx, false)
}

// notified starts the listener if needed and returns its current wake
// channel: the work channel's, or with finished the done channel's.
func (j *Journal) notified(ctx context.Context, finished bool) (<-chan struct{}, error) {
	if j.pooler == PoolerTransaction {
		return nil, errNoListen
	}
	l := &j.listen
	l.mu.Lock()
	if !l.started {
		l.started = true
		l.ready = make(chan struct{})
		l.wake = make(chan struct{})
		l.finished = make(chan struct{})
		l.done = make(chan struct{})
		var lctx context.Context
		lctx, l.stop = context.WithCancel(context.Background())
		go j.listenLoop(lctx)
	}
	ready := l.ready
	l.mu.Unlock()
	select {
	case <-ready:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.listening {
		return nil, l.err
	}
	if finished {
		return l.finished, nil
	}
	return l.wake, nil
}

// stopListening stops the listener, if it started, and waits for it.
func (j *Journal) stopListening() {
	l := &j.listen
	l.mu.Lock()
	started := l.started
	l.mu.Unlock()
	if started {
		l.stop()
		<-l.done
	}
}

func (j *Journal) listenLoop(ctx context.Context) {
	l := &j.listen
	defer close(l.done)
	var once sync.Once
	markReady := func() { once.Do(func() { close(l.ready) }) }
	defer markReady()
	backoff := 100 * time.Millisecond
	for ctx.Err() == nil {
		err := j.listenOnce(ctx, markReady)
		l.mu.Lock()
		l.listening, l.err = false, err
		// Whatever was sent while nobody listened: look again.
		close(l.wake)
		l.wake = make(chan struct{})
		close(l.finished)
		l.finished = make(chan struct{})
		l.mu.Unlock()
		markReady()
		select {
		case <-ctx.Done():
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 5*time.Second)
	}
}

// listenOnce connects, listens, and relays notifications until the
// connection fails or ctx is done.
func (j *Journal) listenOnce(ctx context.Context, ready func()) error {
	conn, err := pgx.ConnectConfig(ctx, j.pool.Config().ConnConfig.Copy())
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	// The work channel last: operators (and tests) find the listener by
	// its last statement.
	done := doneChannel(j.schema)
	if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{done}.Sanitize()); err != nil {
		return err
	}
	if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{workChannel(j.schema)}.Sanitize()); err != nil {
		return err
	}
	l := &j.listen
	l.mu.Lock()
	l.listening, l.err = true, nil
	l.mu.Unlock()
	ready()
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return errors.New("pgjournal: journal closed")
			}
			return err
		}
		l.mu.Lock()
		if n.Channel == done {
			close(l.finished)
			l.finished = make(chan struct{})
		} else {
			close(l.wake)
			l.wake = make(chan struct{})
		}
		l.mu.Unlock()
	}
}
