package main

import (
	"cmp"
	"math"
	"slices"
	"time"
)

// number is what the summary helpers accept: durations, byte and KiB counts.
type number interface {
	~int | ~int64 | ~float64
}

// median returns the middle value of xs, or the mean of the two middle
// values when len(xs) is even; 0 when xs is empty. xs is not modified.
func median[T number](xs []T) T {
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

// percentile returns the nearest-rank p-th percentile of xs (0 < p <= 100):
// the smallest value with at least p% of the values at or below it. It
// returns 0 when xs is empty. xs is not modified.
func percentile[T number](xs []T, p float64) T {
	if len(xs) == 0 {
		return 0
	}
	s := sorted(xs)
	rank := int(math.Ceil(p / 100 * float64(len(s))))
	return s[min(max(rank, 1), len(s))-1]
}

func sorted[T cmp.Ordered](xs []T) []T {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s
}

// summary is the spread of a set of measurements.
type summary[T number] struct {
	N                     int
	Min, Median, P90, Max T
}

func summarize[T number](xs []T) summary[T] {
	if len(xs) == 0 {
		return summary[T]{}
	}
	return summary[T]{N: len(xs), Min: slices.Min(xs), Median: median(xs), P90: percentile(xs, 90), Max: slices.Max(xs)}
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
