package resume

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

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
// reads them back: the database holds them encrypted (with [NewKeyring]
// or [NewAESGCMCodec]) and the workflow sees them as usual. Ids, workflow
// names, versions, step keys, statuses and times stay readable, as
// operators and queries need them.
//
// Each sealed value is stored as JSON, {"resume:sealed":"v2","key":ID,
// "data":...} ("v1", without the key's id, for a [Codec] whose keys have
// none), which the journals' json columns accept; [journal.IsSealed]
// recognizes it. The journal records the ids of the keys that seal it
// (journal.KeyRegistry, resume_keys) before the first value is written,
// so that resumectl knows it is sealed.
//
// On a sealed journal every value is authenticated. A value that is not
// sealed where a sealed one belongs (plain JSON written by SQL over a
// sealed result), a succeeded step without its result, an envelope that
// does not open with the key it names (a flipped bit, a value moved from
// another run, step or field) or of unknown form is tampering: the row is
// unusable ([journal.StepRecord.Unreadable], [ErrTampered]) and the engine
// parks the run (needs_attention, kind journal) naming the run, the step
// and the field, never executing with the value. [ReadUnsealed] reads
// values that are not sealed as they are, for a journal sealed after the
// fact. A value sealed with a key the codec lacks is an error naming the
// key, never a wrong value: the program is missing a key, the row is not
// at fault.
//
// The codec wraps the journal the engine was given ([Engine.Journal]
// returns the wrapper); [journal.WorkNotifier] stays available.
func WithCodec(c Codec, opts ...SealOption) Option {
	return func(e *Engine) { e.journal = SealJournal(e.journal, c, opts...) }
}

// ErrTampered marks a value of a sealed journal that is not what the
// engine sealed: see [WithCodec].
var ErrTampered = errors.New("tampered")

// SealOption tunes [SealJournal] and [WithCodec].
type SealOption func(*sealedJournal)

// ReadUnsealed makes a sealed journal read a value that is not sealed as
// it is, instead of parking its run as tampered: for a journal that held
// runs before it was sealed. It trusts whoever can write the database
// for those values; leave it off once the old runs finished.
func ReadUnsealed() SealOption {
	return func(s *sealedJournal) { s.readUnsealed = true }
}

// KeyedCodec is a [Codec] whose keys have ids, so that they rotate: Seal
// seals with the first of KeyIDs, and a value names the key that sealed
// it, which OpenKey opens it with.
type KeyedCodec interface {
	Codec
	// KeyIDs lists the ids of the codec's keys, the sealing key first.
	KeyIDs() []string
	// OpenKey opens a value that the key named id sealed.
	OpenKey(id string, sealed, context []byte) ([]byte, error)
}

// Key is one key of a [NewKeyring]: an id, stored beside every value it
// seals, and an AES key of 16, 24 or 32 bytes.
type Key struct {
	ID     string
	Secret []byte
}

// NewKeyring returns a [KeyedCodec] over AES-GCM keys: it seals with
// keys[0] (the newest), and opens a value with the key whose id the value
// names, any of keys; a value sealed by [NewAESGCMCodec] (no key id) opens
// with whichever key authenticates it. Rotate by putting a new key first
// and keeping the old ones listed until no value they sealed is read.
func NewKeyring(keys ...Key) (KeyedCodec, error) {
	if len(keys) == 0 {
		return nil, errors.New("resume: key ring: no key")
	}
	k := &keyring{byID: map[string]aesGCM{}}
	for _, key := range keys {
		if key.ID == "" || strings.ContainsAny(key.ID, ":,\n \t") {
			return nil, fmt.Errorf("resume: key ring: key id %q: want a non-empty id without spaces, commas or colons", key.ID)
		}
		if _, dup := k.byID[key.ID]; dup {
			return nil, fmt.Errorf("resume: key ring: key id %q listed twice", key.ID)
		}
		c, err := NewAESGCMCodec(key.Secret)
		if err != nil {
			return nil, fmt.Errorf("resume: key ring: key %s: %w", key.ID, err)
		}
		k.byID[key.ID] = c.(aesGCM)
		k.ids = append(k.ids, key.ID)
	}
	return k, nil
}

