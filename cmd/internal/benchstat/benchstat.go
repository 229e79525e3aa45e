// Package benchstat holds the order statistics the benchmark harnesses
// (cmd/sitebench, cmd/httpbench) report.
package benchstat

import (
	"math"
	"slices"
)

// Number is what the statistics accept: durations, counts, rates.
type Number interface {
	~int | ~int64 | ~float64
}

// Median returns the middle value of xs, or the mean of the two middle
// values when len(xs) is even; 0 when xs is empty. xs is not modified.
func Median[T Number](xs []T) T {
	if len(xs) == 0 {
		return 0
	}
	s := sorted(xs)
	m := len(s) / 2
	if len(s)%2 == 1 {
		return s[m]
	}
	return s[m-1] + (s[m]-s[m-1])/2
}

// Percentile returns the nearest-rank p-th percentile of xs (0 < p <= 100):
// the smallest value with at least p% of the values at or below it. It
// returns 0 when xs is empty. xs is not modified.
func Percentile[T Number](xs []T, p float64) T {
	if len(xs) == 0 {
		return 0
	}
	s := sorted(xs)
	rank := int(math.Ceil(p / 100 * float64(len(s))))
	return s[min(max(rank, 1), len(s))-1]
}

func sorted[T Number](xs []T) []T {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s
}
