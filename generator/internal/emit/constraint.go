package emit

import (
	"bytes"
	"errors"
	"fmt"
	"go/build/constraint"
	"path/filepath"
	"strings"
)

// BuildConstraint returns the condition under which Go builds the source
// file at path, whose content is src: its own //go:build line (or, without
// one, its // +build lines) and the GOOS and GOARCH its name implies
// (x_linux.go, x_amd64.go, x_linux_amd64.go), joined with &&. It is nil
// when the file is built everywhere.
//
// The generated file x_resume.go carries the result as its //go:build
// line, so it is built exactly when x.go is: its own name implies nothing,
// as it ends in _resume.
func BuildConstraint(path string, src []byte) (constraint.Expr, error) {
	own, err := headerConstraint(src)
	if err != nil {
		return nil, fmt.Errorf("build constraint of %s: %w", path, err)
	}
	return andExprs(own, nameConstraint(filepath.Base(path))), nil
}

// buildLine is the //go:build line for x, "" for nil.
func buildLine(x constraint.Expr) string {
	if x == nil {
		return ""
	}
	return "//go:build " + x.String()
}

// headerConstraint returns the constraint of a Go file's own build lines,
// read as go/build reads them (parseFileHeader and shouldBuild): in the
// leading run of comments and blank lines, the //go:build line controls;
// without one, every // +build line followed by a blank line must hold,
// and one that does not parse is ignored. It is nil when there is none.
func headerConstraint(src []byte) (constraint.Expr, error) {
	var goBuild string
	end := 0             // offset after the last blank line of the leading comments
	ended := false       // past the leading // comments and blank lines
	inSlashStar := false // in a /* */ comment
	p := src
Lines:
	for len(p) > 0 {
		line := p
		if i := bytes.IndexByte(line, '\n'); i >= 0 {
			line, p = line[:i], p[i+1:]
		} else {
			p = p[len(p):]
		}
		line = bytes.TrimSpace(line)
		if len(line) == 0 && !ended {
			end = len(src) - len(p)
			continue
		}
		if !bytes.HasPrefix(line, []byte("//")) {
			ended = true
		}
		if !inSlashStar && constraint.IsGoBuild(string(line)) {
			if goBuild != "" {
				return nil, errors.New("multiple //go:build lines")
			}
			goBuild = string(line)
		}
	Comments:
		for len(line) > 0 {
			if inSlashStar {
				if i := bytes.Index(line, []byte("*/")); i >= 0 {
					inSlashStar = false
					line = bytes.TrimSpace(line[i+len("*/"):])
					continue Comments
				}
				continue Lines
			}
			if bytes.HasPrefix(line, []byte("//")) {
				continue Lines
			}
			if bytes.HasPrefix(line, []byte("/*")) {
				inSlashStar = true
				line = bytes.TrimSpace(line[len("/*"):])
				continue Comments
			}
			break Lines // the package clause
		}
	}
	if goBuild != "" {
		x, err := constraint.Parse(goBuild)
		if err != nil {
			return nil, fmt.Errorf("parse %s: %w", goBuild, err)
		}
		return x, nil
	}
	var plus []constraint.Expr
	for _, line := range strings.Split(string(src[:end]), "\n") {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "//") || !constraint.IsPlusBuild(line) {
			continue
		}
		if x, err := constraint.Parse(line); err == nil {
			plus = append(plus, x)
		}
	}
	return andExprs(plus...), nil
}

// nameConstraint returns the constraint a Go file's name implies, by
// go/build's rule (goodOSArchFile): the name cut at its first dot, from
// its first underscore on, ending in _GOOS, _GOARCH or _GOOS_GOARCH. It is
// nil when the name implies nothing; unix is a build tag, not a name
// suffix. (go/build also looks through a _test suffix: no source of a
// generated file is a test.)
func nameConstraint(name string) constraint.Expr {
	name, _, _ = strings.Cut(name, ".")
	i := strings.Index(name, "_")
	if i < 0 {
		return nil // linux.go is built everywhere
	}
	l := strings.Split(name[i:], "_")
	n := len(l)
	if n >= 2 && knownOS[l[n-2]] && knownArch[l[n-1]] {
		return andExprs(&constraint.TagExpr{Tag: l[n-2]}, &constraint.TagExpr{Tag: l[n-1]})
	}
	if n >= 1 && (knownOS[l[n-1]] || knownArch[l[n-1]]) {
		return &constraint.TagExpr{Tag: l[n-1]}
	}
	return nil
}

// andExprs joins the non-nil expressions with &&, leaving out an operand
// of && already present (//go:build linux in x_linux.go stays linux). It
// returns nil when all are nil.
func andExprs(xs ...constraint.Expr) constraint.Expr {
	var out constraint.Expr
	seen := map[string]bool{}
	var add func(x constraint.Expr)
	add = func(x constraint.Expr) {
		if and, ok := x.(*constraint.AndExpr); ok {
			add(and.X)
			add(and.Y)
			return
		}
		s := x.String()
		if seen[s] {
			return
		}
		seen[s] = true
		if out == nil {
			out = x
		} else {
			out = &constraint.AndExpr{X: out, Y: x}
		}
	}
	for _, x := range xs {
		if x != nil {
			add(x)
		}
	}
	return out
}

// knownOS and knownArch are the GOOS and GOARCH values go/build recognizes
// in file names (its internal/syslist, which it does not export), past,
// present and future ones alike.
var knownOS = map[string]bool{
	"aix": true, "android": true, "darwin": true, "dragonfly": true,
	"freebsd": true, "hurd": true, "illumos": true, "ios": true, "js": true,
	"linux": true, "nacl": true, "netbsd": true, "openbsd": true,
	"plan9": true, "solaris": true, "wasip1": true, "windows": true,
	"zos": true,
}

var knownArch = map[string]bool{
	"386": true, "amd64": true, "amd64p32": true, "arm": true, "armbe": true,
	"arm64": true, "arm64be": true, "loong64": true, "mips": true,
	"mipsle": true, "mips64": true, "mips64le": true, "mips64p32": true,
	"mips64p32le": true, "ppc": true, "ppc64": true, "ppc64le": true,
	"riscv": true, "riscv64": true, "s390": true, "s390x": true,
	"sparc": true, "sparc64": true, "wasm": true,
}
