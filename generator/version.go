package generator

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"go/types"
	"strings"
)

// canonical is the text the version hashes. Its first line is the
// workflow's signature with fully qualified types,
// "workflow\tSIGNATURE\n", followed by the JSON shape of the run's input
// and output, one "\tLINE\n" each (see jsonShape). Then comes one line per
// step call site in source order, "name\tcallee\tsignature\tpolicy\n",
// with fully qualified callee and types, and "\tkey=EXPR" before the
// newline for a call site with key=, each followed by the JSON shape of
// what the step journals. Retry, backoff and timeout are left out on
// purpose: tuning them must not strand running runs.
func canonical(w *Workflow) string {
	var b strings.Builder
	b.WriteString("workflow\t")
	b.WriteString(types.TypeString(bareSignature(w.sig), nil))
	b.WriteByte('\n')
	writeShape(&b, w.Shape)
	b.WriteString(canonicalSteps(w.Steps))
	return b.String()
}

// canonicalSteps is the steps' part of canonical.
func canonicalSteps(steps []*Step) string {
	var b strings.Builder
	for _, s := range steps {
		b.WriteString(s.Name)
		b.WriteByte('\t')
		b.WriteString(s.Callee)
		b.WriteByte('\t')
		b.WriteString(s.canonSig)
		b.WriteByte('\t')
		b.WriteString(s.Policy)
		if s.key != nil {
			// A keyed step is journaled as Name[key], not Name#n: moving
			// between the two, or to another key, strands runs.
			b.WriteString("\tkey=")
			b.WriteString(s.opts.key)
		}
		b.WriteByte('\n')
		writeShape(&b, s.Shape)
	}
	return b.String()
}

func writeShape(b *strings.Builder, lines []string) {
	for _, l := range lines {
		b.WriteByte('\t')
		b.WriteString(l)
		b.WriteByte('\n')
	}
}

// versionOf is the first 16 hex digits of the SHA-256 of the canonical
// text of the workflow.
func versionOf(w *Workflow) string {
	sum := sha256.Sum256([]byte(canonical(w)))
	return hex.EncodeToString(sum[:])[:16]
}

// workflowShape is the JSON shape of the run's input, "input arg N ..."
// for the workflow's N-th parameter (the context is the first), and of
// its output, "output ...".
func (m *packageModel) workflowShape(w *Workflow) []string {
	q := nameQualifier(m.pkg.Types)
	var lines []string
	params := w.sig.Params()
	for i := 1; i < params.Len(); i++ {
		lines = append(lines, jsonShape(fmt.Sprintf("input arg %d", i+1), params.At(i).Type(), q)...)
	}
	if res := w.sig.Results(); res.Len() == 2 {
		lines = append(lines, jsonShape("output", res.At(0).Type(), q)...)
	}
	return lines
}
