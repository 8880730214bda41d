package resume

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/resumegen/resumegen/runtime/journal"
)

// Codec seals the values a journal keeps at rest: runs' inputs, outputs
// and errors, and steps' results and errors (see [WithCodec]). Seal and
// Open must be safe for concurrent use. context names the value (run id,
// step key and field): a codec that authenticates it (AES-GCM's additional
// data) refuses a sealed value moved to another run, step or field.
type Codec interface {
	Seal(plain, context []byte) ([]byte, error)
	Open(sealed, context []byte) ([]byte, error)
}

// WithCodec makes the engine seal, through c, every input, output, result,
// error and error detail it writes to the journal, and open them as it
// reads them back: the database holds them encrypted (with
// [NewAESGCMCodec]) and the workflow sees them as usual. Ids, workflow
// names, versions, step keys, statuses and times stay readable, as
// operators and queries need them.
//
// Each sealed value is stored as JSON, {"resume:sealed":"v1","data":...},
// which the journals' json columns accept; [journal.IsSealed] recognizes it, and
// resumectl, which has no key, shows "(encrypted)". Values written before
// the codec was enabled, or by resumectl runs resolve -result, are read as
// they are. A sealed value that does not open (another key, a changed
// row) is an error naming the run, the step and the field, never a wrong
// value.
//
// The codec wraps the journal the engine was given ([Engine.Journal]
// returns the wrapper); [journal.WorkNotifier] stays available.
func WithCodec(c Codec) Option {
	return func(e *Engine) { e.journal = SealJournal(e.journal, c) }
}

// NewAESGCMCodec returns a [Codec] that encrypts with AES-GCM (key of 16,
// 24 or 32 bytes: AES-128, -192 or -256) under a random nonce per value,
// authenticating the value's context.
func NewAESGCMCodec(key []byte) (Codec, error) {
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("resume: AES-GCM codec: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("resume: AES-GCM codec: %w", err)
	}
	return aesGCM{aead}, nil
}

type aesGCM struct{ aead cipher.AEAD }

func (a aesGCM) Seal(plain, context []byte) ([]byte, error) {
	nonce := make([]byte, a.aead.NonceSize(), a.aead.NonceSize()+len(plain)+a.aead.Overhead())
	if _, err := rand.Read(nonce); err != nil {
		return nil, err
	}
	return a.aead.Seal(nonce, nonce, plain, context), nil
}

func (a aesGCM) Open(sealed, context []byte) ([]byte, error) {
	n := a.aead.NonceSize()
	if len(sealed) < n {
		return nil, errors.New("sealed value too short")
	}
	return a.aead.Open(nil, sealed[:n], sealed[n:], context)
}

// envelope is a sealed value as stored.
type envelope struct {
	Sealed string `json:"resume:sealed"` // the format: "v1"
	Data   []byte `json:"data"`          // the codec's output
}

// SealJournal returns j with every value [WithCodec] lists sealed through
// c on the way in and opened on the way out (signals' payloads too). Engines get it through
// WithCodec; a program that reads a sealed journal itself (a report, an
// export) wraps the journal the same way.
func SealJournal(j Journal, c Codec) Journal {
	s := &sealedJournal{Journal: j, codec: c}
	if n, ok := j.(journal.WorkNotifier); ok {
		return sealedNotifier{s, n}
	}
	return s
}

// sealedJournal is the decorator; it embeds the journal for the methods
// that carry no sealed value.
type sealedJournal struct {
	Journal
	codec Codec
}

// sealedNotifier is a sealedJournal over a journal that notifies work.
type sealedNotifier struct {
	*sealedJournal
	n journal.WorkNotifier
}

func (s sealedNotifier) NotifyWork(ctx context.Context) (<-chan struct{}, error) {
	return s.n.NotifyWork(ctx)
}

// Unwrap returns the journal underneath.
func (s *sealedJournal) Unwrap() Journal { return s.Journal }

func valueContext(runID, stepKey, field string) []byte {
	return []byte(runID + "\x00" + stepKey + "\x00" + field)
}

func (s *sealedJournal) seal(b []byte, runID, stepKey, field string) ([]byte, error) {
	if b == nil {
		return nil, nil
	}
	// Always sealed, even a value that looks sealed already: a step's
	// error text could be made to look like one.
	data, err := s.codec.Seal(b, valueContext(runID, stepKey, field))
	if err != nil {
		return nil, fmt.Errorf("run %s, step %s: seal %s: %w", runID, stepKey, field, err)
	}
	return json.Marshal(envelope{Sealed: "v1", Data: data})
}

