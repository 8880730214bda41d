package journaltest

import (
	"context"
	"fmt"
	"os"
	"sync"

	"github.com/resumegen/resumegen/runtime/resume"
)

// PoisonPlan steers Poison, the workflow of the fault attacks (issue 10):
// where it panics, and whether its process dies. It is the run's input.
type PoisonPlan struct {
	PanicRisky int  // Risky (default, 3 attempts) panics in its first PanicRisky executions
	PanicStore bool // Store (tx) inserts its effect row, then panics, in its first execution
	PanicSend  bool // Send (once) panics in its first execution
	PanicBody  bool // the body panics after its steps
	// Die makes Risky end its process, until the run is healed: "exit"
	// (os.Exit(3)), "kill" (SIGKILL), or "crash" (the suite's in-process
	// stand-in: a panic the engine lets through).
	Die string
}

// healed lists the runs whose Die no longer strikes: the cause was fixed.
var healed sync.Map

// execLogEnv names a file to which Risky appends its run id at each
// execution, before it may die: the count survives the process.
const execLogEnv = "JOURNALTEST_EXEC_LOG"

// Risky is a default step with a retry budget of 3.
func Risky(ctx context.Context, p PoisonPlan) (string, error) {
	n := seen.record(ctx, "Risky")
	info, _ := resume.StepFromContext(ctx)
	if path := os.Getenv(execLogEnv); path != "" {
		f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
		if err != nil {
			return "", err
		}
		_, err = fmt.Fprintln(f, info.RunID)
		if err == nil {
			err = f.Sync()
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return "", err
		}
	}
	if _, ok := healed.Load(info.RunID); !ok {
		switch p.Die {
		case "exit":
			os.Exit(3)
		case "kill":
			resume.KillProcess()
		case "crash":
			panic(crash{})
		}
	}
	if n <= p.PanicRisky {
		panic(fmt.Sprintf("risky boom %d", n))
	}
	return "ok", nil
}

// Store is a tx step: it inserts one effect row through resume.Tx.
func Store(ctx context.Context, p PoisonPlan) error {
	n := seen.record(ctx, "Store")
	info, _ := resume.StepFromContext(ctx)
	if h := harness(); h.InsertEffect != nil { // none in a worker process
		if err := h.InsertEffect(ctx, info.RunID); err != nil {
			return err
		}
	}
	if p.PanicStore && n == 1 {
		panic("store boom")
	}
	return nil
}

// Send is a once step.
func Send(ctx context.Context, p PoisonPlan) error {
	if n := seen.record(ctx, "Send"); p.PanicSend && n == 1 {
		panic("send boom")
	}
	return nil
}

// Poison is the fault attacks' workflow, written as a user would.
func Poison(ctx context.Context, p PoisonPlan) (string, error) { return poisonBody(ctx, p, false) }

func poisonBody(ctx context.Context, p PoisonPlan, durable bool) (string, error) {
	risky, store, send := Risky, Store, Send
	if durable {
		risky = func(ctx context.Context, p PoisonPlan) (string, error) {
			return resume.Call(ctx, &poisonSteps[0], func(ctx context.Context) (string, error) { return Risky(ctx, p) })
		}
		store = func(ctx context.Context, p PoisonPlan) error {
			return resume.Call0(ctx, &poisonSteps[1], func(ctx context.Context) error { return Store(ctx, p) })
		}
		send = func(ctx context.Context, p PoisonPlan) error {
			return resume.Call0(ctx, &poisonSteps[2], func(ctx context.Context) error { return Send(ctx, p) })
		}
	}
	r, err := risky(ctx, p)
	if err != nil {
		return "", fmt.Errorf("risky: %w", err)
	}
	if err := store(ctx, p); err != nil {
		return "", err
	}
	if err := send(ctx, p); err != nil {
		return "", err
	}
	if p.PanicBody {
		var m map[string]int
		m[r]++ // assignment to entry in nil map
	}
	return r, nil
}

var poisonSteps = []resume.StepDef{
	{Name: "Risky", Callee: "journaltest.Risky", Signature: "func(context.Context, PoisonPlan) (string, error)", Attempts: 3, BackoffMin: 1, BackoffMax: 1},
	{Name: "Store", Callee: "journaltest.Store", Signature: "func(context.Context, PoisonPlan) error", Policy: resume.PolicyTx, Attempts: 2, BackoffMin: 1, BackoffMax: 1},
	{Name: "Send", Callee: "journaltest.Send", Signature: "func(context.Context, PoisonPlan) error", Policy: resume.PolicyOnce},
}

var poisonDef = &resume.WorkflowDef{
	Package: "github.com/resumegen/resumegen/runtime/journaltest", Name: "Poison", Version: "poison-v1", Steps: poisonSteps,
	Run: func(ctx context.Context, args resume.Args) (any, error) {
		var p PoisonPlan
		if err := args.Decode(&p); err != nil {
			return nil, err
		}
		return poisonBody(ctx, p, true)
	},
}

func init() { resume.Register(Poison, poisonDef) }

// PoisonParent runs Poison as a child run: a panic in the child stays in
// the child.
func PoisonParent(ctx context.Context, p PoisonPlan) (string, error) {
	return poisonParentBody(ctx, p, false)
}

func poisonParentBody(ctx context.Context, p PoisonPlan, durable bool) (string, error) {
	child := Poison
	if durable {
		child = func(ctx context.Context, p PoisonPlan) (string, error) {
			return resume.CallChild(ctx, &poisonParentSteps[0], Poison, func(ctx context.Context) (string, error) { return Poison(ctx, p) }, p)
		}
	}
	out, err := child(ctx, p)
	if err != nil {
		return "", fmt.Errorf("child: %w", err)
	}
	return "parent of " + out, nil
}

var poisonParentSteps = []resume.StepDef{
	{Name: "Poison", Callee: "journaltest.Poison", Signature: "func(context.Context, PoisonPlan) (string, error)", Child: true},
}

var poisonParentDef = &resume.WorkflowDef{
	Package: "github.com/resumegen/resumegen/runtime/journaltest", Name: "PoisonParent", Version: "poison-parent-v1", Steps: poisonParentSteps,
	Run: func(ctx context.Context, args resume.Args) (any, error) {
		var p PoisonPlan
		if err := args.Decode(&p); err != nil {
			return nil, err
		}
		return poisonParentBody(ctx, p, true)
	},
}

func init() { resume.Register(PoisonParent, poisonParentDef) }
