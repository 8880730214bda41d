package resume

import (
	"encoding/json"
	"errors"
)

// ErrorDef makes one error identity survive the journal. For generated code only.
type ErrorDef struct {
	id       string
	sentinel error
}

// ErrorSentinel declares the package-level sentinel err, journaled as id.
// For generated code only.
func ErrorSentinel(id string, err error) ErrorDef { return ErrorDef{id: id, sentinel: err} }

// ErrorType declares the concrete error type E, journaled as id. For
// generated code only.
func ErrorType[E error](id string) ErrorDef { return ErrorDef{id: id} }

// errorDetail is what this minimal codec journals beside an error's text.
type errorDetail struct {
	Permanent bool `json:"permanent,omitempty"`
}

// encodeStepError returns the JSON detail to journal for err, which the
// body of a run of def received from a step.
func encodeStepError(def *WorkflowDef, err error) json.RawMessage {
	if !IsPermanent(err) {
		return nil
	}
	b, _ := json.Marshal(errorDetail{Permanent: true})
	return b
}

// decodeStepError rebuilds the error from its journaled text and detail:
// same Error() text, IsPermanent as before, identities per def.Errors.
func decodeStepError(def *WorkflowDef, text string, detail json.RawMessage) error {
	err := errors.New(text)
	var d errorDetail
	if len(detail) > 0 && json.Unmarshal(detail, &d) == nil && d.Permanent {
		return Permanent(err)
	}
	return err
}
