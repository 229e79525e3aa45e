package main

import (
	"slices"
	"time"

	"github.com/proofsite/proofsite/cmd/internal/benchstat"
)

// summary is the spread of a set of measurements.
type summary[T benchstat.Number] struct {
	N                     int
	Min, Median, P90, Max T
}

func summarize[T benchstat.Number](xs []T) summary[T] {
	if len(xs) == 0 {
		return summary[T]{}
	}
	return summary[T]{N: len(xs), Min: slices.Min(xs), Median: benchstat.Median(xs), P90: benchstat.Percentile(xs, 90), Max: slices.Max(xs)}
}

// ms formats a duration in milliseconds with a precision that suits it.
func ms(d time.Duration) string {
	v := float64(d) / float64(time.Millisecond)
	switch {
	case v >= 100:
		return fmtFloat(v, 0) + " ms"
	case v >= 10:
		return fmtFloat(v, 1) + " ms"
	default:
		return fmtFloat(v, 2) + " ms"
	}
}
