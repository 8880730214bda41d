package difffuzz

import (
	"context"
	"fmt"
	"slices"
)

// Shrink looks for a smaller program of r's seed that still diverges as
// r's did (a divergence of one of its kinds): each round generates every
// knob one step smaller (a construct off, a shorter body, shallower
// nesting) and runs them as one batch, keeping the first that still
// diverges, until none does or rounds are spent. A program written by
// hand (no knobs) is returned as it is.
func Shrink(ctx context.Context, cfg Config, r *Result, rounds int) (*Result, error) {
	if r.Program.Knobs.Size == 0 || len(r.Divergences) == 0 {
		return r, nil
	}
	kinds := map[Kind]bool{}
	for _, d := range r.Divergences {
		kinds[d.Kind] = true
	}
	best := r
	for round := range rounds {
		var progs []*Program
		seen := map[string]bool{best.Program.Renamed("x").Source: true}
		for _, k := range best.Program.Knobs.Shrinks() {
			p := GenerateNamed(fmt.Sprintf("%s_s%d_%d", ProgramName(r.Program.Seed), round, len(progs)), r.Program.Seed, k)
			if src := p.Renamed("x").Source; !seen[src] {
				seen[src] = true
				progs = append(progs, p)
			}
		}
		if len(progs) == 0 {
			break
		}
		res, err := Batch(ctx, cfg, progs)
		if err != nil {
			return nil, err
		}
		i := slices.IndexFunc(res, func(c *Result) bool {
			return slices.ContainsFunc(c.Divergences, func(d Divergence) bool { return kinds[d.Kind] })
		})
		if i < 0 {
			break
		}
		best = res[i]
	}
	return best, nil
}
