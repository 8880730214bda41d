// Package graph draws a workflow's step graph as a Mermaid flowchart from
// its body's syntax: the steps in the order the body calls them, its
// branches (an if's or a switch's condition on the edge), its loops (a
// back edge to the loop's head), the helpers it calls (a subgraph named
// after each), child workflows, and the runtime's waits.
//
// The graph is drawn from what the generator already knows of the body:
// the [Source] says which calls are steps and which enter helpers. Plain
// code between steps is not drawn; a statement that reaches no step is
// left out, but for a return, which ends the run.
package graph

import (
	"fmt"
	"go/ast"
	"go/token"
	"slices"
	"strings"
)

// Kind is what a step call does.
type Kind int

const (
	// Step is a step: a call journaled by its policy.
	Step Kind = iota
	// Child is a call of another workflow, run as a child run.
	Child
	// Sleep is resume.Sleep or resume.SleepUntil.
	Sleep
	// Await is resume.Await.
	Await
)

// Call is a step call site as the graph labels it.
type Call struct {
	Kind Kind
	// Name is the step's journal name.
	Name string
	// Key is the call site's key= expression, "" for none.
	Key string
	// Policy is "default", "once" or "tx".
	Policy string
}

// Source tells the graph what the calls of a body are.
type Source interface {
	// Step returns the step of the call, if it is one.
	Step(call *ast.CallExpr) (Call, bool)
	// Helper returns the name and body of the helper the call enters, or
	// a nil body when it enters none.
	Helper(call *ast.CallExpr) (name string, body *ast.BlockStmt)
	// Text is the source text of the node, for a label.
	Text(n ast.Node) string
}

// maxLabel is the longest condition text an edge label keeps.
const maxLabel = 40

// Mermaid draws the step graph of the workflow name whose body is body.
// The result is deterministic: the same source draws the same text.
func Mermaid(name string, body *ast.BlockStmt, src Source) string {
	b := &builder{src: src, entered: map[*ast.BlockStmt]bool{}}
	start := b.node("", fmt.Sprintf("([%s])", quote(name)))
	b.end = b.node("", `(["end"])`)
	b.entered[body] = true
	b.connect(b.function(body, frontier{{from: start}}), b.end, false)
	return b.render()
}

// pending is an edge waiting for the next node: from node from, with
// label. A return's edge counts the calls deferred before it (defers),
// which it runs on its way out.
type pending struct {
	from   string
	label  string
	defers int
}

// frontier are the edges the next node receives.
type frontier []pending

// labelled is f with label added to each edge's label.
func (f frontier) labelled(label string) frontier {
	out := make(frontier, len(f))
	for i, p := range f {
		l := label
		switch {
		case label == "" || p.label == label || strings.HasSuffix(p.label, ", "+label):
			l = p.label
		case p.label != "":
			l = p.label + ", " + label
		}
		out[i] = pending{p.from, l, p.defers}
	}
	return out
}

type node struct {
	id, shape, parent string
}

type edge struct {
	from, to, label string
	back            bool
}

type subgraph struct {
	id, title, parent string
}

// target is where a break or continue goes: a loop or a switch.
type target struct {
	label string    // the statement's label, "" for none
	loop  string    // the loop's head node, "" for a switch
	brk   *frontier // the edges that leave the statement
}

type builder struct {
	src       Source
	nodes     []node
	edges     []edge
	subgraphs []subgraph
	parent    string // the subgraph new nodes go in, "" for the top
	end       string
	targets   []target
	returns   *frontier // the returns of the function being drawn
	// defers are the deferred calls of the function being drawn that
	// reach steps, in the order the function defers them.
	defers    []*ast.CallExpr
	deferring bool // drawing deferred calls: their steps say so
	entered   map[*ast.BlockStmt]bool
	nextLabel string // the label of the statement being built
	// steps are the step nodes, "n3 FetchRecords", in drawing order.
	steps []string
}

func (b *builder) node(parent, shape string) string {
	id := fmt.Sprintf("n%d", len(b.nodes)+1)
	b.nodes = append(b.nodes, node{id: id, shape: shape, parent: parent})
	return id
}

// connect draws the frontier's edges to node to, each edge once.
func (b *builder) connect(f frontier, to string, back bool) {
	for _, p := range f {
		e := edge{from: p.from, to: to, label: p.label, back: back}
		if !slices.Contains(b.edges, e) {
			b.edges = append(b.edges, e)
		}
	}
}