func (s *sealedJournal) open(b []byte, runID, stepKey, field string) ([]byte, error) {
	if !journal.IsSealed(b) {
		return b, nil // written before the codec, or by an operator
	}
	var env envelope
	if err := json.Unmarshal(b, &env); err != nil || env.Sealed != "v1" {
		return nil, fmt.Errorf("run %s, step %s: %s: a sealed value of unknown form (%v)", runID, stepKey, field, err)
	}
	plain, err := s.codec.Open(env.Data, valueContext(runID, stepKey, field))
	if err != nil {
		return nil, fmt.Errorf("run %s, step %s: %s does not open with this codec (another key, or a changed row): %w", runID, stepKey, field, err)
	}
	return plain, nil
}

func (s *sealedJournal) sealText(t, runID, stepKey, field string) (string, error) {
	if t == "" {
		return "", nil
	}
	b, err := s.seal([]byte(t), runID, stepKey, field)
	return string(b), err
}

func (s *sealedJournal) openText(t, runID, stepKey, field string) (string, error) {
	if t == "" {
		return "", nil
	}
	b, err := s.open([]byte(t), runID, stepKey, field)
	return string(b), err
}

func (s *sealedJournal) sealRun(r journal.RunRecord) (journal.RunRecord, error) {
	var errs [4]error
	r.Input, errs[0] = s.seal(r.Input, r.RunID, "", "input")
	r.Output, errs[1] = s.seal(r.Output, r.RunID, "", "output")
	r.Error, errs[2] = s.sealText(r.Error, r.RunID, "", "error")
	r.ErrorDetail, errs[3] = s.seal(r.ErrorDetail, r.RunID, "", "error_detail")
	return r, errors.Join(errs[:]...)
}

func (s *sealedJournal) openRun(r journal.RunRecord) (journal.RunRecord, error) {
	var errs [4]error
	r.Input, errs[0] = s.open(r.Input, r.RunID, "", "input")
	r.Output, errs[1] = s.open(r.Output, r.RunID, "", "output")
	r.Error, errs[2] = s.openText(r.Error, r.RunID, "", "error")
	r.ErrorDetail, errs[3] = s.open(r.ErrorDetail, r.RunID, "", "error_detail")
	return r, errors.Join(errs[:]...)
}

// sealStep seals a step row of run runID (rows read back may leave their
// RunID empty, so the run comes from the lease or the run read with them).
func (s *sealedJournal) sealStep(st journal.StepRecord, runID string) (journal.StepRecord, error) {
	return mapStep(st, runID, s.seal, s.sealText)
}

// openStep opens what sealStep sealed.
func (s *sealedJournal) openStep(st journal.StepRecord, runID string) (journal.StepRecord, error) {
	return mapStep(st, runID, s.open, s.openText)
}

// mapStep applies value (to JSON values) and text (to text) to the fields
// of a step row that a codec seals: its result, error, error detail and
// the errors of its attempts.
func mapStep(st journal.StepRecord, runID string,
	value func(b []byte, runID, stepKey, field string) ([]byte, error),
	text func(t, runID, stepKey, field string) (string, error)) (journal.StepRecord, error) {
	var errs []error
	var err error
	st.Result, err = value(st.Result, runID, st.StepKey, "result")
	errs = append(errs, err)
	st.Error, err = text(st.Error, runID, st.StepKey, "error")
	errs = append(errs, err)
	st.ErrorDetail, err = value(st.ErrorDetail, runID, st.StepKey, "error_detail")
	errs = append(errs, err)
	if len(st.History) > 0 {
		h := make([]journal.AttemptRecord, len(st.History))
		for i, a := range st.History {
			a.Error, err = text(a.Error, runID, st.StepKey, fmt.Sprintf("attempt %d error", a.Attempt))
			errs = append(errs, err)
			h[i] = a
		}
		st.History = h
	}
	return st, errors.Join(errs...)
}

// openEntry opens a run and its journal as a read returned them; an error
// of the read itself (ErrRunBusy with the run) is kept.
func (s *sealedJournal) openEntry(r journal.RunRecord, steps []journal.StepRecord, err error) (journal.RunRecord, []journal.StepRecord, error) {
	r, oerr := s.openRun(r)
	if oerr != nil && r.RunID == "" && err != nil {
		oerr = nil // nothing was read
	}
	errs := []error{err, oerr}
	out := make([]journal.StepRecord, len(steps))
	for i, st := range steps {
		var serr error
		out[i], serr = s.openStep(st, r.RunID)
		errs = append(errs, serr)
	}
	if steps == nil {
		out = nil
	}
	return r, out, errors.Join(errs...)
}

func (s *sealedJournal) CreateRun(ctx context.Context, r journal.RunRecord) (journal.RunRecord, bool, error) {
	sr, err := s.sealRun(r)
	if err != nil {
		return journal.RunRecord{}, false, err
	}
	stored, created, err := s.Journal.CreateRun(ctx, sr)
	if err != nil {
		return stored, created, err
	}
	stored, err = s.openRun(stored)
	return stored, created, err
}

