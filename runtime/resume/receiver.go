package resume

import (
	"context"
	"errors"
	"fmt"
	"reflect"
)

// WithReceiver gives the engine the value to run workflows that are
// methods of its type on: a struct holding the workflow's dependencies
// (clients, pools, configuration), which is not journaled. A resumed run
// has only its journal; the receiver comes from here, for every run of
// those workflows the engine executes, started here or elsewhere:
//
//	svc := &Service{db: db, mail: mailer}
//	engine := resume.NewEngine(journal, resume.WithReceiver(svc))
//	out, err := resume.Run(ctx, engine, "onboard-42", svc.Onboard, in)
//
// An engine without the receiver of a method workflow neither starts nor
// claims its runs.
func WithReceiver(r any) Option {
	return func(e *Engine) {
		if e.receivers == nil {
			e.receivers = map[reflect.Type]any{}
		}
		e.receivers[reflect.TypeOf(r)] = r
	}
}

// ReceiverType is the receiver type of a workflow that is a method of R,
// for [WorkflowDef.Receiver]. For generated code only.
func ReceiverType[R any]() reflect.Type { return reflect.TypeFor[R]() }

// Receiver returns the value the engine executing ctx's run was given for
// methods of R ([WithReceiver]). For generated code only.
func Receiver[R any](ctx context.Context) (R, error) {
	var zero R
	st := stateFrom(ctx)
	if st == nil {
		return zero, errors.New("resume: Receiver outside a run")
	}
	r, ok := st.e.receivers[reflect.TypeFor[R]()].(R)
	if !ok {
		return zero, st.stopf("run %s: %w", st.run.RunID, st.e.canRun(st.def))
	}
	return r, nil
}

// canRun says why the engine cannot execute runs of def: it is a method
// whose receiver the engine was not given. It returns nil when it can.
func (e *Engine) canRun(def *WorkflowDef) error {
	if def.Receiver == nil || e.receivers[def.Receiver] != nil {
		return nil
	}
	return fmt.Errorf("workflow %s is a method of %s, and this engine was not given one to run it on: resume.NewEngine(journal, resume.WithReceiver(value))", def.QualifiedName(), def.Receiver)
}
