package generator

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/printer"
	"path/filepath"

	"github.com/resumegen/resumegen/generator/internal/graph"
)

// describe records what the generator tells an operator about w beyond
// its version: each step's call site (Step.Pos) and the step graph
// (Workflow.Graph). Neither enters the version.
func (m *packageModel) describe(w *Workflow) {
	for _, s := range w.Steps {
		s.Pos = m.callSite(s)
	}
	g := &graphSource{m: m, w: w, steps: map[*ast.CallExpr]*Step{}}
	for _, s := range w.Steps {
		g.steps[s.call] = s
	}
	w.Graph = graph.Mermaid(w.Name, w.decl.Body, g)
}

// callSite is "dir/file.go:42", the step call's file relative to the
// module root and its line, or "" when the module root is unknown.
func (m *packageModel) callSite(s *Step) string {
	if m.pkg.ModuleDir == "" || s.call == nil {
		return ""
	}
	p := m.pkg.Fset.Position(s.call.Pos())
	rel, err := filepath.Rel(m.pkg.ModuleDir, p.Filename)
	if err != nil || !filepath.IsLocal(rel) {
		return ""
	}
	return fmt.Sprintf("%s:%d", filepath.ToSlash(rel), p.Line)
}

// graphSource is the generator's model of a workflow as package graph
// reads it.
type graphSource struct {
	m     *packageModel
	w     *Workflow
	steps map[*ast.CallExpr]*Step
}

// Step returns the step of the call, if the step search recorded one.
func (g *graphSource) Step(call *ast.CallExpr) (graph.Call, bool) {
	if s := g.steps[call]; s != nil {
		c := graph.Call{Name: s.Name, Key: s.Key, Policy: s.Policy}
		switch {
		case s.child:
			c.Kind, c.Policy = graph.Child, ""
		case s.wait == waitSleep:
			c.Kind = graph.Sleep
		case s.wait == waitAwait:
			c.Kind = graph.Await
		}
		return c, true
	}
	return graph.Call{}, false
}

// Helper returns the helper the call enters, if it is one that reaches
// steps.
func (g *graphSource) Helper(call *ast.CallExpr) (string, *ast.BlockStmt) {
	if hc := g.w.helperCalls[call.Lparen]; hc != nil {
		return hc.h.display, hc.h.decl.Body
	}
	return "", nil
}

// Text is the node as gofmt prints it.
func (g *graphSource) Text(n ast.Node) string {
	var buf bytes.Buffer
	if err := printer.Fprint(&buf, g.m.pkg.Fset, n); err != nil {
		return "?"
	}
	return buf.String()
}
