package fuzzrt

import (
	"fmt"
	"time"
)

// The arithmetic of the generated programs: every step's result is a
// function of its inputs and a per-step seed, so an uninterrupted run and
// a resumed one compute the same values exactly when the resumed body is
// handed what the first one was.

// mod keeps every value small enough never to overflow.
const mod = 1_000_003

// Val returns the value step seed computes from its inputs: in [0, mod).
func Val(seed int, xs ...int) int {
	h := uint64(seed)*0x9E3779B97F4A7C15 + 0x632BE59BD9B4E019
	for _, x := range xs {
		h ^= uint64(int64(x)) + 0x9E3779B97F4A7C15 + h<<6 + h>>2
		h *= 0xBF58476D1CE4E5B9
		h ^= h >> 31
	}
	return int(h % mod)
}

// Mix folds values into an accumulator, order-sensitively: a body that
// saw another value, or the same values in another order, ends elsewhere.
func Mix(acc int, xs ...int) int {
	for _, x := range xs {
		acc = Val(acc, x)
	}
	return acc
}

// Hit reports whether input x of step seed falls on the failing share:
// one input in every.
func Hit(seed, x, every int) bool { return every > 0 && Val(seed^0x5bd1, x)%every == 0 }

// Str returns a short string computed from the inputs.
func Str(seed int, xs ...int) string { return fmt.Sprintf("s%d", Val(seed, xs...)%10_000) }

// Epoch is the base of the times the programs' steps return: a fixed
// instant, so that every run of a program computes the same times.
var Epoch = time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)

// At returns a time computed from the inputs, in UTC, to the nanosecond.
func At(seed int, xs ...int) time.Time {
	return Epoch.Add(time.Duration(Val(seed, xs...)) * time.Millisecond).Add(time.Duration(Val(seed+1, xs...)))
}
