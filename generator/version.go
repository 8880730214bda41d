package generator

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// canonicalSteps is the text the version hashes: one line per step call
// site in source order, "name\tcallee\tsignature\tpolicy\n", with fully
// qualified callee and types. Retry, backoff and timeout are left out on
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
