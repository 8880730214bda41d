package generator

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// serviceRunSource is a program whose workflow is a method of a struct
// holding its dependencies; the engine is given the receiver.
const serviceRunSource = `package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/resumegen/resumegen/runtime/resume"
	"github.com/resumegen/resumegen/runtime/sqlitejournal"
)

type Service struct {
	effects string
	greeting string
}

func (s *Service) track(ctx context.Context) {
	info, _ := resume.StepFromContext(ctx)
	f, err := os.OpenFile(s.effects, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		panic(err)
	}
	fmt.Fprintln(f, info.StepKey)
	f.Close()
}

//resume:workflow
func (s *Service) Onboard(ctx context.Context, id string, n int) (string, error) {
	for i := 0; i < n; i++ {
		if err := s.Notify(ctx, id); err != nil {
			return "", err
		}
	}
	return s.greeting + " " + id, nil
}

//resume:step
func (s *Service) Notify(ctx context.Context, id string) error {
	s.track(ctx)
	return nil
}

func main() {
	ctx := context.Background()
	svc := &Service{effects: os.Args[2], greeting: "hello"}
	j, err := sqlitejournal.Open(ctx, os.Args[1])
	if err != nil {
		panic(err)
	}
	opts := []resume.Option{resume.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))}
	if len(os.Args) > 3 && os.Args[3] == "no-receiver" {
		_, err := resume.Run2(ctx, resume.NewEngine(j, opts...), "r-1", svc.Onboard, "ada", 3)
		fmt.Println("error:", err)
		return
	}
	if len(os.Args) > 3 {
		f, err := resume.ParseFault(os.Args[3])
		if err != nil {
			panic(err)
		}
		opts = append(opts, resume.WithFault(f))
	}
	opts = append(opts, resume.WithReceiver(svc))
	out, err := resume.Run2(ctx, resume.NewEngine(j, opts...), "r-1", svc.Onboard, "ada", 3)
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	fmt.Println(out)
}
`

// TestMethodWorkflowSurvivesResume runs a workflow that is a method of a
// dependency struct: killed inside its loop and resumed in a new process,
// it runs on the receiver the new engine was given and executes each step
// once; an engine without the receiver refuses to start it.
func TestMethodWorkflowSurvivesResume(t *testing.T) {
	bin := buildProgram(t, "servicerun", serviceRunSource)
	db := filepath.Join(t.TempDir(), "j.db")
	effects := db + ".effects"
	out, _, _ := runProgram(bin, db, effects, "no-receiver")
	if !strings.Contains(out, "is a method of *main.Service, and this engine was not given one to run it on") {
		t.Fatalf("without a receiver: %s", out)
	}
	if _, killed, err := runProgram(bin, db, effects, "Service.Notify#2:after"); !killed {
		t.Fatalf("not killed at Service.Notify#2: %v", err)
	}
	out, _, err := runProgram(bin, db, effects)
	if err != nil || strings.TrimSpace(out) != "hello ada" {
		t.Fatalf("resumed run: %v\n%s", err, out)
	}
	b, err := os.ReadFile(effects)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(strings.Fields(string(b)), " "); got != "Service.Notify Service.Notify#2 Service.Notify#3" {
		t.Errorf("step executions = %s, want each once", got)
	}
}
