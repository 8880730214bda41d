package emit

import (
	"go/build"
	"io"
	"os/exec"
	"path"
	"strings"
	"testing"

	"github.com/resumegen/resumegen/generator/internal/load"
)

// TestBuildConstraintMatchesGoBuild checks, with go/build itself, that a
// generated file is built exactly when its source file is: for source
// files of many names and headers, on every port of the go command and
// with and without build tags, go/build's MatchFile agrees on the source
// and on the generated file (its header and //go:build line).
func TestBuildConstraintMatchesGoBuild(t *testing.T) {
	out, err := exec.Command("go", "tool", "dist", "list").Output()
	if err != nil {
		t.Fatalf("go tool dist list: %v", err)
	}
	ports := strings.Fields(string(out))
	names := []string{
		"x.go", "linux.go", "x_linux.go", "x_amd64.go", "linux_amd64.go",
		"x_linux_amd64.go", "x_amd64_linux.go", "x_unix.go", "x_linux.v2.go",
		"x_linux_test.v2.go", "x_nacl.go", "x_amd64p32.go", "x_resume_linux.go",
	}
	for _, p := range ports {
		goos, goarch, _ := strings.Cut(p, "/")
		names = append(names, "x_"+goos+".go", "x_"+goarch+".go", "x_"+goos+"_"+goarch+".go")
	}
	headers := []string{
		"package p\n",
		"//go:build !purego\n\npackage p\n",
		"//go:build linux\npackage p\n",
		"// License.\n\n//go:build (linux || darwin) && !nocloud\n\n// Package p.\npackage p\n",
		"//go:build linux || windows\n// +build plan9\n\npackage p\n",
		"// +build linux darwin\n// +build !purego\n\npackage p\n",
		"// +build windows\npackage p\n",          // no blank line: not a constraint
		"// +build linux,,\n\npackage p\n",        // malformed: ignored
		"/*\n//go:build windows\n*/\npackage p\n", // in a block comment
		"/* c */\n\n// +build windows\n\npackage p\n",
	}
	tagSets := [][]string{nil, {"purego"}, {"nocloud", "plan9"}}

	for _, name := range names {
		for _, header := range headers {
			x, err := BuildConstraint("/src/"+name, []byte(header))
			if err != nil {
				t.Fatalf("%s with %q: %v", name, header, err)
			}
			gen := load.GeneratedHeader + "\n\npackage p\n"
			if line := buildLine(x); line != "" {
				gen = load.GeneratedHeader + "\n\n" + line + "\n\npackage p\n"
			}
			files := map[string]string{name: header, path.Base(strings.TrimSuffix(name, ".go") + load.GeneratedSuffix): gen}
			for _, p := range ports {
				for _, tags := range tagSets {
					ctx := contextFor(p, tags, files)
					want, err := ctx.MatchFile("/src", name)
					if err != nil {
						t.Fatal(err)
					}
					got, err := ctx.MatchFile("/src", path.Base(strings.TrimSuffix(name, ".go")+load.GeneratedSuffix))
					if err != nil {
						t.Fatal(err)
					}
					if got != want {
						t.Fatalf("%s with %q on %s, tags %v: source built %v, generated file (%s) built %v",
							name, header, p, tags, want, buildLine(x), got)
					}
				}
			}
		}
	}
}

// contextFor is a go/build context for the port ("linux/amd64") and build
// tags that reads files from the map.
func contextFor(port string, tags []string, files map[string]string) *build.Context {
	goos, goarch, _ := strings.Cut(port, "/")
	ctx := build.Default
	ctx.GOOS, ctx.GOARCH, ctx.BuildTags = goos, goarch, tags
	ctx.JoinPath = path.Join
	ctx.OpenFile = func(name string) (io.ReadCloser, error) {
		return io.NopCloser(strings.NewReader(files[path.Base(name)])), nil
	}
	return &ctx
}

func TestBuildLine(t *testing.T) {
	for _, tc := range []struct{ name, header, want string }{
		{"x.go", "package p\n", ""},
		{"x_unix.go", "package p\n", ""},
		{"x_linux.go", "package p\n", "//go:build linux"},
		{"x_linux_amd64.go", "package p\n", "//go:build linux && amd64"},
		{"linux_amd64.go", "package p\n", "//go:build amd64"},
		{"x_linux.go", "//go:build !purego\n\npackage p\n", "//go:build !purego && linux"},
		{"x_linux.go", "//go:build linux\n\npackage p\n", "//go:build linux"},
		{"x_linux.go", "//go:build linux || darwin\n\npackage p\n", "//go:build (linux || darwin) && linux"},
		{"x_amd64.go", "// +build linux darwin\n// +build !purego\n\npackage p\n", "//go:build (linux || darwin) && !purego && amd64"},
	} {
		x, err := BuildConstraint(tc.name, []byte(tc.header))
		if err != nil {
			t.Fatal(err)
		}
		if got := buildLine(x); got != tc.want {
			t.Errorf("%s with %q: %q, want %q", tc.name, tc.header, got, tc.want)
		}
	}
}
