package resume

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/resumegen/resumegen/runtime/journal"
)

// TestRegisterRefusesNamesTheJournalCannotStore proves that a definition
// whose identity, alias, version or step name is over the journal's
// limits is refused when it registers, naming the limit, and leaves the
// registry as it was.
func TestRegisterRefusesNamesTheJournalCannotStore(t *testing.T) {
	long := strings.Repeat("n", journal.MaxStepNameBytes+1)
	for _, c := range []struct {
		name string
		def  WorkflowDef
		want string
	}{
		{"identity", WorkflowDef{Package: "p", Name: "F", ID: strings.Repeat("w", journal.MaxWorkflowNameBytes+1), Version: "v"}, "MaxWorkflowNameBytes"},
		{"alias", WorkflowDef{Package: "p", Name: "F", Aliases: []string{"ok", "bad\x00alias"}, Version: "v"}, "NUL byte"},
		{"version", WorkflowDef{Package: "p", Name: "F", Version: strings.Repeat("v", journal.MaxVersionBytes+1)}, "MaxVersionBytes"},
		{"step name", WorkflowDef{Package: "p", Name: "F", Version: "v", Steps: []StepDef{{Name: long}}}, "MaxStepNameBytes"},
	} {
		t.Run(c.name, func(t *testing.T) {
			def := c.def
			func() {
				defer func() {
					v := recover()
					if v == nil || !strings.Contains(v.(string), c.want) {
						t.Errorf("Register: %v, want a panic naming %s", v, c.want)
					}
				}()
				Register(TestRegisterRefusesNamesTheJournalCannotStore, &def)
			}()
			if _, ok := Lookup(def.QualifiedName()); ok {
				t.Errorf("the refused definition was registered")
			}
		})
	}
}

// TestAwaitRefusesALongEventName proves that an await of an event name the
// journal cannot store fails at once, permanently, naming the limit,
// instead of suspending a run whose await row no journal takes.
func TestAwaitRefusesALongEventName(t *testing.T) {
	st := &runState{run: journal.RunRecord{RunID: "r"}, journal: map[string]journal.StepRecord{}, occur: map[string]int{}, keyed: map[string]bool{}}
	ctx := context.WithValue(context.Background(), stateKey{}, st)
	_, err := Await[int](ctx, strings.Repeat("e", journal.MaxStepNameBytes+1), 0)
	if !errors.Is(err, journal.ErrLimit) || !IsPermanent(err) || !strings.Contains(err.Error(), "MaxStepNameBytes") {
		t.Errorf("Await with a 257-byte name: %v, want a permanent limit error", err)
	}
}
