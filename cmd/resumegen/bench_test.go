//go:build unix

package main

import (
	"encoding/json"
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
	return timeCommandStatus(b, dir, env, 0, name, args...)
}

// timeCommandStatus is timeCommand for a command that may exit with
// status (go vet exits 1 when it reports something).
func timeCommandStatus(b *testing.B, dir string, env []string, status int, name string, args ...string) measured {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = env
	start := time.Now()
	out, err := cmd.CombinedOutput()
	wall := time.Since(start)
	if ee, ok := err.(*exec.ExitError); ok && status != 0 && ee.ExitCode() == status {
		err = nil
	}
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

// BenchmarkGenerateVsVetLargeTree runs resumegen ./... and a cached go vet
// ./... side by side on a large tree without any workflow: the sources of
// modernc.org/sqlite (the version this module requires, from the module
// cache; skipped when it is not there), copied once into the user's cache
// directory and made a main module whose requirements are this module's
// versions, so that the module cache answers without a network. Nothing
// is edited between runs: both tools may answer from their caches, and
// resumegen, finding no directive, must type-check nothing. Reported as
// in BenchmarkGenerateVsVet. go vet reports findings in that tree (exit
// status 1), which is not a failure here.
func BenchmarkGenerateVsVetLargeTree(b *testing.B) {
	root, err := filepath.Abs("../..")
	if err != nil {
		b.Fatal(err)
	}
	goOut := func(dir string, args ...string) string {
		cmd := exec.Command("go", args...)
		cmd.Dir = dir
		out, err := cmd.Output()
		if err != nil {
			b.Fatalf("go %s: %v", strings.Join(args, " "), err)
		}
		return strings.TrimSpace(string(out))
	}
	const tree = "modernc.org/sqlite"
	version := goOut(root, "list", "-m", "-f", "{{.Version}}", tree)
	src := filepath.Join(goOut(root, "env", "GOMODCACHE"), tree+"@"+version)
	if _, err := os.Stat(filepath.Join(src, "go.mod")); err != nil {
		b.Skipf("%s@%s is not in the module cache: %v", tree, version, err)
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		b.Skip(err)
	}
	// A fixed directory: the go command's cache keys include it, so a new
	// one each time would make the first go vet compile everything again.
	dir := filepath.Join(cache, "resumegen-bench", tree+"@"+version)
	env := append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off", "GOPROXY=off", "GOSUMDB=off")
	if _, err := os.Stat(filepath.Join(dir, "go.sum.resumegen")); err != nil {
		os.RemoveAll(dir)
		if err := os.CopyFS(dir, os.DirFS(src)); err != nil {
			b.Fatal(err)
		}
		ours := map[string]string{}
		for _, line := range strings.Split(goOut(root, "list", "-m", "-f", "{{.Path}} {{.Version}}", "all"), "\n") {
			if path, v, ok := strings.Cut(line, " "); ok && v != "" {
				ours[path] = v
			}
		}
		var gomod struct{ Require []struct{ Path string } }
		if err := json.Unmarshal([]byte(goOut(dir, "mod", "edit", "-json")), &gomod); err != nil {
			b.Fatal(err)
		}
		args := []string{"mod", "edit"}
		for _, r := range gomod.Require {
			if v := ours[r.Path]; v != "" {
				args = append(args, "-require="+r.Path+"@"+v)
			}
		}
		goOut(dir, args...)
		sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
		if err != nil {
			b.Fatal(err)
		}
		own, _ := os.ReadFile(filepath.Join(dir, "go.sum"))
		write(b, filepath.Join(dir, "go.sum"), string(own)+string(sum))
		write(b, filepath.Join(dir, "go.sum.resumegen"), "the go.sum above includes resumegen's\n")
	}
	tmp := b.TempDir()
	bin := filepath.Join(tmp, "resumegen")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		b.Fatalf("build resumegen: %v\n%s", err, out)
	}
	// Warm up: fill the build cache (the first go vet compiles the tree).
	timeCommandStatus(b, dir, env, 1, "go", "vet", "./...")
	timeCommand(b, dir, env, bin, "./...")

	var gen, vet measured
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		g := timeCommand(b, dir, env, bin, "./...")
		v := timeCommandStatus(b, dir, env, 1, "go", "vet", "./...")
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
