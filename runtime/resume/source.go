package resume

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strconv"
	"strings"

	"github.com/resumegen/resumegen/internal/fingerprint"
)

// ErrStale is the error of a workflow whose generated code was made from
// other source than the binary holds: the body was edited after go
// generate. Starting, resuming or executing a run of it fails with it.
var ErrStale = errors.New("generated code is stale")

// check compares the fingerprint of the embedded source with the one
// recorded at go generate, once.
func (s *Source) check(def *WorkflowDef) error {
	s.once.Do(func() {
		got, err := fingerprint.Of(func(key string) ([]byte, error) {
			if pkg, file := fingerprint.SplitFileKey(key); pkg != "" {
				return readSource(pkg, file)
			}
			return fs.ReadFile(s.Files, key)
		}, s.decls())
		if err == nil && got == s.Fingerprint {
			return
		}
		files := s.files()
		generated := strings.TrimSuffix(files[0], ".go") + "_resume.go"
		why := fmt.Sprintf("%s changed since go generate", strings.Join(files, ", "))
		if err != nil {
			why = err.Error()
		}
		s.stale = fmt.Errorf("workflow %s: %w: %s, so %s would run an old copy of its body: run go generate and rebuild", def.QualifiedName(), ErrStale, why, generated)
	})
	return s.stale
}

func (s *Source) decls() []fingerprint.Decl {
	out := make([]fingerprint.Decl, len(s.Decls))
	for i, d := range s.Decls {
		out[i] = fingerprint.Decl{File: fingerprint.FileKey(d.Package, d.File), Name: d.Name}
	}
	return out
}

// files lists the files of Decls, once each, in order.
func (s *Source) files() []string {
	var out []string
	for _, d := range s.Decls {
		f := path.Base(d.File)
		if d.Package != "" {
			f += " (package " + d.Package + ")"
		}
		if !containsString(out, f) {
			out = append(out, f)
		}
	}
	return out
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// staleErr is the error of def's generated code being stale, or nil for
// fresh code and for code generated before sources were recorded.
func (def *WorkflowDef) staleErr() error {
	if def.Source == nil || len(def.Source.Decls) == 0 {
		return nil
	}
	return def.Source.check(def)
}

// position resolves a call site the generated code recorded relative to
// its declaration, "dir/file.go:Onboard+12", into "dir/file.go:LINE" by
// finding the declaration in the embedded source. Any other position (code
// generated before positions were relative, a source without the file)
// is returned as it is.
func (s *Source) position(pos string) string {
	file, rel, ok := strings.Cut(pos, ":")
	name, off, ok2 := strings.Cut(rel, "+")
	if s == nil || !ok || !ok2 {
		return pos
	}
	n, err := strconv.Atoi(off)
	if err != nil {
		return pos
	}
	lines, err := s.lines(path.Base(file))
	if err != nil || lines[name] == 0 {
		return pos
	}
	return file + ":" + strconv.Itoa(lines[name]+n)
}

// lines returns the declarations' lines of an embedded file, read once.
func (s *Source) lines(file string) (map[string]int, error) {
	s.linesMu.Lock()
	defer s.linesMu.Unlock()
	if s.declLines == nil {
		s.declLines = map[string]map[string]int{}
	}
	if l, ok := s.declLines[file]; ok {
		return l, nil
	}
	src, err := fs.ReadFile(s.Files, file)
	if err != nil {
		return nil, err
	}
	l, err := fingerprint.Lines(file, src)
	if err != nil {
		return nil, err
	}
	s.declLines[file] = l
	return l, nil
}
