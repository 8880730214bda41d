package check

import (
	"go/types"

	"github.com/resumegen/resumegen/generator/internal/jsontype"
)

// journaled returns nil when every value of t survives the journal whole:
// encoding/json encodes it and decodes it back to what was encoded, so a
// resumed run sees what the first run saw (see jsontype.RoundTrip). It is
// the one test of every journaled value: a step's results and the pointees
// it writes through (the model's, which journals only those that pass),
// the run's input and output, an await's payload, a child's input and
// output, and the fields of an error type; q names types in the error.
func journaled(t types.Type, q types.Qualifier) error {
	return jsontype.RoundTrip(t, q)
}