// ParseKeys reads a key ring's keys as text: ID:BASE64 entries (the key
// in standard base64), separated by commas or lines, the sealing key
// first; blank lines and lines starting with # are skipped. resumectl
// reads -key-file and RESUME_KEYS so, and a program may too.
func ParseKeys(text string) ([]Key, error) {
	var keys []Key
	for _, f := range strings.FieldsFunc(text, func(r rune) bool { return r == ',' || r == '\n' }) {
		f = strings.TrimSpace(f)
		if f == "" || strings.HasPrefix(f, "#") {
			continue
		}
		id, b64, ok := strings.Cut(f, ":")
		if !ok {
			return nil, fmt.Errorf("resume: key entry %d: want ID:BASE64", len(keys)+1)
		}
		secret, err := base64.StdEncoding.DecodeString(strings.TrimSpace(b64))
		if err != nil {
			return nil, fmt.Errorf("resume: key %s: not standard base64", strings.TrimSpace(id))
		}
		keys = append(keys, Key{ID: strings.TrimSpace(id), Secret: secret})
	}
	if len(keys) == 0 {
		return nil, errors.New("resume: no key: want ID:BASE64 entries")
	}
	return keys, nil
}

type keyring struct {
	ids  []string
	byID map[string]aesGCM
}

func (k *keyring) KeyIDs() []string { return append([]string(nil), k.ids...) }

func (k *keyring) Seal(plain, context []byte) ([]byte, error) {
	return k.byID[k.ids[0]].Seal(plain, context)
}

// Open opens a value sealed without a key id (by NewAESGCMCodec) with
// whichever key authenticates it.
func (k *keyring) Open(sealed, context []byte) ([]byte, error) {
	var err error
	for _, id := range k.ids {
		var plain []byte
		if plain, err = k.byID[id].Open(sealed, context); err == nil {
			return plain, nil
		}
	}
	return nil, err
}

func (k *keyring) OpenKey(id string, sealed, context []byte) ([]byte, error) {
	c, ok := k.byID[id]
	if !ok {
		return nil, fmt.Errorf("no key %s", id)
	}
	return c.Open(sealed, context)
}

// NewAESGCMCodec returns a [Codec] that encrypts with AES-GCM (key of 16,
// 24 or 32 bytes: AES-128, -192 or -256) under a random nonce per value,
// authenticating the value's context. Its values name no key: prefer
// [NewKeyring], whose keys rotate.
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
	Sealed string `json:"resume:sealed"` // the format: "v1", or "v2" with Key
	Key    string `json:"key,omitempty"` // v2: the id of the key that sealed it
	Data   []byte `json:"data"`          // the codec's output
}

// SealJournal returns j with every value [WithCodec] lists sealed through
// c on the way in and opened, authenticated, on the way out (signals'
// payloads too). Engines get it through WithCodec; a program that reads a
// sealed journal itself (a report, an export, resumectl with a key) wraps
// the journal the same way.
func SealJournal(j Journal, c Codec, opts ...SealOption) Journal {
	s := &sealedJournal{Journal: j, codec: c}
	for _, o := range opts {
		o(s)
	}
	if n, ok := j.(journal.WorkNotifier); ok {
		return sealedNotifier{s, n}
	}
	return s
}

// sealedJournal is the decorator; it embeds the journal for the methods
// that carry no sealed value.
type sealedJournal struct {
	Journal
	codec        Codec
	readUnsealed bool

	mu        sync.Mutex
	keysNoted bool // the journal records the codec's key ids
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

// KeyIDs lists the ids of the keys the journal seals with, the sealing
// key first; a [Codec] whose keys have no ids has one, "".
func (s *sealedJournal) KeyIDs() []string {
	if kc, ok := s.codec.(KeyedCodec); ok {
		return kc.KeyIDs()
	}
	return []string{""}
}

// noteKeys records, once, the id of the key the journal seals with in
// the journal (journal.KeyRegistry), before the first value is written.
func (s *sealedJournal) noteKeys(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.keysNoted {
		return nil
	}
	if kr, ok := journal.Find[journal.KeyRegistry](s.Journal); ok {
		if err := kr.RecordKeys(ctx, s.KeyIDs()[:1]); err != nil {
			return fmt.Errorf("sealed journal: %w", err)
		}
	}
	s.keysNoted = true
	return nil
}

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
	env := envelope{Sealed: "v1", Data: data}
	if kc, ok := s.codec.(KeyedCodec); ok {
		env.Sealed, env.Key = "v2", kc.KeyIDs()[0]
	}
	return json.Marshal(env)
}

