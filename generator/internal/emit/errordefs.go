package emit

import (
	"github.com/dave/jennifer/jen"
)

// errorDefs emits the elements of the WorkflowDef's Errors, one a line,
// in id order:
//
//	resume.ErrorSentinel("example.com/bank.ErrDeclined", ErrDeclined),
//	resume.ErrorType[*CardError]("*example.com/bank.CardError"),
//
// They are not part of the version: see errorIdentity.
func (e *workflowEmitter) errorDefs() []jen.Code {
	var out []jen.Code
	for _, id := range e.w.ErrorIDs {
		if id.Sentinel != nil {
			name := id.Sentinel.Name()
			if q := e.imports.qualifier(id.Sentinel.Pkg()); q != "" {
				name = q + "." + name
			}
			out = append(out, jen.Line().Add(e.rt("ErrorSentinel")).Call(jen.Lit(id.ID), jen.Id(name)))
			continue
		}
		out = append(out, jen.Line().Add(e.rt("ErrorType")).Types(jen.Id(e.typ(id.Type))).Call(jen.Lit(id.ID)))
	}
	return append(out, jen.Line())
}
