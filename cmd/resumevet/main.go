// Command resumevet runs resumegen's checks under go vet:
//
//	go install github.com/resumegen/resumegen/cmd/resumevet
//	go vet -vettool=$(go env GOPATH)/bin/resumevet ./...
//
// It reports what resumegen would refuse to generate, at the same
// positions and with the same messages; see package
// github.com/resumegen/resumegen/generator/resumecheck.
package main

import (
	"github.com/resumegen/resumegen/generator/resumecheck"
	"golang.org/x/tools/go/analysis/unitchecker"
)

func main() { unitchecker.Main(resumecheck.Analyzer) }
