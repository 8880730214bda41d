package difffuzz

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"golang.org/x/tools/txtar"
)

// A seed file keeps a program the fuzzer once found failing, as text (a
// later generator would make another program of the same seed): a txtar
// archive whose comment says what was found, with program.json (the
// Program without its source), program.go and, for a program with a
// second package, lib/lib.go.

// Seed is a kept program.
type Seed struct {
	// File is the seed file's name, without its directory.
	File string
	// Note is the archive's comment: what the program found.
	Note    string
	Program *Program
}

// ReadSeeds reads every seed file (*.txtar) in dir, sorted by name. Each
// program is renamed after its file, so that seeds and random programs
// never share a package name.
func ReadSeeds(dir string) ([]Seed, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.txtar"))
	if err != nil {
		return nil, err
	}
	sort.Strings(paths)
	var out []Seed
	for _, path := range paths {
		s, err := ReadSeed(path)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// ReadSeed reads one seed file.
func ReadSeed(path string) (Seed, error) {
	ar, err := txtar.ParseFile(path)
	if err != nil {
		return Seed{}, err
	}
	s := Seed{File: filepath.Base(path), Note: strings.TrimSpace(string(ar.Comment))}
	var meta, src, lib []byte
	for _, f := range ar.Files {
		switch f.Name {
		case "program.json":
			meta = f.Data
		case "program.go":
			src = f.Data
		case "lib/lib.go":
			lib = f.Data
		}
	}
	if meta == nil || src == nil {
		return Seed{}, fmt.Errorf("seed %s: want program.json and program.go", path)
	}
	var p Program
	if err := json.Unmarshal(meta, &p); err != nil {
		return Seed{}, fmt.Errorf("seed %s: program.json: %w", path, err)
	}
	p.Source, p.Lib = string(src), string(lib)
	s.Program = p.Renamed(SeedProgramName(s.File))
	return s, nil
}

// SeedProgramName is the package name of the program of seed file file.
func SeedProgramName(file string) string {
	stem := strings.TrimSuffix(file, filepath.Ext(file))
	return "k_" + nonIdent.ReplaceAllString(stem, "_")
}

var nonIdent = regexp.MustCompile(`[^A-Za-z0-9_]`)

// Renamed returns a copy of p whose package (and name for the driver) is
// name. The source keeps its lines where they are.
func (p *Program) Renamed(name string) *Program {
	q := *p
	q.Source = strings.NewReplacer(
		"package "+p.Name+"\n", "package "+name+"\n",
		"// Package "+p.Name+" ", "// Package "+name+" ",
		"fuzzrt.Program{Name: "+fmt.Sprintf("%q", p.Name), "fuzzrt.Program{Name: "+fmt.Sprintf("%q", name),
		fmt.Sprintf("%q", ModulePath+"/"+p.Name+"/lib"), fmt.Sprintf("%q", ModulePath+"/"+name+"/lib"),
	).Replace(p.Source)
	q.Lib = strings.Replace(p.Lib, "second package of program "+p.Name+":", "second package of program "+name+":", 1)
	q.Name = name
	return &q
}

// WriteSeed writes p as the seed file path, with note as its comment.
func WriteSeed(path, note string, p *Program) error {
	meta, err := json.MarshalIndent(p, "", "\t")
	if err != nil {
		return err
	}
	ar := &txtar.Archive{
		Comment: []byte(strings.TrimSpace(note) + "\n"),
		Files: []txtar.File{
			{Name: "program.json", Data: append(meta, '\n')},
			{Name: "program.go", Data: []byte(p.Source)},
		},
	}
	if p.Lib != "" {
		ar.Files = append(ar.Files, txtar.File{Name: "lib/lib.go", Data: []byte(p.Lib)})
	}
	return os.WriteFile(path, txtar.Format(ar), 0o644)
}
