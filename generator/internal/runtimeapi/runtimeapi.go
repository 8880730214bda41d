// Package runtimeapi is what the generator knows of the runtime package
// that generated code imports: its import path and the calls of it that
// are journaled points of a workflow (its waits).
package runtimeapi

import "go/types"

// Path is the import path of the runtime package generated code uses.
const Path = "github.com/resumegen/resumegen/runtime/resume"

// Module is the module of the runtime the generated code imports.
const Module = "github.com/resumegen/resumegen"

// Wait says which of the runtime's waits a function is.
type Wait int

const (
	// NotWait is any other function.
	NotWait Wait = iota
	// Sleep is resume.Sleep or resume.SleepUntil.
	Sleep
	// Await is resume.Await[T].
	Await
)

// SleepStepName is the journal name of every Sleep and SleepUntil of a
// run, whatever its call site: the runtime counts them as a loop's steps
// (resume.Sleep, resume.Sleep#2, ...).
const SleepStepName = "resume.Sleep"

// WaitOf says which wait fn is, if any.
func WaitOf(fn *types.Func) Wait {
	if fn == nil || fn.Pkg() == nil || fn.Pkg().Path() != Path || fn.Type().(*types.Signature).Recv() != nil {
		return NotWait
	}
	return WaitByName(fn.Name())
}

// WaitByName says which wait the runtime's function name is, if any.
func WaitByName(name string) Wait {
	switch name {
	case "Sleep", "SleepUntil":
		return Sleep
	case "Await":
		return Await
	}
	return NotWait
}

// IsMap reports whether fn is resume.Map, the fan-out: it calls the
// function literal it is given once per item, in the items' order, where
// the call is written, so the literal's journaled calls are ordered like
// a loop body's.
func IsMap(fn *types.Func) bool {
	return fn != nil && fn.Pkg() != nil && fn.Pkg().Path() == Path && fn.Name() == "Map" && fn.Type().(*types.Signature).Recv() == nil
}
