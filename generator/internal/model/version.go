package model

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"go/types"
	"strings"

	"github.com/resumegen/resumegen/generator/internal/jsontype"
)

// Canonical is the text the version hashes. Its first line is the
// workflow's signature with fully qualified types,
// "workflow\tSIGNATURE\n", followed by the JSON shape of the run's input
// and output, one "\tLINE\n" each (see jsonShape). Then comes one line per
// step call site in source order, "name\tcallee\tsignature\tpolicy\n",
// with fully qualified callee and types, and "\tkey=EXPR" before the
// newline for a call site with key=, each followed by the JSON shape of
// what the step journals. Retry, backoff and timeout are left out on
// purpose: tuning them must not strand running runs.
func Canonical(w *Workflow) string {
	var b strings.Builder
	b.WriteString("workflow\t")
	b.WriteString(types.TypeString(BareSignature(w.Sig), nil))
	b.WriteByte('\n')
	writeShape(&b, w.Shape)
	b.WriteString(CanonicalSteps(w.Steps))
	return b.String()
}

// CanonicalSteps is the steps' part of canonical.
func CanonicalSteps(steps []*Step) string {
	var b strings.Builder
	for _, s := range steps {
		b.WriteString(s.Name)
		b.WriteByte('\t')
		b.WriteString(s.Callee)
		b.WriteByte('\t')
		b.WriteString(s.CanonSig)
		b.WriteByte('\t')
		b.WriteString(s.Policy)
		if s.KeyExpr != nil {
			// A keyed step is journaled as Name[key], not Name#n: moving
			// between the two, or to another key, strands runs.
			b.WriteString("\tkey=")
			b.WriteString(s.Opts.Key)
		}
		if len(s.RefArgs) > 0 {
			// Which slices and maps are journaled follows from the callee's
			// code, not its signature: journaling one more, or one less,
			// changes what a run's rows hold.
			b.WriteString("\twrites-back=")
			b.WriteString(s.WritesBack())
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

// VersionOf is the first 16 hex digits of the SHA-256 of the canonical
// text of the workflow.
func VersionOf(w *Workflow) string {
	sum := sha256.Sum256([]byte(Canonical(w)))
	return hex.EncodeToString(sum[:])[:16]
}

// workflowShape is the JSON shape of the run's input, "input arg N ..."
// for the workflow's N-th parameter (the context is the first), and of
// its output, "output ...".
func (p *Package) workflowShape(w *Workflow) []string {
	q := NameQualifier(p.Load.Types)
	var lines []string
	params := w.Sig.Params()
	for i := 1; i < params.Len(); i++ {
		lines = append(lines, jsontype.Shape(fmt.Sprintf("input arg %d", i+1), params.At(i).Type(), q)...)
	}
	if res := w.Sig.Results(); res.Len() == 2 {
		lines = append(lines, jsontype.Shape("output", res.At(0).Type(), q)...)
	}
	return lines
}
