package generator

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// canonicalSteps is the text the version hashes: one line per step call
// site in source order, "name\tcallee\tsignature\tpolicy\n", with fully
// qualified callee and types, and "\tkey=EXPR" before the newline for a
// call site with key=. Retry, backoff and timeout are left out on
// purpose: tuning them must not strand running runs.
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
	}
	return b.String()
}

// versionOf is the first 16 hex digits of the SHA-256 of the canonical
// step list.
func versionOf(steps []*Step) string {
	sum := sha256.Sum256([]byte(canonicalSteps(steps)))
	return hex.EncodeToString(sum[:])[:16]
}
