package model

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/printer"
	"path/filepath"

	"github.com/resumegen/resumegen/generator/internal/graph"
	"github.com/resumegen/resumegen/generator/internal/runtimeapi"
)

// describe records what the generator tells an operator about w beyond
// its version: each step's call site (Step.Pos) and the step graph
// (Workflow.Graph). Neither enters the version.
func (p *Package) describe(w *Workflow) {
	for _, s := range w.Steps {
		s.Pos, s.RelPos = p.callSite(w, s)
	}
	g := &graphSource{p: p, w: w, steps: map[*ast.CallExpr]*Step{}}
	for _, s := range w.Steps {
		g.steps[s.Call] = s
	}
	w.Graph = graph.Mermaid(w.Name, w.Decl.Body, g)
}

// callSite is "dir/file.go:42", the step call's file relative to the
// module root and its line, and the same position relative to the
// declaration holding the call, "dir/file.go:Onboard+12", which does not
// move when lines above the declaration do; both "" when the module root
// is unknown.
func (p *Package) callSite(w *Workflow, s *Step) (abs, rel string) {
	if p.Load.ModuleDir == "" || s.Call == nil || s.In == nil {
		return "", ""
	}
	pos := p.Load.Fset.Position(s.Call.Pos())
	file, err := filepath.Rel(p.Load.ModuleDir, pos.Filename)
	if err != nil || !filepath.IsLocal(file) {
		return "", ""
	}
	file = filepath.ToSlash(file)
	decl := w.Name
	if s.In.Fn != nil {
		decl = DisplayName(s.In.Fn)
	}
	declLine := p.Load.Fset.Position(s.In.Decl.Type.Func).Line
	return fmt.Sprintf("%s:%d", file, pos.Line), fmt.Sprintf("%s:%s+%d", file, decl, pos.Line-declLine)
}

// graphSource is the model of a workflow as package graph reads it.
type graphSource struct {
	p     *Package
	w     *Workflow
	steps map[*ast.CallExpr]*Step
}

// Step returns the step of the call, if the step search recorded one.
func (g *graphSource) Step(call *ast.CallExpr) (graph.Call, bool) {
	if s := g.steps[call]; s != nil {
		c := graph.Call{Name: s.Name, Key: s.Key, Policy: s.Policy}
		switch {
		case s.Child:
			c.Kind, c.Policy = graph.Child, ""
		case s.Wait == runtimeapi.Sleep:
			c.Kind = graph.Sleep
		case s.Wait == runtimeapi.Await:
			c.Kind = graph.Await
		}
		return c, true
	}
	return graph.Call{}, false
}

// Helper returns the helper the call enters, if it is one that reaches
// steps.
func (g *graphSource) Helper(call *ast.CallExpr) (string, *ast.BlockStmt) {
	if hc := g.w.HelperCalls[call.Lparen]; hc != nil {
		return hc.Helper.Display, hc.Helper.Decl.Body
	}
	return "", nil
}

// Text is the node as gofmt prints it.
func (g *graphSource) Text(n ast.Node) string {
	var buf bytes.Buffer
	if err := printer.Fprint(&buf, g.p.Load.Fset, n); err != nil {
		return "?"
	}
	return buf.String()
}
