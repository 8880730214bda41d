package journaltest

import (
	"context"
	"fmt"

	"github.com/resumegen/resumegen/runtime/resume"
)

// Parcel and Options are Ship's two inputs.
type (
	Parcel  struct{ ID string }
	Options struct{ Express bool }
)

// Ship is a workflow of two inputs; Mark one of none whose result is only
// an error. They prove the typed starts of every shape.
func Ship(ctx context.Context, p Parcel, o Options) (string, error) {
	return fmt.Sprintf("%s express=%v", p.ID, o.Express), nil
}

// Mark is a workflow without input whose result is only an error.
func Mark(ctx context.Context) error { return nil }

var shipDef = &resume.WorkflowDef{
	Package: "github.com/resumegen/resumegen/runtime/journaltest", Name: "Ship", Version: "ship-v1",
	Run: func(ctx context.Context, args resume.Args) (any, error) {
		var p Parcel
		var o Options
		if err := args.Decode(&p, &o); err != nil {
			return nil, err
		}
		return Ship(ctx, p, o)
	},
}

var markDef = &resume.WorkflowDef{
	Package: "github.com/resumegen/resumegen/runtime/journaltest", Name: "Mark", Version: "mark-v1",
	Run: func(ctx context.Context, args resume.Args) (any, error) {
		if err := args.Decode(); err != nil {
			return nil, err
		}
		return nil, Mark(ctx)
	},
}

func init() {
	resume.Register(Ship, shipDef)
	resume.Register(Mark, markDef)
}