// step draws a step call after f.
func (b *builder) step(c Call, f frontier) frontier {
	name := c.Name
	if b.deferring {
		c.Name = "defer " + c.Name
	}
	id := b.node(b.parent, shape(c))
	b.steps = append(b.steps, id+" "+strings.Join(strings.Fields(name), " "))
	b.connect(f, id, false)
	return frontier{{from: id}}
}

// shape is a step's node: a rectangle, a subroutine for a child run, a
// flag for a wait; the label names the step, its key= and its policy.
func shape(c Call) string {
	label := c.Name
	if c.Key != "" {
		label += " key=" + c.Key
	}
	if c.Policy == "once" || c.Policy == "tx" {
		label += " (" + c.Policy + ")"
	}
	switch c.Kind {
	case Child:
		return "[[" + quote(label+" (child)") + "]]"
	case Await:
		return ">" + quote("await "+label) + "]"
	case Sleep:
		return ">" + quote(label) + "]"
	}
	return "[" + quote(label) + "]"
}

// unwind draws the deferred calls of the function being drawn after the
// edges that leave it, last deferred first: each edge runs the calls
// deferred before it left. A call deferred inside a branch is drawn as if
// deferred where the branch is.
func (b *builder) unwind(f frontier) frontier {
	was := b.deferring
	b.deferring = true
	for i := len(b.defers) - 1; i >= 0; i-- {
		var in, bypass frontier
		for _, p := range f {
			if p.defers > i {
				in = append(in, p)
			} else {
				bypass = append(bypass, p)
			}
		}
		if len(in) == 0 {
			continue
		}
		out := b.deferredCall(b.defers[i], in)
		for j := range out {
			out[j].defers = i
		}
		f = append(out, bypass...)
	}
	b.deferring = was
	return f
}

// deferredCall draws one deferred call after f.
func (b *builder) deferredCall(call *ast.CallExpr, f frontier) frontier {
	if lit, ok := ast.Unparen(call.Fun).(*ast.FuncLit); ok {
		return b.inline(lit.Body, f)
	}
	return b.call(call, f)
}

// leaving is f marked with the number of calls deferred so far.
func (b *builder) leaving(f frontier) frontier {
	out := make(frontier, len(f))
	for i, p := range f {
		p.defers = len(b.defers)
		out[i] = p
	}
	return out
}

// block draws the statements after f and returns the edges that leave it.
func (b *builder) block(list []ast.Stmt, f frontier) frontier {
	for _, s := range list {
		f = b.stmt(s, f)
	}
	return f
}

// stmt draws one statement.
func (b *builder) stmt(s ast.Stmt, f frontier) frontier {
	switch s := s.(type) {
	case *ast.BlockStmt:
		return b.block(s.List, f)
	case *ast.LabeledStmt:
		b.nextLabel = s.Label.Name
		f = b.stmt(s.Stmt, f)
		b.nextLabel = ""
		return f
	case *ast.IfStmt:
		return b.ifStmt(s, f)
	case *ast.ForStmt:
		return b.forStmt(s, f)
	case *ast.RangeStmt:
		return b.rangeStmt(s, f)
	case *ast.SwitchStmt:
		return b.switchStmt(s.Init, s.Tag, s.Body, f)
	case *ast.TypeSwitchStmt:
		return b.switchStmt(s.Init, s.Assign, s.Body, f)
	case *ast.ReturnStmt:
		f = b.exprs(s, f)
		b.ret(f)
		return nil
	case *ast.BranchStmt:
		return b.branch(s, f)
	case *ast.DeferStmt:
		return b.deferred(s.Call, f)
	case *ast.GoStmt, *ast.SelectStmt:
		// Steps are refused there: nothing to draw.
		return f
	}
	return b.exprs(s, f)
}

// ret draws the edges of a return: they leave the function being drawn,
// with the edges at its end (see inline).
func (b *builder) ret(f frontier) {
	*b.returns = append(*b.returns, b.leaving(f)...)
}

// deferred records a deferred call that reaches a step, drawn when the
// function returns; the arguments it evaluates now are drawn now.
func (b *builder) deferred(call *ast.CallExpr, f frontier) frontier {
	for _, a := range call.Args {
		f = b.exprs(a, f)
	}
	if b.hasStep(call.Fun) || b.reaches(call) {
		b.defers = append(b.defers, call)
	}
	return f
}

