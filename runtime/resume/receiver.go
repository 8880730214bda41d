package resume

import (
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

// canRun says why the engine cannot execute runs of def: it is a method
// whose receiver the engine was not given. It returns nil when it can.
func (e *Engine) canRun(def *WorkflowDef) error {
	if err := def.staleErr(); err != nil {
		return err
	}
	if def.Receiver == nil || e.receivers[def.Receiver] != nil {
		return nil
	}
	return fmt.Errorf("workflow %s is a method of %s, and this engine was not given one to run it on: resume.NewEngine(journal, resume.WithReceiver(value))", def.QualifiedName(), def.Receiver)
}
