package a

import (
	"context"
	"mail"
	"math/rand"
	"os"
	"time"
)

var hits int

var registry = map[string]int{}

//resume:workflow
func W(ctx context.Context, m map[string]int) error { // want `workflow W has no generated code in a_resume.go: run go generate`
	go Step(ctx, 1)         // want `step Step is called in a go statement`
	defer Step(ctx, 2)      //resume:step name=Deferred
	_ = time.Now()          // want `time\.Now in a workflow body gives another value`
	_ = rand.Intn(2)        // want `rand\.Intn in a workflow body`
	_ = os.Getenv("HOME")   // want `os\.Getenv in a workflow body reads the process's environment`
	hits++                  // want `write to package-level variable hits`
	registry["w"] = 1       // want `write to package-level variable registry`
	delete(registry, "w")   // want `write to package-level variable registry`
	m["local"] = 1          // a parameter's map: the caller's business
	time.Sleep(time.Second) //resume:allow nondeterministic reason="a reviewed pause"
	for k := range m {
		_ = Step(ctx, len(k)) // want `in a range over a map`
	}
	if _, err := Leak(ctx); err != nil { // want `result type chan int cannot be journaled as JSON`
		return err
	}
	_ = mail.Send(ctx, "a")
	_ = mail.Send(ctx, "b") // want `step name Send is already used by the call at`
	_ = mail.Plain(ctx)
	if err := Step(ctx, 4); err != nil { /* want `key=m has type map\[string\]int: a key must be a string, an integer or a fmt.Stringer` */ //resume:step name=Step4 key=m
		return err
	}
	x := 1 /* want `nothing on this line needs it` */ //resume:allow nondeterministic reason="no"
	_ = x
	return Step(ctx, 3)
}

//resume:workflow
func Sends(ctx context.Context) error { // want `workflow Sends has no generated code in a_resume.go: run go generate`
	return mail.Send(ctx, "b")
}

//resume:step
func Step(ctx context.Context, n int) error { return nil }

//resume:step
func Leak(ctx context.Context) (chan int, error) { return nil, nil }

/* want `unknown option "retries=3"` */ //resume:step retries=3
func Bad(ctx context.Context) error     { return nil }

// Plain functions may do anything.
func Plain() int { hits++; return rand.Intn(3) }