// reaches reports whether call is a step or enters a helper.
func (b *builder) reaches(call *ast.CallExpr) bool {
	if _, ok := b.src.Step(call); ok {
		return true
	}
	_, body := b.src.Helper(call)
	return body != nil
}

// exprs draws the step calls and helper calls of a simple statement or
// expression in evaluation order: a call's arguments before the call.
func (b *builder) exprs(n ast.Node, f frontier) frontier {
	if n == nil {
		return f
	}
	var visit func(n ast.Node) bool
	visit = func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncLit:
			return false // a literal not called where written has no step
		case *ast.CallExpr:
			if lit, ok := ast.Unparen(n.Fun).(*ast.FuncLit); ok {
				for _, a := range n.Args {
					ast.Inspect(a, visit)
				}
				f = b.inline(lit.Body, f)
				return false
			}
			if lit := b.fanOut(n); lit != nil {
				// resume.Map calls the literal once per item: a loop.
				for _, a := range n.Args[:2] {
					ast.Inspect(a, visit)
				}
				id := b.node(b.parent, "{{"+quote(short("resume.Map over "+b.text(n.Args[1])))+"}}")
				b.connect(f, id, false)
				b.connect(b.inline(lit.Body, frontier{{from: id}}), id, true)
				f = frontier{{from: id, label: "done"}}
				return false
			}
			ast.Inspect(n.Fun, visit)
			for _, a := range n.Args {
				ast.Inspect(a, visit)
			}
			f = b.call(n, f)
			return false
		}
		return true
	}
	ast.Inspect(n, visit)
	return f
}

// call draws one call: a step node, or a helper's subgraph.
func (b *builder) call(n *ast.CallExpr, f frontier) frontier {
	if c, ok := b.src.Step(n); ok {
		return b.step(c, f)
	}
	name, body := b.src.Helper(n)
	if body == nil {
		return f
	}
	if b.entered[body] {
		// A recursive call: drawn as a node that names the helper
		// being drawn around it.
		id := b.node(b.parent, "(["+quote("↻ "+name)+"])")
		b.connect(f, id, false)
		return frontier{{from: id}}
	}
	id := fmt.Sprintf("h%d", len(b.subgraphs)+1)
	b.subgraphs = append(b.subgraphs, subgraph{id: id, title: name, parent: b.parent})
	return b.enter(id, body, f)
}

// enter draws a helper's body in subgraph id; its returns leave it.
func (b *builder) enter(id string, body *ast.BlockStmt, f frontier) frontier {
	parent := b.parent
	b.parent = id
	b.entered[body] = true
	out := b.inline(body, f)
	delete(b.entered, body)
	b.parent = parent
	return out
}

// inline draws the body of a function called here (a helper, or a
// literal called where it is written): its returns leave the function,
// after its deferred calls. The edges leave it unlabelled: a condition
// inside the callee says nothing about the caller's path.
func (b *builder) inline(body *ast.BlockStmt, f frontier) frontier {
	out := b.function(body, f)
	for i := range out {
		out[i].label = ""
	}
	return out
}

// function draws a function's body after f and returns the edges that
// leave it, by its returns and its end, through its deferred calls.
func (b *builder) function(body *ast.BlockStmt, f frontier) frontier {
	var rets frontier
	saved := struct {
		returns *frontier
		targets []target
		defers  []*ast.CallExpr
	}{b.returns, b.targets, b.defers}
	b.returns, b.targets, b.defers = &rets, nil, nil
	out := b.leaving(b.block(body.List, f))
	out = b.unwind(append(rets, out...))
	b.returns, b.targets, b.defers = saved.returns, saved.targets, saved.defers
	return out
}

// ifStmt draws an if: the then branch's edges carry the condition, the
// else branch's "else". An if that reaches no step and does not return
// is plain code: nothing is drawn.
func (b *builder) ifStmt(s *ast.IfStmt, f frontier) frontier {
	f = b.exprs(s.Init, f)
	f = b.exprs(s.Cond, f)
	if !b.draws(s.Body) && (s.Else == nil || !b.draws(s.Else)) {
		return f
	}
	cond := b.text(s.Cond)
	then := b.block(s.Body.List, f.labelled(cond))
	if s.Else == nil || !b.draws(s.Else) {
		if len(then) == 0 {
			return f // the then branch left: the rest follows unlabelled
		}
		return append(then, f.labelled("else")...)
	}
	els := b.stmt(s.Else, f.labelled("else"))
	return append(then, els...)
}

