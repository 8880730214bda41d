package generator

import (
	"bytes"
	"errors"
	"fmt"
	"github.com/resumegen/resumegen/generator/internal/diag"
	"io/fs"
	"os"
	"path/filepath"
)

// WriteStats counts what [Result.Write] changed on disk.
type WriteStats struct {
	// Written is the number of files created or rewritten.
	Written int
	// Deleted is the number of stale generated files removed.
	Deleted int
}

// Write writes the generated files whose content changed, atomically, and
// deletes stale generated files. It refuses to write anything when the
// result has diagnostics.
func (r *Result) Write() (WriteStats, error) {
	var st WriteStats
	if len(r.Diagnostics) > 0 {
		return st, errors.New("resumegen: not writing: the packages have errors")
	}
	for _, f := range r.Files {
		old, err := os.ReadFile(f.Path)
		if err == nil && bytes.Equal(old, f.Content) {
			continue
		}
		if err := writeAtomic(f.Path, f.Content); err != nil {
			return st, err
		}
		st.Written++
	}
	for _, path := range r.Stale {
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return st, fmt.Errorf("delete stale %s: %w", path, err)
		}
		st.Deleted++
	}
	return st, nil
}

// writeAtomic writes content to a temporary file in the same directory and
// renames it over path, so readers never see a half-written file.
func writeAtomic(path string, content []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".resumegen-*.tmp")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer os.Remove(tmp.Name()) // no-op after a successful rename
	if _, err := tmp.Write(content); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// Check compares the result with the files on disk without writing. It
// returns a unified diff for every generated file that would change or be
// deleted, with file names relative to dir when possible; an empty diff
// means the generated files are fresh.
func (r *Result) Check(dir string) ([]byte, error) {
	ds := diag.New(nil, dir)
	if abs, err := filepath.Abs(dir); err == nil {
		ds.Base = abs
	}
	var out bytes.Buffer
	for _, f := range r.Files {
		old, err := os.ReadFile(f.Path)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("check %s: %w", f.Path, err)
		}
		if bytes.Equal(old, f.Content) {
			continue
		}
		name := ds.Rel(f.Path)
		out.Write(unifiedDiff(name, name, old, f.Content, old != nil))
	}
	for _, path := range r.Stale {
		old, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("check %s: %w", path, err)
		}
		name := ds.Rel(path)
		out.Write(unifiedDiff(name, "/dev/null", old, nil, true))
	}
	return out.Bytes(), nil
}
