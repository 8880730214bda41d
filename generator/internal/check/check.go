// Package check is the generator's list of checks: each a named function
// that reads the model of the packages (package model) and reports what
// the generator refuses, with its position and the fix. No check writes
// to the model, and none depends on another's result: each is tested
// alone, in the file beside it (nondet_test.go beside nondet.go) with
// package pipetest, and adding a refusal means adding one check, or one
// case to a check, with its test beside it.
//
// A check reports through its [Pass]: Errorf for a refusal, Warnf for
// what is allowed but probably not meant, and Nondet for a
// non-determinism that a //resume:allow on its line may turn into a
// reviewed exception, which [Run] returns for the manifest.
package check

import (
	"go/token"

	"github.com/resumegen/resumegen/generator/internal/diag"
	"github.com/resumegen/resumegen/generator/internal/directive"
	"github.com/resumegen/resumegen/generator/internal/model"
)

// Check is one named check.
type Check struct {
	// Name is the check's name, as a test or a reader refers to it.
	Name string
	// Doc says what it refuses, in a sentence.
	Doc string
	// Run reports the check's findings for the packages of the pass.
	Run func(*Pass)
	// GeneratorOnly marks a check that go vet does not run: one about
	// the generated code itself, which vet sees compiled into the package.
	GeneratorOnly bool
}

// Pass is what a check reads and where it reports.
type Pass struct {
	// Packages are the models of every package of the run.
	Packages []*model.Package
	// Vet is set under go vet, where the generated files are compiled
	// into the package; the generator is about to rewrite them.
	Vet bool

	errors, warnings *diag.List
	exceptions       map[*model.Workflow][]model.Exception
	used             map[directive.Line]bool
	allowPaths       map[*model.Workflow]*allowPaths
}

// Errorf reports a refusal at pos.
func (p *Pass) Errorf(pos token.Pos, format string, args ...any) {
	p.errors.Errorf(pos, format, args...)
}

// Warnf reports, at pos, what is allowed but probably not meant.
func (p *Pass) Warnf(pos token.Pos, format string, args ...any) {
	p.warnings.Errorf(pos, format, args...)
}

// PosString is pos as "file:line:col", the file relative as diagnostics
// print it, for a message that points at a second place.
func (p *Pass) PosString(pos token.Pos) string { return p.errors.PosString(pos) }

// Rel makes a file name relative as diagnostics print it.
func (p *Pass) Rel(name string) string { return p.errors.Rel(name) }

// Nondet reports a non-deterministic operation (what, without its
// position) of workflow w at pos, in the function in, unless a
// //resume:allow records it as a reviewed exception: on its line, or on
// the lines of calls on the way to it from the workflow body (the call of
// in, the call of the function calling in, and so on), where a reviewer
// of the body sees it, when every way from the body to in crosses one.
func (p *Pass) Nondet(in *model.Func, w *model.Workflow, pos token.Pos, what, msg string) {
	if p.allowAt(in.Pkg, pos, w, what) {
		return
	}
	if len(in.Path) > 0 {
		ap := p.allowPaths[w]
		if ap == nil {
			ap = newAllowPaths(w)
			p.allowPaths[w] = ap
		}
		calls := ap.allowedCalls(in.Decl)
		if !ap.free[in.Decl] && len(calls) > 0 {
			for _, c := range calls {
				p.allowAt(c.pkg, c.at, w, what)
			}
			return
		}
		// Refused: another way leads here. The allows on the ways that
		// have one are still needed once that way is fixed.
		for _, c := range calls {
			p.used[lineOf(c.pkg, c.at)] = true
		}
	}
	p.Errorf(pos, "%s", msg)
}

// allowAt records, when the line of pos (in a file of pkg) ends with a
// //resume:allow, the exception it makes for w, and reports whether it
// does.
func (p *Pass) allowAt(pkg *model.Package, pos token.Pos, w *model.Workflow, what string) bool {
	line := lineOf(pkg, pos)
	a, ok := pkg.Directives.Allows[line]
	if !ok {
		return false
	}
	p.used[line] = true
	p.exceptions[w] = append(p.exceptions[w], model.Exception{Check: "nondeterministic", What: what, Reason: a.Reason})
	return true
}

// Result is what a run of the checks found besides its diagnostics.
type Result struct {
	// Exceptions are the reviewed exceptions of each workflow, in the
	// order the step search met them.
	Exceptions map[*model.Workflow][]model.Exception
}

// Run runs the checks on pkgs, reporting refusals in errors and warnings
// in warnings. vet leaves out the checks go vet does not run.
func Run(checks []*Check, pkgs []*model.Package, errors, warnings *diag.List, vet bool) Result {
	p := &Pass{Packages: pkgs, Vet: vet, errors: errors, warnings: warnings,
		exceptions: map[*model.Workflow][]model.Exception{}, used: map[directive.Line]bool{},
		allowPaths: map[*model.Workflow]*allowPaths{}}
	for _, c := range checks {
		if vet && c.GeneratorOnly {
			continue
		}
		c.Run(p)
	}
	unusedAllows(p)
	return Result{Exceptions: p.exceptions}
}

// unusedAllows reports the //resume:allow directives that silenced
// nothing. One in a function no workflow reaches is reported as such by
// the unreached check instead.
func unusedAllows(p *Pass) {
	for _, pkg := range p.Packages {
		for _, ib := range pkg.Directives.InBodies {
			d := ib.Directive
			if d.Verb != "allow" || !pkg.Reached[ib.Func] {
				continue
			}
			at := pkg.Load.Fset.Position(d.Pos)
			if !p.used[directive.Line{File: at.Filename, Line: at.Line}] {
				p.Errorf(d.Pos, "%s: nothing on this line needs it: remove the directive", d.Text)
			}
		}
	}
}

// workflows calls f for each workflow of the pass whose step search ran
// (not a method of a generic type), with its package.
func (p *Pass) workflows(f func(pkg *model.Package, w *model.Workflow)) {
	for _, pkg := range p.Packages {
		for _, w := range pkg.Workflows {
			if !w.BadRecv {
				f(pkg, w)
			}
		}
	}
}