// draws reports whether drawing n draws anything: it calls a step or a
// helper, returns, or breaks or continues.
func (b *builder) draws(n ast.Node) bool {
	found := false
	ast.Inspect(n, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncLit:
			return true // drawn when called where written
		case *ast.ReturnStmt, *ast.BranchStmt:
			found = true
		case *ast.CallExpr:
			if _, ok := b.src.Step(n); ok {
				found = true
			} else if _, body := b.src.Helper(n); body != nil {
				found = true
			}
		}
		return !found
	})
	return found
}

// hasStep reports whether n calls a step or a helper.
func (b *builder) hasStep(n ast.Node) bool {
	found := false
	ast.Inspect(n, func(n ast.Node) bool {
		if c, ok := n.(*ast.CallExpr); ok {
			if _, ok := b.src.Step(c); ok {
				found = true
			} else if _, body := b.src.Helper(c); body != nil {
				found = true
			}
		}
		return !found
	})
	return found
}

// forStmt draws a for loop that reaches a step: a head node, the body
// from it, a back edge to it; the loop leaves from the head.
func (b *builder) forStmt(s *ast.ForStmt, f frontier) frontier {
	label := b.takeLabel()
	f = b.exprs(s.Init, f)
	if !b.hasStep(s) {
		return f
	}
	head := "for"
	if s.Cond != nil {
		head = "for " + b.text(s.Cond)
	}
	return b.loop(label, head, s.Cond, s.Post, s.Body, f)
}

// rangeStmt draws a range loop as forStmt does.
func (b *builder) rangeStmt(s *ast.RangeStmt, f frontier) frontier {
	label := b.takeLabel()
	if !b.hasStep(s) {
		return f
	}
	f = b.exprs(s.X, f)
	head := "range " + b.text(s.X)
	if s.Key != nil {
		vars := b.text(s.Key)
		if s.Value != nil {
			vars += ", " + b.text(s.Value)
		}
		head = "for " + vars + " := " + head
	}
	return b.loop(label, head, nil, nil, s.Body, f)
}

// loop draws a loop's head, body and back edge.
func (b *builder) loop(label, head string, cond ast.Expr, post ast.Stmt, body *ast.BlockStmt, f frontier) frontier {
	id := b.node(b.parent, "{{"+quote(short(head))+"}}")
	b.connect(f, id, false)
	in := b.exprs(cond, frontier{{from: id}})
	var brk frontier
	b.targets = append(b.targets, target{label: label, loop: id, brk: &brk})
	rets, defers := len(*b.returns), len(b.defers)
	out := b.block(body.List, in)
	b.targets = b.targets[:len(b.targets)-1]
	out = b.exprs(post, out)
	b.connect(out, id, true)
	if len(b.defers) > defers {
		// A return in a later iteration runs what earlier ones deferred.
		for i := rets; i < len(*b.returns); i++ {
			(*b.returns)[i].defers = len(b.defers)
		}
	}
	return append(frontier{{from: id, label: "done"}}, brk...)
}

// switchStmt draws a switch that reaches a step: each clause from the
// edges before it, labelled with its case list.
func (b *builder) switchStmt(init ast.Stmt, tag ast.Node, body *ast.BlockStmt, f frontier) frontier {
	label := b.takeLabel()
	f = b.exprs(init, f)
	f = b.exprs(tag, f)
	if !b.draws(body) {
		return f
	}
	var out frontier
	b.targets = append(b.targets, target{label: label, brk: &out})
	hasDefault := false
	var fall frontier // a fallthrough into the next clause
	for _, c := range body.List {
		cc := c.(*ast.CaseClause)
		caseLabel := "default"
		if cc.List == nil {
			hasDefault = true
		} else {
			var texts []string
			for _, e := range cc.List {
				texts = append(texts, b.text(e))
			}
			caseLabel = "case " + strings.Join(texts, ", ")
		}
		in := append(f.labelled(caseLabel), fall...)
		fall = nil
		end := b.block(cc.Body, in)
		if n := len(cc.Body); n > 0 {
			if br, ok := cc.Body[n-1].(*ast.BranchStmt); ok && br.Tok == token.FALLTHROUGH {
				fall = end
				continue
			}
		}
		out = append(out, end...)
	}
	b.targets = b.targets[:len(b.targets)-1]
	if !hasDefault {
		out = append(out, f.labelled("no case")...)
	}
	return out
}

