// Package fingerprint hashes the Go source of function declarations the
// way resumegen's generated code depends on it: the tokens of each
// declaration and the //resume: directives in and above it, blind to
// formatting and to ordinary comments. The generator records the
// fingerprint of what it copied into a generated file (a workflow's body,
// the helpers it copied); the runtime computes it again from the source
// embedded in the binary and refuses to run a body generated from other
// source. Both use this one package, so they cannot drift.
package fingerprint

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"go/scanner"
	"go/token"
	"hash"
	"strings"
)

// Decl names one function declaration of a file: F, or Type.M for a
// method of Type (the receiver's base type, without * or type arguments).
type Decl struct {
	File string
	Name string
}

// FileKey is the File of a Decl in the file named file (a base name) of
// the package with import path pkg, "" for the workflow's own package:
// file itself, or pkg:file. Of hands it to read; it does not enter the
// fingerprint, so a declaration hashes the same whatever its file is
// called.
func FileKey(pkg, file string) string {
	if pkg == "" {
		return file
	}
	return pkg + ":" + file
}

// SplitFileKey is the package and file of a FileKey.
func SplitFileKey(key string) (pkg, file string) {
	if i := strings.LastIndex(key, ":"); i >= 0 {
		return key[:i], key[i+1:]
	}
	return "", key
}

// Of returns the fingerprint of the declarations, in order, whose files'
// contents read gives: 16 hex digits of a SHA-256 over each declaration's
// normalized tokens. It fails when a file cannot be read, does not scan,
// or lacks a declaration: the source is not what the code was made from.
func Of(read func(file string) ([]byte, error), decls []Decl) (string, error) {
	h := sha256.New()
	files := map[string]map[string][]tok{}
	for _, d := range decls {
		byName, ok := files[d.File]
		if !ok {
			src, err := read(d.File)
			if err != nil {
				return "", fmt.Errorf("read %s: %w", d.File, err)
			}
			byName, err = scan(d.File, src)
			if err != nil {
				return "", err
			}
			files[d.File] = byName
		}
		toks, ok := byName[d.Name]
		if !ok {
			return "", fmt.Errorf("%s declares no function %s", d.File, d.Name)
		}
		write(h, "decl", d.Name)
		for _, t := range toks {
			write(h, t.tok.String(), t.lit)
		}
	}
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}

type tok struct {
	tok token.Token
	lit string
}

func write(h hash.Hash, a, b string) {
	h.Write([]byte(a))
	h.Write([]byte{0})
	h.Write([]byte(b))
	h.Write([]byte{0})
}

// scan returns the normalized tokens of every top-level function
// declaration of src, by name: from the //resume: directives of its doc
// comment through the closing brace of its body. Comments that are not
// directives are left out; every semicolon, written or inserted at a line
// end, is the same token; a comma or a semicolon before a closing bracket
// is dropped, as the layout adds or drops it.
func scan(name string, src []byte) (map[string][]tok, error) {
	fset := token.NewFileSet()
	file := fset.AddFile(name, -1, len(src))
	var errs scanner.ErrorList
	var s scanner.Scanner
	s.Init(file, src, func(pos token.Position, msg string) { errs.Add(pos, msg) }, scanner.ScanComments)
	var all []tok
	for {
		_, t, lit := s.Scan()
		if t == token.EOF {
			break
		}
		switch {
		case t == token.COMMENT && !strings.HasPrefix(lit, "//resume:"):
			continue
		case t == token.SEMICOLON:
			lit = ";"
		case t.IsOperator() || t.IsKeyword():
			lit = ""
		}
		all = append(all, tok{t, lit})
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("scan %s: %w", name, errs.Err())
	}
	var toks []tok
	for i, t := range all {
		if t.tok == token.COMMA || t.tok == token.SEMICOLON {
			if next := nextCode(all, i+1); next == token.RPAREN || next == token.RBRACE || next == token.RBRACK {
				continue
			}
		}
		toks = append(toks, t)
	}
	out := map[string][]tok{}
	depth, start := 0, -1
	directives := -1 // index of the first directive of a pending doc comment
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		switch t.tok {
		case token.COMMENT:
			if depth == 0 && directives < 0 {
				directives = i
			}
			continue
		case token.LPAREN, token.LBRACE, token.LBRACK:
			depth++
		case token.RPAREN, token.RBRACE, token.RBRACK:
			depth--
			if depth == 0 && t.tok == token.RBRACE && start >= 0 {
				if n := declName(toks[start : i+1]); n != "" {
					out[n] = append([]tok(nil), toks[start:i+1]...)
				}
				start = -1
			}
		case token.FUNC:
			if depth == 0 {
				start = i
				if directives >= 0 {
					start = directives
				}
			}
		}
		if depth == 0 && t.tok == token.SEMICOLON {
			if start >= 0 && toks[i-1].tok != token.RBRACE {
				start = -1 // a declaration without a body
			}
		}
		if t.tok != token.FUNC {
			directives = -1
		}
	}
	return out, nil
}

// nextCode is the next token at or after i that is not a comment.
func nextCode(toks []tok, i int) token.Token {
	for ; i < len(toks); i++ {
		if toks[i].tok != token.COMMENT {
			return toks[i].tok
		}
	}
	return token.EOF
}

// declName names a declaration from its tokens: after func, the name, or
// (receiver) and the name, the receiver's base type first.
func declName(toks []tok) string {
	i := 0
	for i < len(toks) && toks[i].tok != token.FUNC {
		i++
	}
	i++
	if i >= len(toks) {
		return ""
	}
	if toks[i].tok == token.IDENT {
		return toks[i].lit
	}
	if toks[i].tok != token.LPAREN {
		return ""
	}
	// The receiver: ( [name] [*] Type [ [...] ] ).
	var idents []string
	depth := 0
	for i++; i < len(toks); i++ {
		switch toks[i].tok {
		case token.LPAREN, token.LBRACK:
			depth++
		case token.RPAREN:
			if depth == 0 {
				i++
				if i < len(toks) && toks[i].tok == token.IDENT && len(idents) > 0 {
					return idents[len(idents)-1] + "." + toks[i].lit
				}
				return ""
			}
			depth--
		case token.RBRACK:
			depth--
		case token.IDENT:
			if depth == 0 {
				idents = append(idents, toks[i].lit)
			}
		}
	}
	return ""
}

// Lines returns the line of the func keyword of every top-level function
// declaration of src, by name (F, or Type.M).
func Lines(name string, src []byte) (map[string]int, error) {
	fset := token.NewFileSet()
	file := fset.AddFile(name, -1, len(src))
	var errs scanner.ErrorList
	var s scanner.Scanner
	s.Init(file, src, func(pos token.Position, msg string) { errs.Add(pos, msg) }, 0)
	type at struct {
		tok  tok
		line int
	}
	var toks []at
	for {
		pos, t, lit := s.Scan()
		if t == token.EOF {
			break
		}
		toks = append(toks, at{tok{t, lit}, file.Line(pos)})
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("scan %s: %w", name, errs.Err())
	}
	out := map[string]int{}
	depth := 0
	for i, t := range toks {
		switch t.tok.tok {
		case token.LPAREN, token.LBRACE, token.LBRACK:
			depth++
		case token.RPAREN, token.RBRACE, token.RBRACK:
			depth--
		case token.FUNC:
			if depth != 0 {
				continue
			}
			var rest []tok
			for _, r := range toks[i:min(i+64, len(toks))] {
				rest = append(rest, r.tok)
			}
			if n := declName(rest); n != "" {
				if _, dup := out[n]; !dup {
					out[n] = t.line
				}
			}
		}
	}
	return out, nil
}
