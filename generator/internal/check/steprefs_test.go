package check_test

import (
	"testing"

	"github.com/resumegen/resumegen/generator/internal/check"
	"github.com/resumegen/resumegen/generator/internal/pipetest"
)

// TestStepRefs refuses the steps that change what the body handed them in
// a way the journal does not restore, and accepts those it journals (a
// slice or a map written into, sorted by the standard library, written by
// an interface method's implementations) or that change nothing the body
// sees (a value the call makes, package state, a function of package
// scope, os.Stdout, a read-only callee).
func TestStepRefs(t *testing.T) {
	pipetest.Want(t, check.StepRefs, `package p

import (
	"bytes"
	"context"
	"io"
	"os"
	"sort"
	"strings"
)

type Req struct {
	ID    string
	Items []int
}

type Store interface {
	//resume:step
	Fill(ctx context.Context, into []string) error
}

type mem struct{}

func (mem) Fill(ctx context.Context, into []string) error { into[0] = "x"; return nil }

var events = make(chan string, 8)

//resume:workflow
func W(ctx context.Context, ids []string) error {
	var out []int
	if err := Grow(ctx, out); err != nil { // want "step Grow appends to parameter 2 \\(\\[\\]int, a slice\\) \\(append\\(s, \\.\\.\\.\\)\\)"
		return err
	}
	if err := Mark(ctx, Req{ID: "a"}); err != nil {
		return err
	}
	r := Req{Items: out}
	if err := Mark(ctx, r); err != nil { // want "step Mark writes into what parameter 2 \\(Req, a struct holding references\\) refers to \\(r\\.Items\\[0\\] = \\.\\.\\.\\)"
		return err
	}
	ch := make(chan string)
	if err := Emit(ctx, ch); err != nil { // want "step Emit uses the body's channel"
		return err
	}
	if err := Emit(ctx, events); err != nil {
		return err
	}
	n := 0
	if err := Each(ctx, func() { n++ }); err != nil { // want "step Each calls parameter 2"
		return err
	}
	if err := Each(ctx, tick); err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := Print(ctx, &buf); err != nil { // want "step Print writes to the body's own writer"
		return err
	}
	if err := Print(ctx, os.Stdout); err != nil {
		return err
	}
	sort.Strings(ids) //resume:step name=Sort
	_ = strings.Join(ids, ",") //resume:step name=Join
	var s Store = mem{}
	if err := s.Fill(ctx, ids); err != nil {
		return err
	}
	if err := Grow(ctx, []int{1}); err != nil {
		return err
	}
	data := make([]byte, 4)
	src := strings.NewReader("data")
	// wantnext "step Read: io\\.ReadFull is declared outside the module \\(or is an interface method\\), so the generator cannot tell whether it changes parameter 2"
	_, _ = io.ReadFull(src, data) //resume:step name=Read
	return Child(ctx, out) // want "child workflow Child takes parameter 2 \\(\\[\\]int, a slice\\), and its body s\\[0\\] = \\.\\.\\.: a child run decodes its input from the journal"
}

//resume:workflow
func Child(ctx context.Context, s []int) error {
	s[0] = 1
	return nil
}

//resume:step
func Grow(ctx context.Context, s []int) error { _ = append(s, 1); return nil }

//resume:step
func Mark(ctx context.Context, r Req) error {
	if len(r.Items) > 0 {
		r.Items[0] = 1
	}
	r.ID = "changed"
	return nil
}

//resume:step
func Emit(ctx context.Context, ch chan string) error { ch <- "x"; return nil }

//resume:step
func Each(ctx context.Context, f func()) error { f(); return nil }

func tick() {}

//resume:step
func Print(ctx context.Context, w io.Writer) error { _, err := io.WriteString(w, "x"); return err }
`)
}
