package main

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/resumegen/resumegen/runtime/resume"
	"github.com/resumegen/resumegen/runtime/resumetest"
)

// TestCrashAnywhereInProcess is TestKillEveryStep's proof in process, with
// the test harness: the checkout, a method of its dependencies, crashed at
// every point of every step and resumed, ends as an uninterrupted run,
// refund and all. The journaled time.Now (the step "now") is replaced by
// the harness's clock, which starts every case at the same time.
func TestCrashAnywhereInProcess(t *testing.T) {
	clock := resumetest.NewClock(time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC))
	for _, tc := range []struct {
		name  string
		items []string
		gift  bool
		cases int
	}{
		{"gift", []string{"book", "pen"}, true, 15},       // now, Quote, Charge, Ship, Wrap: 3 points each
		{"broken", []string{"book", "broken"}, false, 13}, // Ship fails: it reaches no effect nor after
	} {
		t.Run(tc.name, func(t *testing.T) {
			shop := &Shop{ledger: &ledger{path: filepath.Join(t.TempDir(), "ledger")}, prices: map[string]int{"book": 1200, "pen": 150, "broken": 10}}
			h := resumetest.New(t,
				resumetest.WithEngineOptions(resume.WithReceiver(shop)),
				resumetest.WithClock(clock),
				resumetest.Replace("now", clock.Now))
			rep := h.CrashEverywhere(shop.Checkout, Order{ID: "o-1", Items: tc.items}, Options{Gift: tc.gift})
			if len(rep.Cases) != tc.cases {
				t.Errorf("%d cases, want %d", len(rep.Cases), tc.cases)
			}
		})
	}
}