func (s *sealedJournal) Claim(ctx context.Context, c journal.ClaimRequest) (journal.RunRecord, []journal.StepRecord, error) {
	return s.openEntry(s.Journal.Claim(ctx, c))
}

func (s *sealedJournal) ClaimNext(ctx context.Context, c journal.ClaimNextRequest) (journal.RunRecord, []journal.StepRecord, error) {
	return s.openEntry(s.Journal.ClaimNext(ctx, c))
}

func (s *sealedJournal) LoadRun(ctx context.Context, runID string) (journal.RunRecord, []journal.StepRecord, error) {
	return s.openEntry(s.Journal.LoadRun(ctx, runID))
}

func (s *sealedJournal) ListRuns(ctx context.Context, f journal.RunFilter) ([]journal.RunRecord, error) {
	runs, err := s.Journal.ListRuns(ctx, f)
	if err != nil {
		return runs, err
	}
	var errs []error
	for i := range runs {
		var oerr error
		runs[i], oerr = s.openRun(runs[i])
		errs = append(errs, oerr)
	}
	return runs, errors.Join(errs...)
}

func (s *sealedJournal) WriteStep(ctx context.Context, l journal.Lease, st journal.StepRecord) error {
	st, err := s.sealStep(st, l.RunID)
	if err != nil {
		return err
	}
	return s.Journal.WriteStep(ctx, l, st)
}

func (s *sealedJournal) BeginStep(ctx context.Context, l journal.Lease) (journal.StepTx, error) {
	tx, err := s.Journal.BeginStep(ctx, l)
	if err != nil {
		return nil, err
	}
	return sealedTx{tx, s, l.RunID}, nil
}

// sealedTx seals the row a tx step commits.
type sealedTx struct {
	journal.StepTx
	s     *sealedJournal
	runID string
}

func (t sealedTx) Commit(ctx context.Context, st journal.StepRecord) error {
	st, err := t.s.sealStep(st, t.runID)
	if err != nil {
		return err // the engine's deferred Rollback ends the transaction
	}
	return t.StepTx.Commit(ctx, st)
}

func (s *sealedJournal) FinishRun(ctx context.Context, l journal.Lease, r journal.RunRecord) error {
	r.RunID = l.RunID // the run the lease names is the one written
	sr, err := s.sealRun(r)
	if err != nil {
		return err
	}
	return s.Journal.FinishRun(ctx, l, sr)
}

func (s *sealedJournal) Resolve(ctx context.Context, runID, stepKey string, res Resolution) error {
	if res.Done && len(res.Result) > 0 {
		sealed, err := s.seal(res.Result, runID, stepKey, "result")
		if err != nil {
			return err
		}
		res.Result = sealed
	}
	return s.Journal.Resolve(ctx, runID, stepKey, res)
}

// RenewLease and the other methods carry no sealed value: the embedded
// journal's serve. This assertion keeps the decorator complete.
var _ Journal = (*sealedJournal)(nil)

// signalStep names a signal's payload for the codec, as a step key names
// a result: any signal of that event sent to that run (its seq is the
// journal's to give).
func signalStep(name string) string { return "signal " + name }

func (s *sealedJournal) Signal(ctx context.Context, sig journal.SignalRecord) (journal.SignalRecord, error) {
	plain := sig.Payload
	var err error
	if sig.Payload, err = s.seal(sig.Payload, sig.RunID, signalStep(sig.Name), "payload"); err != nil {
		return sig, err
	}
	stored, err := s.Journal.Signal(ctx, sig)
	stored.Payload = plain
	return stored, err
}

func (s *sealedJournal) KeptSignal(ctx context.Context, runID, name string) (journal.SignalRecord, bool, error) {
	sig, ok, err := s.Journal.KeptSignal(ctx, runID, name)
	if err != nil || !ok {
		return sig, ok, err
	}
	sig.Payload, err = s.open(sig.Payload, runID, signalStep(name), "payload")
	return sig, ok, err
}

func (s *sealedJournal) ListSignals(ctx context.Context, runID string) ([]journal.SignalRecord, error) {
	sigs, err := s.Journal.ListSignals(ctx, runID)
	errs := []error{err}
	for i := range sigs {
		var oerr error
		sigs[i].Payload, oerr = s.open(sigs[i].Payload, runID, signalStep(sigs[i].Name), "payload")
		errs = append(errs, oerr)
	}
	return sigs, errors.Join(errs...)
}

func (s *sealedJournal) TakeSignal(ctx context.Context, l journal.Lease, seq int64, st journal.StepRecord) error {
	sealed, err := s.sealStep(st, l.RunID)
	if err != nil {
		return err
	}
	return s.Journal.TakeSignal(ctx, l, seq, sealed)
}
