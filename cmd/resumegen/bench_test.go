//go:build unix

package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Size of the benchmark package: workflows, and steps per workflow.
const (
	benchWorkflows = 50
	benchSteps     = 20
	benchFiles     = 10 // workflows are spread over this many files
)

// benchPackage writes a package of benchWorkflows workflows of benchSteps
// steps each (with a loop and an if around some steps, as real bodies
// have) into dir.
func benchPackage(t testing.TB, dir string) {
	var steps strings.Builder
	steps.WriteString("package big\n\nimport \"context\"\n\n// Rec is a journaled record.\ntype Rec struct {\n\tID    string\n\tCount int\n}\n")
	for s := 0; s < benchSteps; s++ {
		fmt.Fprintf(&steps, "\n//resume:step retry=3\nfunc Step%d(ctx context.Context, r Rec, n int) (Rec, error) {\n\tr.Count += n\n\treturn r, nil\n}\n", s)
	}
	write(t, filepath.Join(dir, "steps.go"), steps.String())
	per := benchWorkflows / benchFiles
	for f := 0; f < benchFiles; f++ {
		var b strings.Builder
		b.WriteString("package big\n\nimport \"context\"\n")
		for w := f * per; w < (f+1)*per; w++ {
			fmt.Fprintf(&b, "\n//resume:workflow\nfunc Flow%d(ctx context.Context, ids []string) (Rec, error) {\n\tr := Rec{ID: \"w%d\"}\n\tvar err error\n", w, w)
			for s := 0; s < benchSteps; s++ {
				switch s % 4 {
				case 1:
					fmt.Fprintf(&b, "\tfor i := range ids {\n\t\tif r, err = Step%d(ctx, r, i); err != nil { //resume:step key=ids[i]\n\t\t\treturn r, err\n\t\t}\n\t}\n", s)
				case 2:
					fmt.Fprintf(&b, "\tif r.Count > %d {\n\t\tif r, err = Step%d(ctx, r, %d); err != nil {\n\t\t\treturn r, err\n\t\t}\n\t}\n", s, s, s)
				default:
					fmt.Fprintf(&b, "\tif r, err = Step%d(ctx, r, %d); err != nil {\n\t\treturn r, err\n\t}\n", s, s)
				}
			}
			b.WriteString("\treturn r, nil\n}\n")
		}
		write(t, filepath.Join(dir, fmt.Sprintf("flows%d.go", f)), b.String())
	}
}

// measured is one timed run of a command.
type measured struct {
	wall   time.Duration
	peakKB int64 // peak RSS of the command and its waited-for children
}

func timeCommand(b *testing.B, dir string, env []string, name string, args ...string) measured {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = env
	start := time.Now()
	out, err := cmd.CombinedOutput()
	wall := time.Since(start)
	if err != nil {
		b.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	m := measured{wall: wall}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		m.peakKB = ru.Maxrss
	}
	return m
}

// BenchmarkGenerateVsVet runs resumegen and go vet side by side on a
// package of 50 workflows x 20 steps. Before each run a comment is added
// to one source file, so that neither tool answers from a cache (go vet
// caches results of unchanged packages) and resumegen writes nothing (the
// generated files do not change). Reported: wall time of each, their
// ratio, and each one's peak RSS (the process and its children: go list,
// the vet tool).
func BenchmarkGenerateVsVet(b *testing.B) {
	root, err := filepath.Abs("../..")
	if err != nil {
		b.Fatal(err)
	}
	tmp := b.TempDir()
	bin := filepath.Join(tmp, "resumegen")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		b.Fatalf("build resumegen: %v\n%s", err, out)
	}
	mod := filepath.Join(tmp, "mod")
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		b.Fatal(err)
	}
	write(b, filepath.Join(mod, "go.sum"), string(sum))
	write(b, filepath.Join(mod, "go.mod"), fmt.Sprintf("module example.com/bench\n\ngo 1.24\n\nrequire github.com/resumegen/resumegen v0.0.0\n\nreplace github.com/resumegen/resumegen => %s\n", root))
	pkg := filepath.Join(mod, "big")
	benchPackage(b, pkg)
	env := append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off", "GOPROXY=off")
	// Warm up: generate the files and fill the build cache for both tools.
	timeCommand(b, pkg, env, bin, ".")
	timeCommand(b, pkg, env, "go", "vet", ".")

	edit := filepath.Join(pkg, "steps.go")
	var gen, vet measured
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		f, err := os.OpenFile(edit, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			b.Fatal(err)
		}
		fmt.Fprintf(f, "\n// edit %d %d\n", i, time.Now().UnixNano())
		f.Close()
		g := timeCommand(b, pkg, env, bin, ".")
		v := timeCommand(b, pkg, env, "go", "vet", ".")
		gen.wall += g.wall
		vet.wall += v.wall
		gen.peakKB = max(gen.peakKB, g.peakKB)
		vet.peakKB = max(vet.peakKB, v.peakKB)
	}
	b.StopTimer()
	n := float64(b.N)
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(float64(gen.wall.Milliseconds())/n, "resumegen-ms/op")
	b.ReportMetric(float64(vet.wall.Milliseconds())/n, "govet-ms/op")
	b.ReportMetric(float64(gen.wall)/float64(vet.wall), "ratio")
	b.ReportMetric(float64(gen.peakKB)/1024, "resumegen-peak-MB")
	b.ReportMetric(float64(vet.peakKB)/1024, "govet-peak-MB")
}