// where names a value for an error: its run, step and field.
func where(runID, stepKey, field string) string {
	if stepKey == "" {
		return "run " + runID + ": " + field
	}
	return "run " + runID + ", step " + stepKey + ": " + field
}

func (s *sealedJournal) open(b []byte, runID, stepKey, field string) ([]byte, error) {
	if !journal.IsSealed(b) {
		if len(b) == 0 || s.readUnsealed {
			return b, nil
		}
		return b, fmt.Errorf("%s is not sealed, on a sealed journal: %w (changed outside the engine, or written before the journal was sealed: resume.ReadUnsealed reads such values)",
			where(runID, stepKey, field), ErrTampered)
	}
	var env envelope
	if err := json.Unmarshal(b, &env); err != nil || env.Sealed != "v1" && env.Sealed != "v2" || env.Sealed == "v2" && env.Key == "" {
		return b, fmt.Errorf("%s: a sealed value of unknown form: %w", where(runID, stepKey, field), ErrTampered)
	}
	ctx := valueContext(runID, stepKey, field)
	if env.Sealed == "v1" {
		plain, err := s.codec.Open(env.Data, ctx)
		if err != nil {
			return nil, fmt.Errorf("%s does not open with this codec (another key, or a changed row): %w", where(runID, stepKey, field), err)
		}
		return plain, nil
	}
	kc, ok := s.codec.(KeyedCodec)
	if !ok {
		return nil, fmt.Errorf("%s was sealed with key %s of a key ring (resume.NewKeyring), and this codec names no keys", where(runID, stepKey, field), env.Key)
	}
	if !slices.Contains(kc.KeyIDs(), env.Key) {
		return nil, fmt.Errorf("%s was sealed with key %s, which this program's keys (%s) lack: add it to the key ring", where(runID, stepKey, field), env.Key, strings.Join(kc.KeyIDs(), ", "))
	}
	plain, err := kc.OpenKey(env.Key, env.Data, ctx)
	if err != nil {
		return b, fmt.Errorf("%s does not open with key %s, which sealed it: %w (changed outside the engine, or moved from another run, step or field)", where(runID, stepKey, field), env.Key, ErrTampered)
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

// openRunRow opens a run read back: a tampered value makes the row
// unusable (Unreadable says why, and the engine parks the run on it); any
// other failure to open is returned.
func (s *sealedJournal) openRunRow(r journal.RunRecord) (journal.RunRecord, error) {
	opened, err := s.openRun(r) // a tampered value stays as stored
	tampered, other := splitTampered(err)
	opened.Unreadable = joinWhy(opened.Unreadable, tampered)
	return opened, other
}

// openStepRow is openRunRow for a step row of run runID, whose moves
// between versions are moves: a row a move relabelled (renamed-from=)
// holds values sealed under the key it had then.
func (s *sealedJournal) openStepRow(st journal.StepRecord, runID string, moves []journal.Move) (journal.StepRecord, error) {
	opened, err := s.openStep(st, runID)
	if former := formerKeys(st.StepKey, moves); err != nil && len(former) > 0 {
		opened, err = mapStep(st, runID, func(b []byte, runID, stepKey, field string) ([]byte, error) {
			return s.openAs(b, runID, stepKey, former, field, s.open)
		}, func(t, runID, stepKey, field string) (string, error) {
			b, err := s.openAs([]byte(t), runID, stepKey, former, field, func(b []byte, runID, stepKey, field string) ([]byte, error) {
				t, err := s.openText(string(b), runID, stepKey, field)
				return []byte(t), err
			})
			return string(b), err
		})
	}
	if err == nil && !s.readUnsealed && len(st.Result) == 0 && (st.Status == journal.StepSucceeded || st.Status == journal.StepWaiting) {
		// The engine journals every succeeded step's result, null
		// included: an empty one was removed.
		err = fmt.Errorf("%s is empty, on a sealed journal: %w (the engine seals every succeeded step's result)", where(runID, st.StepKey, "result"), ErrTampered)
	}
	tampered, other := splitTampered(err)
	opened.Unreadable = joinWhy(opened.Unreadable, tampered)
	return opened, other
}

// openAs opens b, a value of the step now keyed stepKey, as sealed under
// that key or, for a row a move relabelled, under one of its former keys
// (newest first); the error is the one under the current key.
func (s *sealedJournal) openAs(b []byte, runID, stepKey string, former []string, field string,
	open func(b []byte, runID, stepKey, field string) ([]byte, error)) ([]byte, error) {
	plain, err := open(b, runID, stepKey, field)
	if err == nil || !journal.IsSealed(b) {
		return plain, err
	}
	for _, k := range former {
		if p, ferr := open(b, runID, k, field); ferr == nil {
			return p, nil
		}
	}
	return plain, err
}

// formerKeys lists the keys a step row now keyed key had before the
// run's moves relabelled it, newest first: each move's renames map a
// former name to the name after it.
func formerKeys(key string, moves []journal.Move) []string {
	var out []string
	for i := len(moves) - 1; i >= 0; i-- {
		name := journal.StepName(key)
		for from, to := range moves[i].Renames {
			if to == name {
				key = from + key[len(name):]
				out = append(out, key)
				break
			}
		}
	}
	return out
}

// splitTampered splits a joined error into the text of its tampered
// values and the other errors.
func splitTampered(err error) (string, error) {
	if err == nil {
		return "", nil
	}
	errs := []error{err}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	}
	var why []string
	var other []error
	for _, e := range errs {
		if errors.Is(e, ErrTampered) {
			why = append(why, e.Error())
		} else {
			other = append(other, e)
		}
	}
	return strings.Join(why, "; "), errors.Join(other...)
}

func joinWhy(a, b string) string {
	if b == "" {
		return a
	}
	if a == "" {
		return b
	}
	return a + "; " + b
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
// of the read itself (ErrRunBusy with the run) is kept. A tampered value
// makes its row unusable rather than the read an error.
func (s *sealedJournal) openEntry(r journal.RunRecord, steps []journal.StepRecord, err error) (journal.RunRecord, []journal.StepRecord, error) {
	r, oerr := s.openRunRow(r)
	if oerr != nil && r.RunID == "" && err != nil {
		oerr = nil // nothing was read
	}
	errs := []error{err, oerr}
	out := make([]journal.StepRecord, len(steps))
	for i, st := range steps {
		var serr error
		out[i], serr = s.openStepRow(st, r.RunID, r.Moves)
		errs = append(errs, serr)
	}
	if steps == nil {
		out = nil
	}
	return r, out, errors.Join(errs...)
}

func (s *sealedJournal) CreateRun(ctx context.Context, r journal.RunRecord) (journal.RunRecord, bool, error) {
	if err := s.noteKeys(ctx); err != nil {
		return journal.RunRecord{}, false, err
	}
	sr, err := s.sealRun(r)
	if err != nil {
		return journal.RunRecord{}, false, err
	}
	stored, created, err := s.Journal.CreateRun(ctx, sr)
	if err != nil {
		return stored, created, err
	}
	stored, err = s.openRunRow(stored)
	return stored, created, err
}

func (s *sealedJournal) Claim(ctx context.Context, c journal.ClaimRequest) (journal.RunRecord, []journal.StepRecord, error) {
	return s.openEntry(s.Journal.Claim(ctx, c))
}

func (s *sealedJournal) ClaimNext(ctx context.Context, c journal.ClaimNextRequest) (journal.RunRecord, []journal.StepRecord, error) {
	return s.openEntry(s.Journal.ClaimNext(ctx, c))
}

// ClaimBatch passes the journal's journal.BatchClaimer through, opening
// each run's sealed values; over a journal that claims one run at a time
// it is ClaimNext.
func (s *sealedJournal) ClaimBatch(ctx context.Context, c journal.ClaimNextRequest, max int) ([]journal.ClaimedRun, error) {
	bc, ok := s.Journal.(journal.BatchClaimer)
	if !ok {
		return journal.ClaimedOne(s.ClaimNext(ctx, c))
	}
	runs, err := bc.ClaimBatch(ctx, c, max)
	for i := range runs {
		var oerr error
		runs[i].Run, runs[i].Steps, oerr = s.openEntry(runs[i].Run, runs[i].Steps, runs[i].Err)
		runs[i].Err = oerr
	}
	return runs, err
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
		runs[i], oerr = s.openRunRow(runs[i])
		errs = append(errs, oerr)
	}
	return runs, errors.Join(errs...)
}

func (s *sealedJournal) WriteStep(ctx context.Context, l journal.Lease, st journal.StepRecord) error {
	if err := s.noteKeys(ctx); err != nil {
		return err
	}
	st, err := s.sealStep(st, l.RunID)
	if err != nil {
		return err
	}
	return s.Journal.WriteStep(ctx, l, st)
}

func (s *sealedJournal) BeginStep(ctx context.Context, l journal.Lease) (journal.StepTx, error) {
	if err := s.noteKeys(ctx); err != nil {
		return nil, err
	}
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
	if err := s.noteKeys(ctx); err != nil {
		return err
	}
	sr, err := s.sealRun(r)
	if err != nil {
		return err
	}
	return s.Journal.FinishRun(ctx, l, sr)
}

func (s *sealedJournal) Resolve(ctx context.Context, runID, stepKey string, res Resolution) error {
	if err := s.noteKeys(ctx); err != nil {
		return err
	}
	var err error
	if res.Done {
		if len(res.Result) == 0 {
			res.Result = nullResult // sealed too: the journal would store a plain null
		}
		if res.Result, err = s.seal(res.Result, runID, stepKey, "result"); err != nil {
			return err
		}
	} else if res.RedoError, err = s.sealText(res.RedoText(), runID, stepKey, "error"); err != nil {
		return err
	}
	return s.Journal.Resolve(ctx, runID, stepKey, res)
}

// ForkRun seals the fork's new run and its copied rows for the new run's
// id (the values were opened for the original's) before the journal
// stores them (journal.Forker): a row sealed for the original's id would
// not open under the fork's. A journal that cannot fork is refused.
func (s *sealedJournal) ForkRun(ctx context.Context, f journal.ForkRequest) (journal.RunRecord, bool, error) {
	fk, ok := journal.Find[journal.Forker](s.Journal)
	if !ok {
		return journal.RunRecord{}, false, fmt.Errorf("run %s: fork: this journal cannot fork runs (journal.Forker)", f.From)
	}
	if err := s.noteKeys(ctx); err != nil {
		return journal.RunRecord{}, false, err
	}
	var err error
	if f.Run, err = s.sealRun(f.Run); err != nil {
		return journal.RunRecord{}, false, err
	}
	steps := make([]journal.StepRecord, len(f.Steps))
	for i, st := range f.Steps {
		if steps[i], err = s.sealStep(st, f.Run.RunID); err != nil {
			return journal.RunRecord{}, false, err
		}
	}
	f.Steps = steps
	stored, created, err := fk.ForkRun(ctx, f)
	if err != nil {
		return stored, created, err
	}
	stored, err = s.openRunRow(stored)
	return stored, created, err
}

var _ journal.Forker = (*sealedJournal)(nil)

// RenewLease and the other methods carry no sealed value: the embedded
// journal's serve. This assertion keeps the decorator complete.
var _ Journal = (*sealedJournal)(nil)

// signalStep names a signal's payload for the codec, as a step key names
// a result: any signal of that event sent to that run (its seq is the
// journal's to give).
func signalStep(name string) string { return "signal " + name }

func (s *sealedJournal) Signal(ctx context.Context, sig journal.SignalRecord) (journal.SignalRecord, error) {
	if err := s.noteKeys(ctx); err != nil {
		return sig, err
	}
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
	if err := s.noteKeys(ctx); err != nil {
		return err
	}
	sealed, err := s.sealStep(st, l.RunID)
	if err != nil {
		return err
	}
	return s.Journal.TakeSignal(ctx, l, seq, sealed)
}

// ContinueRun seals the ending run's values under its own id and the next
// run's input under the next run's id, so that each opens only as the row
// it is (see journal.Continuer).
func (s *sealedJournal) ContinueRun(ctx context.Context, l journal.Lease, r, next journal.RunRecord) (journal.RunRecord, error) {
	cj, ok := journal.Find[journal.Continuer](s.Journal)
	if !ok {
		return journal.RunRecord{}, fmt.Errorf("run %s: continue as %s: the journal does not implement journal.Continuer", l.RunID, next.RunID)
	}
	if err := s.noteKeys(ctx); err != nil {
		return journal.RunRecord{}, err
	}
	r.RunID = l.RunID
	sr, err := s.sealRun(r)
	if err != nil {
		return journal.RunRecord{}, err
	}
	sn, err := s.sealRun(next)
	if err != nil {
		return journal.RunRecord{}, err
	}
	stored, err := cj.ContinueRun(ctx, l, sr, sn)
	if err != nil {
		return stored, err
	}
	return s.openRunRow(stored)
}

var _ journal.Continuer = (*sealedJournal)(nil)
