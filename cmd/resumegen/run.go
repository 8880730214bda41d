package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/resumegen/resumegen/generator"
)

// run is the command without process globals: it parses args, runs the
// generator and returns the exit status.
func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("resumegen", flag.ContinueOnError)
	fs.SetOutput(stderr)
	check := fs.Bool("check", false, "write nothing; print a diff of every generated file that would change and exit 1 if any would")
	manifest := fs.Bool("manifest", false, "write nothing; print every workflow with its version and steps as JSON")
	graph := fs.Bool("graph", false, "write nothing; print every workflow's step graph as a Mermaid flowchart")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: resumegen [-check | -manifest | -graph] [packages]")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if n := countTrue(*check, *manifest, *graph); n > 1 {
		fmt.Fprintln(stderr, "resumegen: -check, -manifest and -graph exclude each other")
		return 2
	}
	res, err := generator.Generate(generator.Config{Patterns: fs.Args()})
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	for _, w := range res.Warnings {
		fmt.Fprintln(stderr, warning(w))
	}
	if len(res.Diagnostics) > 0 {
		for _, d := range res.Diagnostics {
			fmt.Fprintln(stderr, d)
		}
		return 1
	}
	switch {
	case *graph:
		printGraphs(stdout, res.Workflows)
	case *manifest:
		b, err := res.Manifest()
		if err != nil {
			fmt.Fprintln(stderr, "resumegen:", err)
			return 1
		}
		stdout.Write(b)
	case *check:
		diff, err := res.Check(".")
		if err != nil {
			fmt.Fprintln(stderr, "resumegen:", err)
			return 1
		}
		if len(diff) > 0 {
			stdout.Write(diff)
			fmt.Fprintln(stderr, "resumegen: generated files are stale: run go generate")
			return 1
		}
	default:
		if _, err := res.Write(); err != nil {
			fmt.Fprintln(stderr, "resumegen:", err)
			return 1
		}
	}
	return 0
}

// warning renders a warning like a diagnostic, marked as one:
// file:line:col: warning: message. It does not change the exit status.
func warning(d generator.Diagnostic) string {
	if !d.Pos.IsValid() {
		return "warning: " + d.Message
	}
	return fmt.Sprintf("%s:%d:%d: warning: %s", d.Pos.Filename, d.Pos.Line, d.Pos.Column, d.Message)
}

// countTrue counts the flags set.
func countTrue(flags ...bool) int {
	n := 0
	for _, f := range flags {
		if f {
			n++
		}
	}
	return n
}

// printGraphs prints each workflow's step graph under a comment naming
// it, in package and source order.
func printGraphs(w io.Writer, ws []*generator.Workflow) {
	for i, wf := range ws {
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "%%%% %s.%s (version %s)\n%s", wf.Package, wf.Name, wf.Version, wf.Graph)
	}
}
