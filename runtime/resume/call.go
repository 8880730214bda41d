package resume

import (
	"context"
	"encoding/json"
	"fmt"
)

// Call runs one step that returns a result and an error. Inside a run it
// returns the journaled result of a step that already succeeded, and
// otherwise executes fn under the step's policy and journals the outcome.
// Outside a run it calls fn. For generated code only.
func Call[T any](ctx context.Context, def *StepDef, fn func(context.Context) (T, error)) (T, error) {
	return call(ctx, def, stepKey{}, fn)
}

// CallKey is [Call] for a call site with key=EXPR: the execution's journal
// key is Name[key] instead of its occurrence number, so a loop over owners
// is keyed by owner whatever their order. A key used twice in one run is an
// error: the second execution would otherwise replay the first's result.
// For generated code only.
func CallKey[T any](ctx context.Context, def *StepDef, key string, fn func(context.Context) (T, error)) (T, error) {
	return call(ctx, def, stepKey{value: key, set: true}, fn)
}

func call[T any](ctx context.Context, def *StepDef, key stepKey, fn func(context.Context) (T, error)) (T, error) {
	st := stateFrom(ctx)
	if st == nil {
		return fn(ctx)
	}
	var out T
	raw, replayed, err := st.step(ctx, def, key, func(ctx context.Context) (json.RawMessage, error) {
		v, err := fn(ctx)
		if err != nil {
			return nil, err
		}
		out = v
		b, err := json.Marshal(v)
		if err != nil {
			return nil, Permanent(fmt.Errorf("encode result: %w", err))
		}
		return b, nil
	})
	if err != nil {
		var zero T
		return zero, err
	}
	if replayed {
		if err := json.Unmarshal(raw, &out); err != nil {
			var zero T
			return zero, st.stopf("run %s, step %s: decode journaled result: %w", st.run.RunID, def.Name, err)
		}
	}
	return out, nil
}

// Call0 runs one step that returns only an error; see [Call]. For generated
// code only.
func Call0(ctx context.Context, def *StepDef, fn func(context.Context) error) error {
	return call0(ctx, def, stepKey{}, fn)
}

// Call0Key is [Call0] for a call site with key=EXPR; see [CallKey]. For
// generated code only.
func Call0Key(ctx context.Context, def *StepDef, key string, fn func(context.Context) error) error {
	return call0(ctx, def, stepKey{value: key, set: true}, fn)
}

func call0(ctx context.Context, def *StepDef, key stepKey, fn func(context.Context) error) error {
	st := stateFrom(ctx)
	if st == nil {
		return fn(ctx)
	}
	_, _, err := st.step(ctx, def, key, func(ctx context.Context) (json.RawMessage, error) {
		if err := fn(ctx); err != nil {
			return nil, err
		}
		return nullResult, nil
	})
	return err
}

var nullResult = json.RawMessage("null")

// stepKey is a call site's key= value, if it has key=.
type stepKey struct {
	value string
	set   bool
}
