package resume

import (
	"fmt"
	"strings"
)

// FaultPoint is where in a step an injected fault strikes.
type FaultPoint string

// Fault points, in the order a step passes them.
const (
	// FaultBefore strikes before the step does anything.
	FaultBefore FaultPoint = "before"
	// FaultEffect strikes after the step's code returned successfully and
	// before its journal row commits (for tx: the step's writes are done in
	// the open transaction).
	FaultEffect FaultPoint = "effect"
	// FaultAfter strikes after the step's journal row committed.
	FaultAfter FaultPoint = "after"
)

// Fault names the step and point at which the process dies, to prove that a
// workflow resumes correctly. Step matches a step's name (its first
// execution in the process) or an exact step key such as "NotifyOwner#2".
type Fault struct {
	Step  string
	Point FaultPoint
}

// String returns the fault as ParseFault reads it: STEP:POINT.
func (f Fault) String() string { return f.Step + ":" + string(f.Point) }

// ParseFault reads a fault written STEP:POINT, POINT being before, effect
// or after.
func ParseFault(s string) (Fault, error) {
	i := strings.LastIndexByte(s, ':')
	if i <= 0 {
		return Fault{}, fmt.Errorf("fault %q: want STEP:POINT, POINT one of before, effect, after", s)
	}
	f := Fault{Step: s[:i], Point: FaultPoint(s[i+1:])}
	switch f.Point {
	case FaultBefore, FaultEffect, FaultAfter:
		return f, nil
	}
	return Fault{}, fmt.Errorf("fault %q: unknown point %q, want before, effect or after", s, f.Point)
}

// KillProcess is the default fault action: the process sends itself SIGKILL
// (on Windows, terminates itself), so no deferred function, finalizer or
// buffered write runs, as in an OOM kill.
func KillProcess() {
	killSelf()
	select {} // the kill may land a moment later; never return into the step.
}
