package resume

import (
	"bytes"
	"context"
	"testing"

	"github.com/resumegen/resumegen/runtime/journal"
)

func TestAESGCMCodec(t *testing.T) {
	c, err := NewAESGCMCodec(bytes.Repeat([]byte{7}, 32))
	if err != nil {
		t.Fatal(err)
	}
	plain := []byte(`{"email":"ada@example.com"}`)
	sealed, err := c.Seal(plain, []byte("r1\x00Fetch\x00result"))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(sealed, []byte("ada@")) {
		t.Error("the sealed value holds the plain text")
	}
	again, _ := c.Seal(plain, []byte("r1\x00Fetch\x00result"))
	if bytes.Equal(sealed, again) {
		t.Error("two seals of one value are equal: the nonce is not random")
	}
	if got, err := c.Open(sealed, []byte("r1\x00Fetch\x00result")); err != nil || !bytes.Equal(got, plain) {
		t.Errorf("Open = %s, %v", got, err)
	}
	// A value moved to another run, step or field does not open.
	if _, err := c.Open(sealed, []byte("r2\x00Fetch\x00result")); err == nil {
		t.Error("a value moved to another run opened")
	}
	sealed[len(sealed)-1] ^= 1
	if _, err := c.Open(sealed, []byte("r1\x00Fetch\x00result")); err == nil {
		t.Error("a changed value opened")
	}
	if _, err := NewAESGCMCodec([]byte("short")); err == nil {
		t.Error("a 5-byte key was accepted")
	}
}

type notifyingJournal struct{ Journal }

func (notifyingJournal) NotifyWork(context.Context) (<-chan struct{}, error) { return nil, nil }

// TestSealJournalKeepsWorkNotifier: workers wait for notifications on a
// journal that offers them; the codec must not hide it.
func TestSealJournalKeepsWorkNotifier(t *testing.T) {
	c, _ := NewAESGCMCodec(bytes.Repeat([]byte{7}, 16))
	if _, ok := SealJournal(notifyingJournal{}, c).(journal.WorkNotifier); !ok {
		t.Error("a sealed notifying journal is no journal.WorkNotifier")
	}
	if _, ok := SealJournal(struct{ Journal }{}, c).(journal.WorkNotifier); ok {
		t.Error("a sealed journal became a journal.WorkNotifier")
	}
	if !journal.IsSealed([]byte(`{"resume:sealed":"v1","data":"AA=="}`)) || journal.IsSealed([]byte(`{"data":1}`)) {
		t.Error("journal.IsSealed misjudges")
	}
}
