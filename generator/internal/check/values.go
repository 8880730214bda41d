package check

import (
	"go/types"

	"github.com/resumegen/resumegen/generator/internal/jsontype"
)

// journaled returns nil when every value of t survives the journal:
// encoding/json encodes it and decodes it back to what was encoded. It is
// the one test of every journaled value (a step's results, the pointees a
// step writes through, the run's input and output, an await's payload, a
// child's input and output); q names types in the error.
func journaled(t types.Type, q types.Qualifier) error {
	return jsontype.Journalable(t, q)
}
