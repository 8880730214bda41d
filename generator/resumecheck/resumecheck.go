// Package resumecheck is resumegen's checks as a go/analysis Analyzer:
// what the generator refuses in workflow bodies and in the helpers they
// call (steps in go, defer, select, closures or map ranges; clocks, random
// numbers, the environment, file reads and package-level writes outside
// steps; calls through function values, interface methods or other
// packages that may reach a step; step types JSON cannot round-trip;
// malformed, misplaced or near-miss directives such as // resume:step;
// duplicate step names), reported by go vet at the same positions and
// with the same messages as resumegen:
//
//	go install github.com/resumegen/resumegen/cmd/resumevet
//	go vet -vettool=$(go env GOPATH)/bin/resumevet ./...
//
// The checks themselves are [generator.Check], which resumegen runs
// in-process on the packages it loads, so the two never disagree.
package resumecheck

import (
	"go/token"

	"github.com/resumegen/resumegen/generator"
	"golang.org/x/tools/go/analysis"
)

// Analyzer reports what resumegen would refuse to generate.
var Analyzer = &analysis.Analyzer{
	Name: "resumecheck",
	Doc: "report what resumegen refuses in //resume:workflow bodies and //resume: directives\n\n" +
		"Steps whose order a journal cannot reproduce, non-deterministic calls and\n" +
		"package-level writes outside steps, step types JSON cannot round-trip,\n" +
		"and malformed directives; see package github.com/resumegen/resumegen/generator.",
	URL: "https://pkg.go.dev/github.com/resumegen/resumegen/generator/resumecheck",
	Run: run,
}

func run(pass *analysis.Pass) (any, error) {
	generator.Check(pass.Fset, pass.Files, pass.Pkg, pass.TypesInfo, func(pos token.Pos, msg string) {
		pass.Report(analysis.Diagnostic{Pos: pos, Message: msg})
	})
	return nil, nil
}