// branch draws a break, continue or goto.
func (b *builder) branch(s *ast.BranchStmt, f frontier) frontier {
	if s.Tok == token.FALLTHROUGH {
		return f // switchStmt carries it on
	}
	if s.Tok == token.GOTO {
		return f // not drawn: the graph follows structured code
	}
	for i := len(b.targets) - 1; i >= 0; i-- {
		t := b.targets[i]
		if s.Label != nil && t.label != s.Label.Name {
			continue
		}
		if s.Tok == token.CONTINUE {
			if t.loop == "" {
				continue
			}
			b.connect(f, t.loop, true)
			return nil
		}
		*t.brk = append(*t.brk, f...)
		return nil
	}
	return f
}

// takeLabel returns the label of the statement being drawn, once.
func (b *builder) takeLabel() string {
	l := b.nextLabel
	b.nextLabel = ""
	return l
}

// text is n's source text on one line, shortened for a label.
func (b *builder) text(n ast.Node) string {
	if n == nil {
		return ""
	}
	return short(strings.Join(strings.Fields(b.src.Text(n)), " "))
}

// short cuts s to maxLabel characters.
func short(s string) string {
	r := []rune(s)
	if len(r) <= maxLabel {
		return s
	}
	return string(r[:maxLabel-1]) + "…"
}

// quote is s as a quoted Mermaid label: the characters Mermaid reads in
// a label (quotes, #, markup, pipes, backquotes) as entity codes.
func quote(s string) string {
	var sb strings.Builder
	sb.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			sb.WriteString("#quot;")
		case '#':
			sb.WriteString("#35;")
		case '<':
			sb.WriteString("#lt;")
		case '>':
			sb.WriteString("#gt;")
		case '&':
			sb.WriteString("#amp;")
		case '|':
			sb.WriteString("#124;")
		case '`':
			sb.WriteString("#96;")
		case '\n', '\r', '\t':
			sb.WriteByte(' ')
		default:
			sb.WriteRune(r)
		}
	}
	sb.WriteByte('"')
	return sb.String()
}

// render writes the flowchart: the nodes, each inside its subgraph, then
// the edges, back edges dotted, then a comment per step node naming its
// step ("%% step n3 FetchRecords"), so that a viewer can mark a run's
// steps on the graph.
func (b *builder) render() string {
	var sb strings.Builder
	sb.WriteString("flowchart TD\n")
	b.renderIn(&sb, "", "  ")
	for _, e := range b.edges {
		arrow := "-->"
		if e.back {
			arrow = "-.->"
		}
		if e.label != "" {
			arrow += "|" + quote(short(e.label)) + "|"
		}
		fmt.Fprintf(&sb, "  %s %s %s\n", e.from, arrow, e.to)
	}
	for _, s := range b.steps {
		fmt.Fprintf(&sb, "  %%%% step %s\n", s)
	}
	return sb.String()
}

// renderIn writes the nodes and subgraphs whose parent is parent.
func (b *builder) renderIn(sb *strings.Builder, parent, indent string) {
	for _, n := range b.nodes {
		if n.parent == parent {
			fmt.Fprintf(sb, "%s%s%s\n", indent, n.id, n.shape)
		}
	}
	for _, g := range b.subgraphs {
		if g.parent == parent {
			fmt.Fprintf(sb, "%ssubgraph %s[%s]\n", indent, g.id, quote(g.title))
			b.renderIn(sb, g.id, indent+"  ")
			fmt.Fprintf(sb, "%send\n", indent)
		}
	}
}

// fanOut returns the function literal of a call of resume.Map (as the
// body names it, resume.Map(ctx, items, func...)), or nil for any other
// call.
func (b *builder) fanOut(call *ast.CallExpr) *ast.FuncLit {
	if len(call.Args) != 3 || b.src.Text(ast.Unparen(call.Fun)) != "resume.Map" {
		return nil
	}
	lit, _ := ast.Unparen(call.Args[2]).(*ast.FuncLit)
	return lit
}
