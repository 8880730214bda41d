//go:build unix

package resume

import (
	"context"
	"syscall"
	"testing"
	"time"
)

// BenchmarkStepOverhead measures what the engine adds to a default step
// over a journal that takes its row at no cost: with no tracer (what
// WithTracer must leave as it was), and with a tracer that does nothing.
// On a shared machine, wall time mostly measures the neighbours: it also
// reports the process's CPU time per step (cpu-ns/op).
func BenchmarkStepOverhead(b *testing.B) {
	for _, bc := range []struct {
		name string
		t    Tracer
	}{{"untraced", nil}, {"nop-tracer", nopTracer{}}} {
		b.Run(bc.name, func(b *testing.B) {
			st := stepState(nil, bc.t)
			st.leaseUntil = time.Now().Add(time.Hour)
			def := &StepDef{Name: "S"}
			ctx := context.Background()
			b.ReportAllocs()
			cpu := processCPU()
			for b.Loop() {
				if err := st.step(ctx, def, stepKey{}, ok, nil); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(processCPU()-cpu)/float64(b.N), "cpu-ns/op")
		})
	}
}

type nopTracer struct{}

func (nopTracer) Entry(ctx context.Context, _ EntryInfo) (context.Context, func(EntryEnd)) {
	return ctx, func(EntryEnd) {}
}

func (nopTracer) Attempt(ctx context.Context, _ StepInfo) (context.Context, func(AttemptEnd)) {
	return ctx, func(AttemptEnd) {}
}

// processCPU returns the CPU time this process used so far, user and
// system.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
